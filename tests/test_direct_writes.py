"""Requested writes land or raise (issue 24 item 3): ``store`` backpressure, ``store_many``,
write-behind's operator bound and ``flush()``'s report."""

from __future__ import annotations

import threading
import time

import pytest

from semcache import CacheSettings, InvalidRequest, SemanticCache
from semcache.errors import StoreBackpressure, StoreError
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore


class SlowEmbedder(FakeEmbedder):
    delay_s = 0.0

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.release.set()

    def embed(self, texts):
        self.release.wait(10)
        time.sleep(self.delay_s)
        return super().embed(texts)


class FailingStore(InMemoryStore):
    fail = False

    def upsert(self, entries):
        if self.fail:
            raise StoreError("disk full")
        super().upsert(entries)


def make(store, embedder=None, **admission):
    settings = CacheSettings(
        semantic={"verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "none"},
        admission=admission,
    )
    return SemanticCache(
        settings, embedder=embedder or FakeEmbedder(), store=store, upstream=FakeUpstream()
    )


def saturate(cache):
    """Hold the embedder's admission gate full: every lookup it is asked about is shed (one
    lookup held in flight, never handed to the embedder, is queue past the 0 ms budget)."""
    gate = cache._parts.embed_gate

    async def hold():
        ticket = gate.enter()
        assert ticket is not None
        assert gate.enter() is None
        return ticket

    return cache._loop.run(hold())


def test_no_store_is_dropped_under_a_saturated_gate():
    store = InMemoryStore()
    embedder = SlowEmbedder()
    embedder.delay_s = 0.002
    with make(store, embedder, max_pending_writes=16, wait_ms=0) as cache:
        assert cache.ready()
        saturate(cache)
        keys = [cache.store(f"question number {i}?", f"answer {i}", model="m") for i in range(300)]
        report = cache.flush()
        stats = cache.stats()
    assert None not in keys and len(set(keys)) == 300
    assert report.written == 300 and report.complete, report
    assert len({e.key for e in store.upserted}) == 300
    assert stats.shed.get("store_upsert", 0) == 0
    assert embedder.calls < 300  # pending writes shared embedding batches


def test_store_waits_for_room_then_raises_backpressure():
    embedder = SlowEmbedder()
    with make(InMemoryStore(), embedder, max_pending_writes=1, store_wait_s=0.2) as cache:
        assert cache.ready()
        embedder.release.clear()  # the embedder stalls: the one pending write cannot finish
        cache.store("first question?", "one", model="m")
        started = time.perf_counter()
        with pytest.raises(StoreBackpressure, match="max_pending_writes = 1"):
            cache.store("second question?", "two", model="m")
        assert 0.15 < time.perf_counter() - started < 5
        embedder.release.set()
        assert cache.flush().written == 1


def test_completions_drop_only_past_the_operator_bound_and_flush_reports_it():
    embedder = SlowEmbedder()
    store = InMemoryStore()
    with make(store, embedder, max_pending_writes=3) as cache:
        assert cache.ready()
        embedder.release.clear()
        for i in range(8):
            messages = [{"role": "user", "content": f"q {i}"}]
            cache.completion(model="m", messages=messages, cache={"no-cache": True})
        embedder.release.set()
        report = cache.flush()
        stats = cache.stats()
    assert (report.written, report.dropped, report.failed) == (3, 5, 0)
    assert report.reasons == {"max_pending_writes reached": 5} and not report.complete
    assert stats.shed["store_upsert"] == 5 and len(store.upserted) == 3


def test_flush_reports_failures_with_the_reason_then_starts_afresh():
    store = FailingStore()
    with make(store) as cache:
        assert cache.ready()
        store.fail = True
        cache.store("a question?", "an answer", model="m")
        report = cache.flush()
        assert (report.written, report.failed) == (0, 1)
        assert any("disk full" in reason for reason in report.reasons)
        store.fail = False
        cache.store("another question?", "another answer", model="m")
        again = cache.flush()
    assert (again.written, again.failed, again.reasons) == (1, 0, {})


def test_a_write_that_times_out_is_reported_as_timed_out_not_unknown():
    """Under load a write may outlast its bound (its turn at the embedder included): the
    report names that, with the bound, for that write alone; a failure of another write at the
    same time keeps its own reason."""
    store = FailingStore()
    embedder = SlowEmbedder()
    settings = CacheSettings(
        semantic={"verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "none", "timeout_s": 0.2},
        admission={"store_wait_s": 0.2},
    )
    with SemanticCache(settings, embedder=embedder, store=store, upstream=FakeUpstream()) as cache:
        assert cache.ready()
        embedder.release.clear()  # the embedder stalls past the bound
        for i in range(5):
            cache.store(f"slow question {i}?", "an answer", model="m")
        report = cache.flush()
        embedder.release.set()
        store.fail = True
        many = cache.store_many([{"prompt": "failing question?", "response": "x"}], model="m")
    assert (report.written, report.failed) == (0, 5)
    assert report.reasons == {"timed out after 0.2 s": 5}, report.reasons
    assert [f.reason for f in many.failed] == ["failed: StoreError: disk full"], many.failed


def test_store_many_writes_everything_and_reports_per_item():
    store = FailingStore()
    progress = []
    items = [{"prompt": f"imported question {i}?", "response": f"a{i}"} for i in range(40)]
    items[5]["cache"] = {"no-store": True}
    with make(store) as cache:
        assert cache.ready()
        report = cache.store_many(
            items, model="m", chunk=16, on_progress=lambda d, t: progress.append((d, t))
        )
        hit = cache.check("imported question 7?", model="m")
        store.fail = True
        broken = cache.store_many([{"prompt": "x?", "response": "y"}], model="m")
    assert (report.total, report.written, report.skipped, report.failed) == (40, 39, 1, ())
    assert report.keys[5] is None and report.keys[7] == hit.info.key
    assert len(store.upserted) == 39 and progress == [(16, 40), (32, 40), (40, 40)]
    assert broken.written == 0 and len(broken.failed) == 1
    assert broken.failed[0].index == 0 and "disk full" in broken.failed[0].reason
    assert broken.keys == (None,)


def test_store_many_validates_every_item_first():
    store = InMemoryStore()
    with make(store) as cache:
        items = [{"prompt": "ok?", "response": "fine"}, {"prompt": "no answer?"}]
        with pytest.raises(InvalidRequest) as caught:
            cache.store_many(items, model="m")
        assert caught.value.field == "items[1].response"
        with pytest.raises(InvalidRequest, match=r"items\[0\]"):
            cache.store_many(["not a mapping"], model="m")
        cache.flush()
    assert store.upserted == ()


async def test_astore_many_and_astore():
    store = InMemoryStore()
    cache = make(store)
    try:
        assert await cache.aready()
        report = await cache.astore_many([{"prompt": "q1?", "response": "a1"}], model="m")
        key = await cache.astore("q2?", "a2", model="m")
        flushed = await cache.aflush()
    finally:
        await cache.aclose()
    assert report.written == 1 and key is not None
    assert flushed.written == 2  # store_many's write too
    assert len(store.upserted) == 2
