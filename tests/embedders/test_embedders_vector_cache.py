"""The text -> vector LRU: bounded, keyed by embedder identity, never embeds a text twice."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import CountingEmbedder, HashEmbedder

from semcache.embedders import CachedEmbedder, VectorCache
from semcache.errors import ConfigError


class Renamed(HashEmbedder):
    """The same vectors under another identity (e.g. another precision)."""

    name = "test-hash#onnx-int8"


def test_each_distinct_text_is_embedded_once() -> None:
    counting = CountingEmbedder(HashEmbedder())
    embedder = CachedEmbedder(counting, VectorCache(16))
    first = embedder.embed(["a b", "c d", "a b"])
    assert counting.batches == [2]  # one batch, each distinct text once
    again = embedder.embed(["c d", "a b"])
    assert counting.batches == [2]
    np.testing.assert_array_equal(again, first[[1, 0]])
    np.testing.assert_allclose(first, HashEmbedder().embed(["a b", "c d", "a b"]))
    assert embedder.embed([]).shape == (0, 32)


def test_least_recently_used_is_evicted_at_the_bound() -> None:
    cache = VectorCache(2)
    for text in ("one", "two"):
        cache.put("m", text, np.ones(3, np.float32))
    assert cache.get("m", "one") is not None  # "two" is now the oldest
    cache.put("m", "three", np.ones(3, np.float32))
    assert len(cache) == 2
    assert cache.get("m", "two") is None
    assert cache.get("m", "one") is not None and cache.get("m", "three") is not None


def test_one_identity_never_gets_another_identitys_vector() -> None:
    shared = VectorCache(16)
    fp32 = CountingEmbedder(HashEmbedder())
    int8 = CountingEmbedder(Renamed())
    CachedEmbedder(fp32, shared).embed(["same text"])
    CachedEmbedder(int8, shared).embed(["same text"])
    assert fp32.batches == [1] and int8.batches == [1]  # no reuse across names
    assert shared.get("test-hash", "same text") is not None
    assert shared.get("test-hash#onnx-int8", "same text") is not None


def test_served_vectors_cannot_be_altered_by_a_caller() -> None:
    cache = VectorCache(4)
    vector = np.ones(3, np.float32)
    cache.put("m", "t", vector)
    vector[0] = 5.0  # the caller's array is copied in
    held = cache.get("m", "t")
    assert held is not None and held[0] == 1.0
    with pytest.raises(ValueError):
        held[0] = 7.0


def test_zero_entries_keeps_nothing_and_bad_sizes_fail() -> None:
    cache = VectorCache(0)
    cache.put("m", "t", np.ones(3, np.float32))
    assert cache.get("m", "t") is None
    with pytest.raises(ConfigError, match="max_entries"):
        VectorCache(-1)
