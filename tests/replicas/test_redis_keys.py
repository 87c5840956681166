"""The Redis key layout (pure): every purge filter's generation covers exactly its entries."""

from __future__ import annotations

import fnmatch
import itertools

import pytest

from semcache.errors import ConfigError
from semcache.replicas.connect import RedisOptions
from semcache.replicas.keys import CLUSTER_BUCKETS, KeySpace, h

KS = KeySpace("p")
CELLS = [(t, n, m) for t, n, m in itertools.product(("t1", "t:2*"), ("n1", "[n]"), ("m1", "m2"))]


@pytest.mark.parametrize("buckets", [1, CLUSTER_BUCKETS])
@pytest.mark.parametrize("mask", list(itertools.product((False, True), repeat=3)))
def test_a_purge_generation_and_pattern_cover_exactly_the_filtered_entries(mask, buckets):
    ks = KeySpace("p", buckets=buckets)
    target = CELLS[-1]
    values = [v if on else None for v, on in zip(target, mask, strict=True)]
    filters = dict(zip(("tenant", "namespace", "model"), values, strict=True))
    generation = ks.purge_generation(**filters)
    hashes = ks.purge_hashes(filters["tenant"])
    pattern = ks.purge_pattern(**filters)
    for tenant, namespace, model in CELLS:
        cell = (tenant, namespace, model)
        covered = all(f is None or f == v for f, v in zip(filters.values(), cell, strict=True))
        gens = ks.generations(tenant=tenant, namespace=namespace, model=model)
        entry = ks.entry("k", tenant=tenant, namespace=namespace, model=model)
        assert (generation in gens and ks.generation_hash(tenant) in hashes) is covered
        assert fnmatch.fnmatchcase(entry, pattern) is covered


def test_every_key_of_a_tenant_carries_its_bucket_tag_and_tenants_spread_over_buckets():
    ks = KeySpace("p", buckets=CLUSTER_BUCKETS)
    tag = ks.tag("acme")
    named = [
        ks.entry("k", tenant="acme", namespace="n", model="m"),
        ks.generation_hash("acme"),
        ks.lease("k", tenant="acme"),
        ks.stream("k", "f", tenant="acme"),
        ks.discard("acme"),
    ]
    assert all(key[key.index("{") : key.index("}") + 1] == tag for key in named)
    assert len({ks.bucket(f"tenant-{i}") for i in range(200)}) > 150
    assert KeySpace("p").tag("acme") == KeySpace("p").tag("other") == "{0}"
    assert len(ks.purge_hashes(None)) == CLUSTER_BUCKETS and len(KS.purge_hashes(None)) == 1
    assert ks.generation_hash("acme") not in ks.other_generation_hashes("acme")
    assert ks.purge_log == "{p:purges}" and ks.purge_ack("x").startswith("{p:purges}")  # one slot
    assert len(ks.other_generation_hashes("acme")) == CLUSTER_BUCKETS - 1


def test_partition_values_are_hashed_so_separators_and_globs_cannot_collide():
    assert KS.entry("k", tenant="a:b", namespace="c", model="m") != KS.entry(
        "k", tenant="a", namespace="b:c", model="m"
    )
    assert len(h("anything")) == 16 and set(h("*?[")) <= set("0123456789abcdef")
    assert len(set(KS.generations(tenant="t", namespace="n", model="m"))) == 8


def test_cluster_needs_a_network_seed_node():
    with pytest.raises(ConfigError, match=r"redis\.cluster"):
        RedisOptions(url="unix:///tmp/redis.sock", cluster=True)


def test_redis_options_refuse_bad_urls_and_tls_files_without_tls():
    with pytest.raises(ConfigError, match=r"redis\.url"):
        RedisOptions(url="http://localhost:6379")
    with pytest.raises(ConfigError, match="rediss"):
        RedisOptions(url="redis://localhost:6379", tls_ca_file="/ca.pem")
    assert RedisOptions(url="rediss://localhost:6380", tls_ca_file="/ca.pem").tls
