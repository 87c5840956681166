"""Fixtures of the store tests: a factory per backend variant (see store_helpers)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from semcache.stores import VectorStore
from store_helpers import DIM, EMBEDDER, VARIANTS, build


@pytest.fixture
def opener(tmp_path: Path) -> Iterator[Callable[[str], VectorStore]]:
    """``opener(variant)``: a new store on this test's directory; all closed at teardown."""
    opened: list[VectorStore] = []

    def open_variant(variant: str, embedder: str = EMBEDDER, dim: int = DIM) -> VectorStore:
        store = build(variant, tmp_path)
        opened.append(store)
        store.setup(embedder, dim)
        return store

    yield open_variant
    for store in opened:
        store.close()


@pytest.fixture(params=VARIANTS)
def store(request: pytest.FixtureRequest, opener: Callable[[str], VectorStore]) -> VectorStore:
    return opener(request.param)
