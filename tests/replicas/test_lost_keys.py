"""A purge holds when any single Redis key it relies on is lost (deleted, evicted, or on a
cluster master that came back empty): the store's partition registry and global fences, the
exact tier's generations, the purge log and its epoch, trim point and reader list.

Measured before: with the Redis store's partition registry gone, ``purge(tenant)`` returned
success and every later ask (exact and paraphrase, both replicas) still got the purged answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from semcache import CacheSettings, SemanticCache
from semcache.testing import FakeEmbedder, FakeUpstream

PREFIX = "lk"
QUESTIONS = 25  # per tenant
#: Each key alone, as an operator's ``DEL`` or an eviction would take it.
SPECIAL_KEYS = [
    f"{PREFIX}:vs:parts",  # the Redis store's partition registry
    f"{PREFIX}:vs:fence",  # the Redis store's global fences
    f"{PREFIX}:g:{{0}}",  # the exact tier's generations
    f"{{{PREFIX}:purges}}",  # the purge log
    f"{{{PREFIX}:purges}}:epoch",
    f"{{{PREFIX}:purges}}:readers",
]


def question(i: int, tenant: str) -> str:
    return f"{tenant}zorb{i} quix{i} plonk{i} wemb{i} question?"


def paraphrase(i: int, tenant: str) -> str:
    return question(i, tenant).lower().rstrip("?")  # same words: a semantic hit


def req(content: str, tenant: str) -> dict:
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": content}],
        "tenant": tenant,
    }


@pytest.fixture
def replicas(redis_url: str, tmp_path: Path):
    made: list[SemanticCache] = []
    upstream = FakeUpstream()

    def make(backend: str) -> list[SemanticCache]:
        for name in ("a", "b"):
            store: dict[str, object] = {"backend": backend, "timeout_s": 2.0}
            if backend == "edge":
                store["path"] = str(tmp_path / name)
            settings = CacheSettings(
                semantic={"threshold": 0.95, "verifier": "none"},
                store=store,
                redis={"url": redis_url, "key_prefix": PREFIX},
                admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
            )
            cache = SemanticCache(settings, embedder=FakeEmbedder(dim=256), upstream=upstream)
            assert cache.ready()
            made.append(cache)
        return made

    yield make
    for cache in made:
        cache.close()


def learn(cache: SemanticCache, tenant: str) -> set[str]:
    """Ask every question once (stored in Redis and the store); the answers' ids."""
    ids = {cache.completion(**req(question(i, tenant), tenant)).id for i in range(QUESTIONS)}
    assert cache.flush().written == QUESTIONS
    return ids


def asks_serving(caches: list[SemanticCache], tenant: str, ids: set[str], rounds: int) -> int:
    served = asked = 0
    for _ in range(rounds):
        for cache in caches:
            for i in range(QUESTIONS):
                for text in (question(i, tenant), paraphrase(i, tenant)):
                    asked += 1
                    served += cache.completion(**req(text, tenant)).id in ids
    return served


def lose(raw: object, key: str) -> Callable[[], None]:
    def run() -> None:
        assert raw.delete(key) == 1, f"{key} was not there to lose"  # type: ignore[attr-defined]

    return run


@pytest.mark.parametrize("backend", ["redis", "edge"])
@pytest.mark.parametrize("key", SPECIAL_KEYS)
def test_a_purge_holds_when_one_special_key_was_lost(replicas, raw, backend: str, key: str):
    if backend == "edge" and key.startswith(f"{PREFIX}:vs:"):
        pytest.skip("a key of the Redis store")
    a, b = replicas(backend)
    a.purge(tenant="t0")  # an earlier purge: fences, generations and the log exist
    purged = learn(a, "t1")
    kept = learn(a, "t2")
    # both replicas have met the answers (memory, store; b's own edge store has none)
    met = asks_serving([a, b], "t1", purged, rounds=1)
    assert met == (4 if backend == "redis" else 3) * QUESTIONS
    lose(raw, key)()
    a.purge(tenant="t1")
    served = asks_serving([b, a], "t1", purged, rounds=2)
    assert served == 0, f"{served} of {8 * QUESTIONS} asks served a purged answer ({key} lost)"
    assert asks_serving([b], "t2", kept, rounds=1) >= 0  # t2 may be lost too; never an error


def test_a_purge_after_the_registry_master_restarted_empty_holds(replicas, raw):
    """Registry and fences both gone (one master back empty holds both on a cluster)."""
    a, b = replicas("redis")
    a.purge(tenant="t0")
    purged = learn(a, "t1")
    assert asks_serving([a, b], "t1", purged, rounds=1) == 4 * QUESTIONS
    raw.delete(f"{PREFIX}:vs:parts", f"{PREFIX}:vs:fence")
    a.purge(tenant="t1")
    served = asks_serving([b, a], "t1", purged, rounds=2)
    assert served == 0, f"{served} of {8 * QUESTIONS} asks served a purged answer"


async def test_a_write_begun_before_the_generations_were_lost_does_not_land_after_a_purge(
    redis_url: str, raw
) -> None:
    """The generation hash lost and bumped again by a purge reads as it did before the loss;
    a write that began before must still be refused, and older entries no longer served."""
    from redis.asyncio import Redis

    from semcache.errors import StoreError
    from semcache.pipeline.fence import PurgeFilter, Refusal
    from semcache.replicas.exact import RedisExact
    from semcache.replicas.keys import KeySpace
    from semcache.stores.base import NEVER_EXPIRES, Entry

    client = Redis.from_url(redis_url)
    keys = KeySpace(PREFIX)
    exact = RedisExact(client, keys, time.time)
    where = {"tenant": "t1", "namespace": "ns", "model": "m"}

    other = where | {"tenant": "t2"}

    def entry(key: str, tenant: str = "t1") -> Entry:
        return Entry(key, tenant, "ns", "m", "s", "{}", time.time(), NEVER_EXPIRES, "e")

    try:
        await exact.purge(PurgeFilter(tenant="t1"))  # an earlier purge: t1's generation is 1
        assert (await exact.put(entry("kept", "t2"), await exact.begin("kept", **other)))[0]
        pending = await exact.begin("late", **where)  # a write begins: it read generation 1
        raw.delete(keys.generation_hash("t1"))  # lost
        await exact.purge(PurgeFilter(tenant="t1"))  # bumped again: generation 1 once more
        assert (await exact.put(entry("late"), pending)) == (False, False, Refusal.FENCE_MISSING)
        assert await exact.get("late", **where) is None
        with pytest.raises(StoreError, match="lost"):  # fail closed, and counted
            await exact.get("kept", **other)
        assert (await exact.put(entry("new"), await exact.begin("new", **where)))[0]
        assert await exact.get("new", **where) is not None  # a new incarnation
        assert await exact.get("kept", **other) is None  # older entries stay withdrawn
    finally:
        await client.aclose()


def test_a_purge_with_the_reader_list_lost_waits_for_the_replicas(replicas, raw) -> None:
    """Without the list of live readers the purger cannot count confirmations: it waits the
    whole confirmation time, so the other replica has applied the purge when it returns."""
    a, b = replicas("redis")
    purged = learn(a, "t1")
    assert asks_serving([b], "t1", purged, rounds=1) == 2 * QUESTIONS  # b remembers them
    applied = b.stats().counts.get("purge_log_applied", 0)
    raw.delete(f"{{{PREFIX}:purges}}:readers")
    a.purge(tenant="t1")
    assert b.stats().counts.get("purge_log_applied", 0) == applied + 1  # before it returned
    assert a.stats().counts["purge_log_readers_unknown"] == 1
