"""Replicas that each keep their own embedded store, on one Redis: a "wrong" verdict given on
one replica must end the answer in every other replica's own store too (exact and
paraphrase), not only in Redis and in memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.testing import FakeEmbedder, FakeUpstream

QUESTION = "What is the capital city of France?"
PARAPHRASE = "what is the capital city of France"
NEVER_SHED = {"wait_ms": 60_000, "max_loop_lag_ms": None}


def req(content: str) -> dict:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]}


@pytest.fixture
def two_replicas(redis_url: str, tmp_path: Path):
    made = []

    def make(name: str) -> SemanticCache:
        settings = CacheSettings(
            semantic={"threshold": 0.8, "verifier": "none"},
            store={"backend": "edge", "path": str(tmp_path / name)},
            redis={"url": redis_url},
            admission=NEVER_SHED,
        )
        cache = SemanticCache(settings, embedder=FakeEmbedder(), upstream=upstream)
        made.append(cache)
        return cache

    upstream = FakeUpstream()
    yield make("a"), make("b"), upstream
    for cache in made:
        cache.close()


@pytest.mark.parametrize("verdict_on", ["owner", "other"])
def test_a_wrong_verdict_reaches_every_replicas_own_store(two_replicas, verdict_on: str) -> None:
    a, b, upstream = two_replicas
    assert a.ready() and b.ready()  # each store serves hits once its purge log is replayed
    assert cache_info(b.completion(**req(QUESTION))).tier == "miss"  # b's store holds it
    b.flush()
    assert cache_info(b.completion(**req(PARAPHRASE))).tier == "semantic"  # from b's store
    served = a.completion(**req(QUESTION))
    assert cache_info(served).tier == "exact"  # from Redis
    if verdict_on == "owner":
        assert b.feedback(b.completion(**req(QUESTION)), correct=False).withdrawn
    else:
        assert a.feedback(served, correct=False).withdrawn
    withdrawn = served.id  # the fake upstream numbers its answers; a cached one keeps its id
    later = []
    for cache in (b, a, b, a):  # neither replica serves it again, by exact key or paraphrase
        for question in (PARAPHRASE, QUESTION):
            response = cache.completion(**req(question))
            later.append((response.id, cache_info(response).tier))
            cache.flush()
    assert withdrawn not in {answer for answer, _ in later}, later
    assert later[0][1] == "miss"  # b's own store no longer had it
    assert upstream.call_count >= 2  # the withdrawn question was answered afresh
