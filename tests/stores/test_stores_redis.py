"""The Redis vector-set store beyond the shared suite: what one process withdraws is gone for
every other (two store objects, and a real second process), fences against older writes,
Redis's own TTL, exact cosines, Redis Cluster, and the errors it raises."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import numpy as np
import pytest
import redis
from store_helpers import DIM, EMBEDDER, NOW, make_entry, redis_server, unit, where

from semcache.errors import ConfigError, StoreError
from semcache.stores.redis_vectors import RedisVectorStore
from semcache.testing import RedisCluster, RedisServer


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def prefix() -> str:
    return "r" + uuid.uuid4().hex[:10]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def pair(prefix: str, clock: Clock) -> Iterator[tuple[RedisVectorStore, RedisVectorStore]]:
    """Two store objects on one Redis and one prefix: two processes' views of it."""
    url = redis_server().url
    stores = [RedisVectorStore(url, prefix=prefix, clock=clock) for _ in range(2)]
    for store in stores:
        store.setup(EMBEDDER, DIM)
    yield stores[0], stores[1]
    for store in stores:
        store.close()


def test_a_purge_on_one_store_is_gone_for_the_other_and_fences_its_older_writes(
    pair, clock: Clock
) -> None:
    a, b = pair
    b.upsert([make_entry("k1"), make_entry("other-tenant", tenant="t2")])
    pending = make_entry("pending", created_at=NOW - 1)  # answered before the purge

    clock.now = NOW + 1
    assert a.purge(tenant="t1") == 1

    assert b.retrieve("k1", where()) is None and b.nearest(unit(1.0), where()) is None
    b.upsert([pending])  # lands after the purge: refused in Redis
    assert b.retrieve("pending", where()) is None
    fresh = make_entry("fresh", created_at=NOW + 2)
    b.upsert([fresh])
    assert b.retrieve("fresh", where()).key == "fresh"
    assert b.retrieve("other-tenant", where(tenant="t2")) is not None


def test_a_purge_fences_partitions_created_after_it(pair, clock: Clock) -> None:
    a, b = pair
    clock.now = NOW + 1
    assert a.purge(namespace="ns") == 0  # no partition of it exists yet
    b.upsert([make_entry("late", scope="never-seen", created_at=NOW)])
    assert b.count() == 0
    b.upsert([make_entry("after", scope="never-seen", created_at=NOW + 2)])
    assert b.count() == 1


def test_a_purge_by_model_keeps_the_other_models_of_a_partition(pair, clock: Clock) -> None:
    a, b = pair
    b.upsert([make_entry("a1", model="a"), make_entry("b1", model="b", vector=unit(0.0, 1.0))])
    clock.now = NOW + 1
    assert a.purge(model="a") == 1
    assert b.retrieve("a1", where()) is None
    assert b.nearest(unit(1.0), where()).entry.key == "b1"
    b.upsert([make_entry("a-late", model="a", created_at=NOW)])
    assert b.retrieve("a-late", where()) is None


def test_a_withdrawal_by_key_is_gone_for_the_other_and_fences_older_copies(
    pair, clock: Clock
) -> None:
    a, b = pair
    entry = make_entry("k1", created_at=NOW - 10)
    b.upsert([entry])
    clock.now = NOW + 1
    a.upsert([make_entry("k1", created_at=NOW - 10, expires_at=NOW + 1)])  # the tuning loop's
    assert b.retrieve("k1", where(now=NOW + 1)) is None
    assert b.nearest(unit(1.0), where(now=NOW + 1)) is None
    b.upsert([entry])  # another process's pending copy, made before the withdrawal
    assert b.retrieve("k1", where(now=NOW + 1)) is None
    b.upsert([make_entry("k1", created_at=NOW + 2)])  # a new answer after it
    assert b.retrieve("k1", where(now=NOW + 2)) is not None


def test_the_model_watermark_removes_older_answers_for_every_store(pair, clock: Clock) -> None:
    a, b = pair
    b.upsert(
        [
            make_entry("old", model="m", created_at=NOW - 5),
            make_entry("new", model="m", created_at=NOW + 5, vector=unit(0.0, 1.0)),
            make_entry("other", model="x", created_at=NOW - 5, tenant="t2"),
        ]
    )
    assert a.mark_model("m", NOW) == 1
    assert b.retrieve("old", where()) is None
    assert b.retrieve("new", where()) is not None
    assert b.retrieve("other", where(tenant="t2")) is not None
    b.upsert([make_entry("old-late", model="m", created_at=NOW - 1)])
    assert b.retrieve("old-late", where()) is None


