"""The public surface of semcache.stores: exports, lazy imports, open_store."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import semcache.stores as stores
from semcache.errors import ConfigError, StoreError


def test_all_is_pinned() -> None:
    assert sorted(stores.__all__) == sorted(
        [
            "NEVER_EXPIRES",
            "Entry",
            "Match",
            "QdrantEdgeStore",
            "QdrantStore",
            "RedisVectorStore",
            "Selection",
            "StoreAdmin",
            "VectorStore",
            "Where",
            "is_live",
            "open_store",
            "point_id",
        ]
    )
    for name in stores.__all__:
        assert getattr(stores, name) is not None
    with pytest.raises(AttributeError):
        stores.NoSuchStore  # noqa: B018


def test_the_request_path_protocol_is_narrow() -> None:
    def methods(protocol: type) -> set[str]:
        return {name for name in vars(protocol) if not name.startswith("_")}

    assert methods(stores.VectorStore) == {
        "setup",
        "close",
        "retrieve",
        "nearest",
        "nearest_k",
        "upsert",
        "purge_expired",
    }
    assert methods(stores.StoreAdmin) == {"purge", "count", "recent"}


def test_stores_import_nothing_of_semcache_but_errors() -> None:
    root = Path(stores.__file__).parent
    for module in root.glob("*.py"):
        for line in module.read_text().splitlines():
            words = line.split()
            if words[:1] in (["from"], ["import"]) and words[1].startswith("semcache"):
                assert words[1] == "semcache.errors", f"{module.name}: {line.strip()}"


def test_importing_the_package_loads_no_qdrant_library() -> None:
    probe = (
        "import sys, semcache.stores, semcache.testing; "
        "print(sorted(m for m in ('qdrant_client', 'qdrant_edge') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_open_store_picks_the_backend(store_dir: Path) -> None:
    assert stores.open_store("none", path=str(store_dir / "unused")) is None

    edge = stores.open_store("edge", path=str(store_dir / "s"))
    assert isinstance(edge, stores.QdrantEdgeStore)
    assert not (store_dir / "s").exists()  # not set up yet
    edge.setup("e", 4)
    assert edge.directory == store_dir / "s"
    edge.close()

    server = stores.open_store("qdrant", path="ignored", url="http://127.0.0.1:9")
    assert isinstance(server, stores.QdrantStore)


def test_open_store_needs_a_url_for_the_server_backend() -> None:
    with pytest.raises(ConfigError, match="url"):
        stores.open_store("qdrant", path="x")


def test_open_store_names_an_unknown_backend() -> None:
    with pytest.raises(ConfigError, match=r"backend.*'valkey'"):
        stores.open_store("valkey", path="x")


def test_open_store_needs_a_client_for_the_redis_backend() -> None:
    with pytest.raises(ConfigError, match=r"store.backend.*redis.url"):
        stores.open_store("redis", path="x")
    store = stores.open_store("redis", path="x", redis_client="redis://127.0.0.1:1/0")
    assert isinstance(store, stores.RedisVectorStore)


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every request with HTTP 500 (after ``delay_s``) and records what it saw."""

    seen: list[tuple[str, str, str | None]]
    delay_s = 0.0

    def do_GET(self) -> None:
        self.seen.append((self.command, self.path, self.headers.get("api-key")))
        time.sleep(self.delay_s)
        body = b'{"status": {"error": "recorded"}}'
        try:
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first (the timeout test)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def recorder() -> Iterator[tuple[str, type[_Recorder]]]:
    handler = type("Handler", (_Recorder,), {"seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_open_store_passes_the_server_settings_through(
    recorder: tuple[str, type[_Recorder]],
) -> None:
    url, handler = recorder
    store = stores.open_store(
        "qdrant", path="ignored", url=url, api_key="k-123", collection="c9", prefer_grpc=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # qdrant-client warns about an API key over http
        with pytest.raises(StoreError, match="qdrant setup failed"):
            store.setup("e", 4)
    store.close()
    # REST (not gRPC), to this url, for this collection, with this key
    assert handler.seen[0] == ("GET", "/collections/c9/exists", "k-123")


def test_open_store_passes_the_timeout_through(recorder: tuple[str, type[_Recorder]]) -> None:
    url, handler = recorder
    handler.delay_s = 4.0
    store = stores.open_store("qdrant", path="x", url=url, prefer_grpc=False, timeout_s=1.0)
    started = time.perf_counter()
    with pytest.raises(StoreError, match="qdrant setup failed"):
        store.setup("e", 4)
    assert time.perf_counter() - started < 3.5
    store.close()
