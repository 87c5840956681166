"""``drop()`` withdraws an answer from every tier of every replica: memory, the shared Redis
exact tier and the store (each replica's own embedded store, or the Redis store they share).

Measured before: ``drop`` removed the dropping replica's memory and store copies and said so,
while the Redis exact tier kept the answer, so that replica and every other served it again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from semcache import CacheSettings, SemanticCache
from semcache.testing import FakeEmbedder

QUESTIONS = 10
TENANT = "t1"


def question(i: int) -> str:
    return f"Zorb{i} quix{i} plonk{i} wemb{i} question?"


def paraphrase(i: int) -> str:
    return question(i).lower().rstrip("?")  # same words: a semantic hit, another exact key


def settings(backend: str, redis_url: str, path: Path) -> CacheSettings:
    store: dict[str, object] = {"backend": backend, "timeout_s": 2.0}
    if backend == "edge":
        store["path"] = str(path)
    return CacheSettings(
        semantic={"threshold": 0.95, "verifier": "none"},
        store=store,
        redis={"url": redis_url, "key_prefix": "drop"},
        admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
    )


@pytest.fixture(params=["edge", "redis"])
def replicas(request, redis_url: str, tmp_path: Path):
    made = [
        SemanticCache(
            settings(request.param, redis_url, tmp_path / name), embedder=FakeEmbedder(dim=256)
        )
        for name in ("a", "b")
    ]
    for cache in made:
        assert cache.ready()
    yield made
    for cache in made:
        cache.close()


def served(cache: SemanticCache, text: str) -> str | None:
    hit = cache.check(text, model="gpt-4o-mini", tenant=TENANT)
    return None if hit is None else hit.text


def test_a_dropped_answer_is_served_by_no_replica_from_any_tier(replicas) -> None:
    a, b = replicas
    for i in range(QUESTIONS):
        a.store(question(i), f"answer {i}", model="gpt-4o-mini", tenant=TENANT)
        b.store(question(i), f"answer {i}", model="gpt-4o-mini", tenant=TENANT)
    a.flush()
    b.flush()
    for cache in (a, b):  # every tier of both replicas holds the answers before the drop
        assert all(served(cache, question(i)) == f"answer {i}" for i in range(QUESTIONS))
        assert all(served(cache, paraphrase(i)) == f"answer {i}" for i in range(QUESTIONS))

    dropped = {f"answer {i}" for i in range(0, QUESTIONS, 2)}
    for i in range(0, QUESTIONS, 2):
        assert a.drop(question(i), model="gpt-4o-mini", tenant=TENANT) >= 2

    asked = hits = 0
    for _ in range(3):
        for cache in (b, a):
            for i in range(QUESTIONS):
                for text in (question(i), paraphrase(i)):
                    answer = served(cache, text)
                    asked += 1
                    hits += answer in dropped
                    if i % 2:  # the answers not dropped are still served
                        assert answer == f"answer {i}"
    assert asked >= 100
    assert hits == 0, f"{hits} of {asked} asks served a dropped answer"


async def test_a_redis_write_begun_before_a_withdrawal_never_lands_after_it(redis_url: str):
    """A replica's write of the key that began (read its token) before another replica
    withdrew the key is refused; a write that begins after the withdrawal lands."""
    import time

    from redis.asyncio import Redis

    from semcache.pipeline.fence import PurgeFilter, Refusal
    from semcache.replicas.exact import RedisExact
    from semcache.replicas.keys import KeySpace
    from semcache.stores.base import NEVER_EXPIRES, Entry

    client = Redis.from_url(redis_url)
    exact = RedisExact(client, KeySpace("drop"), time.time)
    where = {"tenant": TENANT, "namespace": "ns", "model": "m"}
    answer = Entry("k", TENANT, "ns", "m", "s", "{}", time.time(), NEVER_EXPIRES, "e")
    try:
        assert (await exact.put(answer, await exact.begin("k", **where)))[0]
        pending = await exact.begin("k", **where)  # e.g. an upstream call in flight
        assert await exact.withdraw("k", **where) == 1
        assert (await exact.put(answer, pending)) == (False, False, Refusal.WITHDRAWN)
        assert await exact.get("k", **where) is None
        assert (await exact.put(answer, await exact.begin("k", **where)))[0]  # stored again
        assert await exact.get("k", **where) is not None
        pending = await exact.begin("k", **where)
        await exact.purge(PurgeFilter(tenant=TENANT))
        assert (await exact.put(answer, pending)) == (False, False, Refusal.PURGED)
    finally:
        await client.aclose()
