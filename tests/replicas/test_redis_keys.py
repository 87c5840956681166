"""The Redis key layout (pure): every purge filter's generation covers exactly its entries."""

from __future__ import annotations

import fnmatch
import itertools

import pytest

from semcache.errors import ConfigError
from semcache.replicas.connect import RedisOptions
from semcache.replicas.keys import KeySpace, h

KS = KeySpace("p")
CELLS = [(t, n, m) for t, n, m in itertools.product(("t1", "t:2*"), ("n1", "[n]"), ("m1", "m2"))]


@pytest.mark.parametrize("mask", list(itertools.product((False, True), repeat=3)))
def test_a_purge_generation_and_pattern_cover_exactly_the_filtered_entries(mask):
    target = CELLS[-1]
    values = [v if on else None for v, on in zip(target, mask, strict=True)]
    filters = dict(zip(("tenant", "namespace", "model"), values, strict=True))
    generation = KS.purge_generation(**filters)
    pattern = KS.purge_pattern(**filters)
    for tenant, namespace, model in CELLS:
        cell = (tenant, namespace, model)
        covered = all(f is None or f == v for f, v in zip(filters.values(), cell, strict=True))
        gens = KS.generations(tenant=tenant, namespace=namespace, model=model)
        entry = KS.entry("k", tenant=tenant, namespace=namespace, model=model)
        assert (generation in gens) is covered
        assert fnmatch.fnmatchcase(entry, pattern) is covered


def test_partition_values_are_hashed_so_separators_and_globs_cannot_collide():
    assert KS.entry("k", tenant="a:b", namespace="c", model="m") != KS.entry(
        "k", tenant="a", namespace="b:c", model="m"
    )
    assert len(h("anything")) == 16 and set(h("*?[")) <= set("0123456789abcdef")
    assert len(set(KS.generations(tenant="t", namespace="n", model="m"))) == 8


def test_redis_options_refuse_bad_urls_and_tls_files_without_tls():
    with pytest.raises(ConfigError, match=r"redis\.url"):
        RedisOptions(url="http://localhost:6379")
    with pytest.raises(ConfigError, match="rediss"):
        RedisOptions(url="redis://localhost:6379", tls_ca_file="/ca.pem")
    assert RedisOptions(url="rediss://localhost:6380", tls_ca_file="/ca.pem").tls
