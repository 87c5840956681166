"""Fixtures of the store tests: a factory per backend variant (see store_helpers)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from store_helpers import DIM, EMBEDDER, VARIANTS, build

from semcache.stores import VectorStore

RAM_DISK = Path("/dev/shm")


@pytest.fixture
def store_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory for store data, in RAM when the machine has /dev/shm.

    Creating an edge shard makes about 70 fsyncs; on a busy shared disk they cost seconds
    per test, and durability across power loss is not what these tests check.
    """
    if not (RAM_DISK.is_dir() and os.access(RAM_DISK, os.W_OK)):
        yield tmp_path
        return
    directory = Path(tempfile.mkdtemp(prefix="semcache-stores-", dir=RAM_DISK))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def opener(store_dir: Path) -> Iterator[Callable[[str], VectorStore]]:
    """``opener(variant)``: a new store on this test's directory; all closed at teardown."""
    opened: list[VectorStore] = []

    def open_variant(variant: str, embedder: str = EMBEDDER, dim: int = DIM) -> VectorStore:
        store = build(variant, store_dir)
        opened.append(store)
        store.setup(embedder, dim)
        return store

    yield open_variant
    for store in opened:
        store.close()


@pytest.fixture(params=VARIANTS)
def store(request: pytest.FixtureRequest, opener: Callable[[str], VectorStore]) -> VectorStore:
    return opener(request.param)
