"""Embedders shared by the embedder tests; each real model loads once per session."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from semcache.embedders import l2_normalise
from semcache.testing import hash_embedding


class HashEmbedder:
    """A fast, deterministic stand-in: the fake server's bag-of-words vectors."""

    name = "test-hash"
    dim = 32

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [hash_embedding(text, self.dim) for text in texts]
        return l2_normalise(np.asarray(rows, dtype=np.float32).reshape(len(rows), self.dim))


class CountingEmbedder:
    """Wraps an embedder and records every ``embed`` call (batch sizes and threads)."""

    def __init__(self, inner, *, fail_with: BaseException | None = None) -> None:
        self.inner = inner
        self.fail_with = fail_with
        self.batches: list[int] = []
        self.threads: set[int] = set()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.batches.append(len(texts))
            self.threads.add(threading.get_ident())
        if self.fail_with is not None:
            raise self.fail_with
        return self.inner.embed(texts)


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def counting():
    """Factory: ``counting(inner, fail_with=None)`` -> a CountingEmbedder."""
    return CountingEmbedder


@pytest.fixture(scope="session")
def use_multilingual():
    from semcache.embedders import UseMultilingualEmbedder

    embedder = UseMultilingualEmbedder()
    embedder.embed(["warm up"])
    return embedder


@pytest.fixture(scope="session")
def e5_small():
    from semcache.embedders import E5SmallEmbedder

    embedder = E5SmallEmbedder()
    embedder.embed(["warm up"])
    return embedder
