"""A process that joins a store every process shares (the Redis store) never deletes what
the others wrote: a purge-log gap there means "the shared tiers decide" (their generations
and fences), and only the process's own memory is reset.

Measured before: a cache starting on a Redis store that held entries emptied it for every
tenant on its first request ("no saved position in the purge log; emptied the local tiers").
"""

from __future__ import annotations

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.testing import FakeEmbedder, FakeUpstream

QUESTIONS = 15
TENANTS = ("t1", "t2")


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
def start(redis_url: str):
    made: list[SemanticCache] = []
    upstream = FakeUpstream()

    def make() -> SemanticCache:
        settings = CacheSettings(
            semantic={"threshold": 0.95, "verifier": "none"},
            store={"backend": "redis", "timeout_s": 2.0},
            redis={"url": redis_url, "key_prefix": "join"},
            admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
        )
        cache = SemanticCache(settings, embedder=FakeEmbedder(dim=256), upstream=upstream)
        made.append(cache)
        return cache

    yield make
    for cache in made:
        cache.close()


def learn(cache: SemanticCache) -> dict[tuple[str, int], str]:
    ids = {}
    for tenant in TENANTS:
        for i in range(QUESTIONS):
            ids[tenant, i] = cache.completion(**req(question(i, tenant), tenant)).id
    assert cache.flush().written == QUESTIONS * len(TENANTS)
    return ids


def served(cache: SemanticCache, tenant: str, ids: dict[tuple[str, int], str]) -> int:
    """Paraphrases answered from the store with the answers learned (the exact tier holds
    the questions, not their paraphrases)."""
    hits = 0
    for i in range(QUESTIONS):
        response = cache.completion(**req(paraphrase(i, tenant), tenant))
        hits += cache_info(response).tier == "semantic" and response.id == ids[tenant, i]
    return hits


@pytest.mark.parametrize("restarted", [False, True])
def test_a_process_joining_the_shared_store_keeps_every_entry(start, raw, restarted: bool):
    a = start()
    ids = learn(a)
    before = a.stats().store_entries
    assert before == QUESTIONS * len(TENANTS)
    if restarted:  # a rolling restart: the only process goes and comes back
        a.close()
    b = start()
    assert b.ready()
    for tenant in TENANTS:  # the first requests of the new process find everything
        assert served(b, tenant, ids) == QUESTIONS
    assert b.stats().store_entries == before
    assert b.stats().counts.get("purge_log_resets", 0) == 0


def test_a_purge_by_either_process_still_wins_in_both(start) -> None:
    a = start()
    ids = learn(a)
    b = start()
    assert b.ready()
    assert served(b, "t1", ids) == QUESTIONS and served(a, "t1", ids) == QUESTIONS
    b.purge(tenant="t1")
    assert served(a, "t1", ids) == 0 and served(b, "t1", ids) == 0
    assert served(a, "t2", ids) == QUESTIONS
    a.purge(tenant="t2")
    assert served(b, "t2", ids) == 0 and served(a, "t2", ids) == 0
