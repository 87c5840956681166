"""The public surface of semcache.stores: exports, lazy imports, open_store."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import SecretStr

import semcache.stores as stores
from semcache.errors import ConfigError
from semcache.settings import StoreSettings


def test_all_is_pinned() -> None:
    assert sorted(stores.__all__) == sorted(
        [
            "NEVER_EXPIRES",
            "Entry",
            "Match",
            "QdrantEdgeStore",
            "QdrantStore",
            "VectorStore",
            "open_store",
            "point_id",
        ]
    )
    for name in stores.__all__:
        assert getattr(stores, name) is not None
    with pytest.raises(AttributeError):
        stores.NoSuchStore  # noqa: B018


def test_importing_the_package_loads_no_qdrant_library() -> None:
    probe = (
        "import sys, semcache.stores; "
        "print(sorted(m for m in ('qdrant_client', 'qdrant_edge') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_open_store_picks_the_backend(tmp_path) -> None:
    assert stores.open_store(StoreSettings(backend="none")) is None

    edge = stores.open_store(StoreSettings(backend="edge", path=str(tmp_path / "s")))
    assert isinstance(edge, stores.QdrantEdgeStore)
    assert not (tmp_path / "s").exists()  # not set up yet

    server = stores.open_store(
        StoreSettings(
            backend="qdrant",
            url="https://example.cloud.qdrant.io:6333",
            api_key=SecretStr("k"),
            collection="c",
            prefer_grpc=False,
            timeout_s=3.5,
        )
    )
    assert isinstance(server, stores.QdrantStore)
    assert (server._url, server._api_key, server._collection) == (
        "https://example.cloud.qdrant.io:6333",
        "k",
        "c",
    )
    assert (server._prefer_grpc, server._timeout) == (False, 3.5)


def test_open_store_needs_a_url_for_the_server_backend() -> None:
    with pytest.raises(ConfigError, match="url"):
        stores.open_store(StoreSettings(backend="qdrant"))