def test_a_purge_in_another_process_is_gone_here(prefix: str, clock: Clock) -> None:
    url = redis_server().url
    store = RedisVectorStore(url, prefix=prefix, clock=clock)
    store.setup(EMBEDDER, DIM)
    store.upsert([make_entry("k1")])
    child = f"""
from semcache.stores.redis_vectors import RedisVectorStore
s = RedisVectorStore({url!r}, prefix={prefix!r}, clock=lambda: {NOW + 1!r})
s.setup({EMBEDDER!r}, {DIM})
print(s.purge(tenant="t1"))
"""
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "1", out.stderr
    assert store.retrieve("k1", where()) is None
    store.upsert([make_entry("k1")])  # created before the child's purge
    assert store.count() == 0
    store.close()


def test_payloads_expire_by_redis_ttl_and_the_sweep_removes_elements(prefix: str) -> None:
    server = redis_server()
    store = RedisVectorStore(server.url, prefix=prefix)  # real clock: Redis's TTL applies
    store.setup(EMBEDDER, DIM)
    now = time.time()
    store.upsert([make_entry("brief", created_at=now, expires_at=now + 0.3)])
    client = redis.Redis.from_url(server.url)
    payloads = [k for k in client.keys(f"{prefix}:vs:*:p")]
    ttl = client.execute_command("HPTTL", payloads[0], "FIELDS", 1, "brief")[0]
    assert 0 < ttl <= 300
    assert store.retrieve("brief", where(now=now)) is not None
    time.sleep(0.4)
    assert client.hexists(payloads[0], "brief") is False  # Redis removed the payload itself
    assert store.nearest(unit(1.0), where(now=now)) is None  # element left, payload gone
    assert store.purge_expired(time.time()) == 1
    assert client.execute_command("VCARD", payloads[0].decode()[:-1] + "v") == 0
    store.close()


