"""A write a fence refuses is never dropped in silence: it is named (``refused: <reason>``),
counted by tier and reason (``stats().write_refused``, ``semcache_write_refused``) and logged.

Measured before: under ``allkeys-lru`` eviction took the purge log's epoch key, the filling
process fenced its pending writes, and ``store_many`` reported 330 of them as ``skipped`` (the
word for "the policy kept it out") with nothing counted or logged.
"""

from __future__ import annotations

import logging
import threading
import time

import pytest

from semcache import CacheSettings, SemanticCache
from semcache.errors import WriteRefused
from semcache.pipeline.fence import Fence, PurgeFilter, Refusal, Refusals
from semcache.replicas.keys import KeySpace
from semcache.server.metrics import ProxyMetrics
from semcache.stats import Stats
from semcache.stores.base import NEVER_EXPIRES, Entry
from semcache.testing import FakeEmbedder, FakeUpstream

PREFIX = "refused"


class HeldEmbedder(FakeEmbedder):
    """Embeds only while ``release`` is set (a test holds writes pending with it)."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.release = threading.Event()
        self.release.set()

    def embed(self, texts):
        assert self.release.wait(30)
        return super().embed(texts)


def entry(key: str, tenant: str = "t") -> Entry:
    return Entry(key, tenant, "ns", "m", "s", "{}", time.time(), NEVER_EXPIRES, "e")


def test_the_fence_names_why_it_refuses() -> None:
    fence = Fence(window=2)
    token = fence.begin()
    assert fence.refusal(entry("a"), token) is None
    fence.record(PurgeFilter(tenant="other"))
    assert fence.refusal(entry("a"), token) is None  # not covered
    fence.record(PurgeFilter(key="a"))
    assert fence.refusal(entry("a"), token) is Refusal.WITHDRAWN
    assert fence.refusal(entry("b"), token) is None
    token = fence.begin()
    fence.record(PurgeFilter(tenant="t"))
    assert fence.refusal(entry("b"), token) is Refusal.PURGED
    token = fence.begin()
    fence.record(PurgeFilter(), Refusal.PURGE_LOG_RESET)
    assert fence.refusal(entry("b"), token) is Refusal.PURGE_LOG_RESET
    fence.record(PurgeFilter(tenant="x"))
    fence.record(PurgeFilter(tenant="y"))  # the reset fell out of the window of 2
    assert fence.refusal(entry("b"), token) is Refusal.FENCE_WINDOW
    assert fence.refusal(entry("b"), fence.begin()) is None


def test_refusals_are_counted_each_and_logged_once_per_burst(caplog) -> None:
    stats, now = Stats(), [100.0]
    refusals = Refusals(stats, clock=lambda: now[0])
    with caplog.at_level(logging.DEBUG, logger="semcache"):
        for i in range(5):
            refusals.note("store", Refusal.PURGE_LOG_RESET, f"k{i}")
        now[0] += 11
        refusals.note("store", Refusal.PURGE_LOG_RESET, "k5")
        refusals.note("redis_exact", Refusal.PURGED, "k6")
    assert stats.snapshot().write_refused == {
        "store": {"purge_log_reset": 6},
        "redis_exact": {"purged": 1},
    }
    lines = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert lines[0][0] == logging.WARNING and "1 write(s)" in lines[0][1]
    assert lines[1][0] == logging.WARNING and "5 write(s)" in lines[1][1]  # 4 held, then 1
    assert "purge_log_reset" in lines[1][1] and "k5" in lines[1][1]
    assert lines[2][0] == logging.DEBUG and "purged" in lines[2][1]  # a purge winning
    assert len(lines) == 3


@pytest.fixture
def cache(redis_url: str):
    embedder = HeldEmbedder()
    settings = CacheSettings(
        semantic={"threshold": 0.95, "verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "redis", "timeout_s": 30.0},
        redis={"url": redis_url, "key_prefix": PREFIX},
        admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
    )
    made = SemanticCache(settings, embedder=embedder, upstream=FakeUpstream())
    assert made.ready()
    made.store("warm question?", "warm answer", model="m", tenant="t")  # the log reader runs
    assert made.flush().written == 1
    yield made, embedder
    embedder.release.set()
    made.close()


def wait_for(condition, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_writes_pending_across_a_purge_log_reset_are_reported_refused(cache, raw, caplog) -> None:
    """The purge log's epoch key is lost (as eviction does): the process cannot tell what
    was purged, so the writes it had pending are refused, and each says so."""
    cache, embedder = cache
    embedder.release.clear()  # the imported answers wait for their embeddings
    items = [{"prompt": f"imported question {i}?", "response": f"answer {i}"} for i in range(5)]
    report: list = []
    importer = threading.Thread(
        target=lambda: report.append(cache.store_many(items, model="m", tenant="t"))
    )
    with caplog.at_level(logging.WARNING, logger="semcache"):
        importer.start()
        pending = cache._parts.writer._pending  # white-box: every write handed over
        wait_for(lambda: len(pending) == 5)
        raw.delete(KeySpace(PREFIX).purge_epoch)
        wait_for(lambda: cache.stats().counts.get("purge_log_resets", 0) >= 1)
        embedder.release.set()
        importer.join(60)
    (done,) = report
    assert (done.written, done.skipped) == (0, 0)
    assert [f.reason for f in done.failed] == ["refused: purge_log_reset"] * 5
    stats = cache.stats()
    assert stats.write_refused == {"store": {"purge_log_reset": 5}}
    exposition = ProxyMetrics().render(stats).decode()
    assert 'semcache_write_refused_total{reason="purge_log_reset",tier="store"} 5.0' in exposition
    assert any(
        r.levelno == logging.WARNING and "write refused (store, purge_log_reset)" in r.getMessage()
        for r in caplog.records
    )
    # a write that begins after the reset lands
    assert cache.store("imported question 0?", "answer 0", model="m", tenant="t") is not None
    assert cache.flush().written == 1


def test_a_requested_write_refused_at_once_raises_naming_the_reason(cache) -> None:
    """``store()`` tells its caller: a fence that refuses it before anything was kept raises
    ``WriteRefused`` (white-box: the refusal is made to land between the write's start and its
    admission, which a purge-log reset does on its own only by chance)."""
    cache, _ = cache
    writer = cache._parts.writer
    fence = writer.fence
    begin = fence.begin

    def begin_then_reset() -> int:
        token = begin()
        fence.record(PurgeFilter(), Refusal.PURGE_LOG_RESET)
        return token

    before = cache.stats().memory_entries
    fence.begin = begin_then_reset  # type: ignore[method-assign]
    try:
        with pytest.raises(WriteRefused, match="purge_log_reset") as refused:
            cache.store("a question refused?", "its answer", model="m", tenant="t")
    finally:
        fence.begin = begin  # type: ignore[method-assign]
    assert refused.value.reason == "purge_log_reset"
    stats = cache.stats()
    assert stats.write_refused == {"store": {"purge_log_reset": 1}}
    assert (stats.memory_entries, cache.flush().written, stats.store_entries) == (before, 0, 1)
    cache.store("a question refused?", "its answer", model="m", tenant="t")  # again: kept
    assert cache.flush().written == 1
