"""Metadata, metadata filters and k-nearest search, on every backend (the conformance
fixtures): what ``check(..., filters=..., num_results=...)`` relies on."""

from __future__ import annotations

from dataclasses import replace

import pytest
from store_helpers import make_entry, unit, where

from semcache.errors import ConfigError, StoreError
from semcache.stores import VectorStore
from semcache.stores.where import metadata_filters

ALONG = unit(1.0)


def with_meta(key, metadata, vector=ALONG, **partition):
    return replace(make_entry(key, vector, **partition), metadata=metadata)


def keys(matches):
    return [m.entry.key for m in matches]


def test_metadata_round_trips_on_both_lookups(store: VectorStore) -> None:
    meta = {"source": "faq", "rank": 3, "public": True, "tags": ["a", "b"], "nested": {"x": 1}}
    store.upsert([with_meta("k1", meta), make_entry("k2", unit(0.6, 0.8))])
    assert store.retrieve("k1", where()).metadata == meta
    assert store.nearest(ALONG, where()).entry.metadata == meta
    assert store.retrieve("k2", where()).metadata is None


def test_nearest_k_is_closest_first_and_bounded(store: VectorStore) -> None:
    store.upsert(
        [
            make_entry("far", unit(0.0, 1.0)),
            make_entry("near", unit(0.9, 0.1)),
            make_entry("exact", ALONG),
            make_entry("mid", unit(0.6, 0.8)),
            make_entry("other-tenant", ALONG, tenant="t2"),
        ]
    )
    matches = store.nearest_k(ALONG, where(), 3)
    assert keys(matches) == ["exact", "near", "mid"]
    assert round(matches[0].similarity, 4) == 1.0
    assert keys(store.nearest_k(ALONG, where(), 10)) == ["exact", "near", "mid", "far"]
    assert store.nearest_k(ALONG, where(tenant="nobody"), 3) == []
    with pytest.raises(StoreError):
        store.nearest_k(ALONG, where(), 0)


#: (filters, keys they admit, nearest first)
FILTER_CASES = [
    ({"source": "faq"}, ["a", "c"]),
    ({"source": ["faq", "blog"]}, ["a", "b", "c"]),
    ({"source": "faq", "rank": 2}, ["c"]),
    ({"rank": [1, 2]}, ["a", "c"]),
    ({"rank": 3}, ["b"]),
    ({"source": "nowhere"}, []),
    ({"absent": "x"}, []),
]


def test_filters_narrow_both_lookups(store: VectorStore) -> None:
    store.upsert(
        [
            with_meta("a", {"source": "faq", "rank": 1, "public": True}),
            with_meta("b", {"source": "blog", "rank": 3, "public": False}, unit(0.9, 0.1)),
            with_meta("c", {"source": "faq", "rank": 2}, unit(0.6, 0.8)),
            make_entry("none", unit(0.8, 0.2)),
        ]
    )
    for filters, expected in FILTER_CASES:
        w = where(filters=metadata_filters(filters))
        assert keys(store.nearest_k(ALONG, w, 10)) == expected, filters
        first = store.nearest(ALONG, w)
        assert (first.entry.key if first else None) == (expected[0] if expected else None)
        for key in ("a", "b", "c", "none"):
            assert (store.retrieve(key, w) is not None) == (key in expected), (filters, key)


def test_a_filter_never_widens_a_partition(store: VectorStore) -> None:
    """Another tenant's entry whose metadata matches the filter is still not found."""
    store.upsert([with_meta("theirs", {"team": "blue"}, tenant="t2")])
    w = where(filters=metadata_filters({"team": "blue"}))
    assert store.nearest_k(ALONG, w, 5) == []
    assert store.retrieve("theirs", w) is None
    assert keys(store.nearest_k(ALONG, where(tenant="t2", filters=w.filters), 5)) == ["theirs"]


@pytest.mark.parametrize(
    "bad",
    [
        {"k": 1.5},
        {"k": None},
        {"k": []},
        {"k": {"x": 1}},
        {"k": True},
        {"k": [True, False]},
        {"k": ["a", 1]},
        {"": "x"},
        {"a.b": "x"},
        "not a mapping",
    ],
)
def test_bad_filters_are_refused_naming_the_key(bad) -> None:
    with pytest.raises(ConfigError, match="filters"):
        metadata_filters(bad)