def test_similarities_are_exact_cosines(prefix: str) -> None:
    rng = np.random.default_rng(7)
    dim = 384
    store = RedisVectorStore(redis_server().url, prefix=prefix, clock=lambda: NOW)
    store.setup(EMBEDDER, dim)
    vectors = rng.standard_normal((50, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.upsert([make_entry(f"k{i}", v) for i, v in enumerate(vectors)])
    worst = 0.0
    for query in vectors[:20] + 0.3 * rng.standard_normal((20, dim)).astype(np.float32):
        query = (query / np.linalg.norm(query)).astype(np.float32)
        match = store.nearest(query, where())
        expected = vectors @ query
        assert match.entry.key == f"k{int(np.argmax(expected))}"
        worst = max(worst, abs(match.similarity - float(expected.max())))
    assert worst <= 1e-6
    store.close()


def test_on_a_three_master_cluster(prefix: str, clock: Clock) -> None:
    from redis.cluster import RedisCluster as ClusterClient

    with RedisCluster(masters=3) as cluster:
        client = ClusterClient.from_url(cluster.url)
        store = RedisVectorStore(client, prefix=prefix, clock=clock)
        store.setup(EMBEDDER, DIM)
        tenants = [f"t{i}" for i in range(12)]
        store.upsert([make_entry(f"k-{t}", tenant=t) for t in tenants])
        slots = {client.keyslot(k) for k in client.keys(f"{prefix}:vs:*:v", target_nodes="all")}
        owners = {client.nodes_manager.get_node_from_slot(s).name for s in slots}
        assert len(slots) == 12 and len(owners) == 3  # partitions spread over every master
        for t in tenants:
            assert store.nearest(unit(1.0), where(tenant=t)).entry.key == f"k-{t}"
            assert store.retrieve(f"k-{t}", where(tenant=t)) is not None
        assert store.count() == 12
        assert [e.key for e in store.recent(tenant="t3")] == ["k-t3"]
        clock.now = NOW + 1
        assert store.purge(tenant="t3") == 1
        store.upsert([make_entry("k-t3", tenant="t3", created_at=NOW)])
        assert store.retrieve("k-t3", where(tenant="t3")) is None
        assert store.purge_expired(NOW + 2) == 0
        assert store.count() == 11
        store.close()
        client.close()


def test_redis_errors_are_store_errors(prefix: str) -> None:
    server = RedisServer().start()
    store = RedisVectorStore(server.url, prefix=prefix, clock=lambda: NOW)
    store.setup(EMBEDDER, DIM)
    server.stop()
    with pytest.raises(StoreError, match="redis store"):
        store.nearest(unit(1.0), where())
    with pytest.raises(StoreError, match="redis store"):
        store.upsert([make_entry("k1")])
    store.close()


def test_a_server_without_vector_sets_is_a_config_error_naming_the_settings() -> None:
    """Unit level (no Redis 7 or Valkey installs here): the reply such a server gives."""
    from redis.exceptions import ResponseError

    class WithoutVectorSets:
        def execute_command(self, *args: object) -> object:
            raise ResponseError(f"unknown command '{args[0]}', with args beginning with: ")

        def close(self) -> None:
            pass

    store = RedisVectorStore(WithoutVectorSets())
    with pytest.raises(ConfigError, match=r"store.backend.*Redis Open Source >= 8.0.*redis.url"):
        store.setup(EMBEDDER, DIM)


def test_keys_of_a_partition_share_one_hash_tag(pair) -> None:
    a, _ = pair
    a.upsert([make_entry("k1")])
    client = redis.Redis.from_url(redis_server().url)
    keys = [k.decode() for k in client.keys(f"{a._layout.prefix}:vs:{{*")]
    assert len(keys) == 5 and len({k.split("{")[1].split("}")[0] for k in keys}) == 1
    a.purge(tenant="t1")  # the partition's fence hash (with its name) shares the tag too
    fenced = [k.decode() for k in client.keys(f"{a._layout.prefix}:vs:{{*")]
    assert next(k for k in fenced if k.endswith(":m")).split("{")[1].split("}")[0] in keys[0]
    meta = json.loads(client.hget(f"{a._layout.prefix}:vs:meta", "config"))
    assert meta == {"format": 1, "embedder": EMBEDDER, "dim": DIM}


@pytest.mark.parametrize("lost", ["registry", "registry and names"])
def test_a_purge_finds_partitions_the_registry_lost(pair, clock, lost: str) -> None:
    """The registry is one key (deleted, evicted, a cluster master back empty): a purge
    still reaches every partition, named by its ``part`` field or else by an entry; another
    tenant's partition is left alone and registered again."""
    a, b = pair
    b.upsert([make_entry("k1"), make_entry("k2", namespace="ns2"), make_entry("o", tenant="t2")])
    client = redis.Redis.from_url(redis_server().url)
    client.delete(a._layout.parts)
    if lost == "registry and names":
        for name in client.keys(f"{a._layout.prefix}:vs:{{*}}:m"):
            client.hdel(name, "part")
    clock.now = NOW + 1
    assert a.purge(tenant="t1") == 2
    assert b.retrieve("k1", where()) is None and b.retrieve("k2", where(namespace="ns2")) is None
    assert b.retrieve("o", where(tenant="t2")) is not None
    assert b.count() == 1  # t2's partition is registered again


def test_after_redis_restarts_empty_a_purge_still_finds_new_partitions(pair, clock) -> None:
    a, b = pair
    b.upsert([make_entry("k1")])
    redis.Redis.from_url(redis_server().url).flushall()  # as a restart without persistence
    b.upsert([make_entry("k2")])  # the same partition, written again by the same process
    clock.now = NOW + 1
    assert a.purge(tenant="t1") == 1
    assert b.retrieve("k2", where()) is None


@pytest.mark.parametrize("lost", ["c", "v"])
def test_a_purge_by_model_finds_entries_when_one_partition_key_was_lost(pair, clock, lost):
    """Entries are found by their payloads as well as by the created-at index: losing the
    index (or the vector set) hides none of a model's answers from its purge."""
    a, b = pair
    b.upsert([make_entry("k1"), make_entry("k2", model="other-model")])
    client = redis.Redis.from_url(redis_server().url)
    v, _, _, c, _ = a._keys("t1", "ns", "s1", EMBEDDER)
    client.delete({"c": c, "v": v}[lost])
    clock.now = NOW + 1
    assert a.purge(model="gpt-4o-mini") == 1
    assert b.retrieve("k1", where()) is None
    assert b.retrieve("k2", where()) is not None
