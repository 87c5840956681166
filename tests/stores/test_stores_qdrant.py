"""QdrantStore-only behaviour: where it connects, and how failures surface."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from store_helpers import DIM, EMBEDDER

from semcache.errors import ConfigError, StoreError, StoreLockedError
from semcache.stores import QdrantStore


@pytest.mark.parametrize(
    "arguments",
    [{}, {"url": "http://localhost:6333", "path": "/tmp/x"}, {"location": ":memory:", "path": "x"}],
)
def test_exactly_one_place_must_be_given(arguments: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="exactly one of url, location or path"):
        QdrantStore(**arguments)


def test_constructor_does_no_io(tmp_path: Path) -> None:
    QdrantStore(path=str(tmp_path / "not-yet"))
    QdrantStore("http://127.0.0.1:9")  # nothing listens there; no connection is tried yet
    assert not (tmp_path / "not-yet").exists()


def test_a_second_client_on_the_same_path_is_refused(tmp_path: Path) -> None:
    first = QdrantStore(path=str(tmp_path))
    first.setup(EMBEDDER, DIM)
    try:
        with pytest.raises(StoreLockedError, match='backend = "qdrant"'):
            QdrantStore(path=str(tmp_path)).setup(EMBEDDER, DIM)
    finally:
        first.close()


@pytest.mark.parametrize("prefer_grpc", [False, True])
def test_an_unreachable_server_is_a_store_error(prefer_grpc: bool) -> None:
    store = QdrantStore("http://127.0.0.1:9", prefer_grpc=prefer_grpc, timeout=1.0)
    started = time.perf_counter()
    with pytest.raises(StoreError, match="qdrant setup failed"):
        store.setup(EMBEDDER, DIM)
    assert time.perf_counter() - started < 10
    store.close()


def test_a_collection_not_made_by_semcache_is_refused(tmp_path: Path) -> None:
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(tmp_path))
    client.create_collection(
        "foreign", vectors_config=models.VectorParams(size=DIM, distance=models.Distance.COSINE)
    )
    client.close()
    store = QdrantStore(path=str(tmp_path), collection="foreign")
    with pytest.raises(StoreError, match="not created by semcache"):
        store.setup(EMBEDDER, DIM)
    store.close()
    QdrantStore(path=str(tmp_path), collection="foreign").close()  # the failed setup let go


def test_collections_are_separate(tmp_path: Path) -> None:
    from store_helpers import make_entry, where

    a = QdrantStore(path=str(tmp_path), collection="a")
    a.setup(EMBEDDER, DIM)
    a.upsert([make_entry("k1")])
    a.close()
    b = QdrantStore(path=str(tmp_path), collection="b")
    b.setup("other-embedder", DIM * 2)  # another collection may use another embedder
    assert b.count() == 0
    assert b.retrieve("k1", where(embedder="other-embedder")) is None
    b.close()
