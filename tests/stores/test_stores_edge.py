"""Edge-only behaviour: one process per directory, optimisation that never blocks lookups."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from store_helpers import DIM, EMBEDDER, NOW, make_entry, unit

from semcache.errors import StoreError, StoreLockedError
from semcache.stores import QdrantEdgeStore

ALONG = unit(1.0)

SECOND_PROCESS = """
import sys
from semcache.errors import StoreLockedError
from semcache.stores import QdrantEdgeStore
try:
    QdrantEdgeStore(sys.argv[1]).setup(sys.argv[2], int(sys.argv[3]))
except StoreLockedError as exc:
    print("LOCKED:", exc)
else:
    print("OPENED")
"""


def random_entries(count: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    vectors[:, 0] = -np.abs(vectors[:, 0])  # all far from ALONG, so a probe along it wins
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [make_entry(f"bulk-{i}", vectors[i]) for i in range(count)]


def shard_named_in_meta(directory: Path) -> str:
    return json.loads((directory / "store.json").read_text())["shard"]


def second_process_opens(directory: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-c", SECOND_PROCESS, str(directory), EMBEDDER, str(DIM)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_second_process_is_refused_with_a_pointer_to_the_server_backend(tmp_path: Path) -> None:
    store = QdrantEdgeStore(tmp_path)
    store.setup(EMBEDDER, DIM)
    try:
        output = second_process_opens(tmp_path)
    finally:
        store.close()

    assert output.startswith("LOCKED:")
    assert 'backend = "qdrant"' in output
    assert str(tmp_path) in output
    assert "OPENED" in second_process_opens(tmp_path)  # released on close


def test_a_second_store_in_the_same_process_is_refused_too(store_dir: Path) -> None:
    first = QdrantEdgeStore(store_dir)
    first.setup(EMBEDDER, DIM)
    with pytest.raises(StoreLockedError, match="another process"):
        QdrantEdgeStore(store_dir).setup(EMBEDDER, DIM)
    first.close()

    second = QdrantEdgeStore(store_dir)
    second.setup(EMBEDDER, DIM)
    second.close()


def test_memory_path_is_a_temporary_directory_removed_on_close() -> None:
    store = QdrantEdgeStore(":memory:")
    store.setup(EMBEDDER, DIM)
    directory = store._root
    store.upsert([make_entry("k1")])
    assert directory is not None and (directory / "store.json").exists()

    store.close()

    assert not directory.exists()
    store.close()  # closing twice is harmless


def test_constructor_does_no_io(store_dir: Path) -> None:
    QdrantEdgeStore(store_dir / "not-yet")
    assert not (store_dir / "not-yet").exists()


def test_background_optimisation_never_blocks_lookups(store_dir: Path) -> None:
    store = QdrantEdgeStore(store_dir, hnsw_threshold=200, optimize_every=1_000)
    store.setup(EMBEDDER, DIM)
    try:
        store.upsert([make_entry("probe", ALONG), *random_entries(999)])  # starts a cycle
        answered, slowest = 0, 0.0
        while store.optimizing:
            started = time.perf_counter()
            [match] = store.search(
                ALONG, tenant="t1", namespace="ns", scope="s1", now=NOW, threshold=0.99
            )
            slowest = max(slowest, time.perf_counter() - started)
            assert match.entry.key == "probe"
            answered += 1
            time.sleep(0.005)  # a caller's pace; a busy loop would starve the niced child
        assert store.wait_optimized(timeout=60)

        # An optimize() running in this process would have let at most one lookup through.
        assert answered >= 5, f"only {answered} lookups answered while optimising"
        assert slowest < 0.5
        assert shard_named_in_meta(store_dir) == "shard-000002"
        assert not (store_dir / "shard-000001").exists()
        assert store._shard.info().indexed_vectors_count > 0  # HNSW was built
        assert store.count() == 1_000
        [match] = store.search(
            ALONG, tenant="t1", namespace="ns", scope="s1", now=NOW, threshold=0.99
        )
        assert match.entry.key == "probe"
    finally:
        store.close()


def test_writes_made_while_a_copy_is_optimised_are_replayed(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = QdrantEdgeStore(store_dir, hnsw_threshold=200, optimize_every=None)
    store.setup(EMBEDDER, DIM)
    store.upsert([make_entry("doomed"), make_entry("other-model", model="x"), *random_entries(499)])
    optimise_copy = store._optimize_copy

    def write_meanwhile(copy: Path) -> bool:
        store.upsert([make_entry("late", ALONG)])
        store.delete(["doomed"])
        assert store.purge(model="x") == 1
        return optimise_copy(copy)

    monkeypatch.setattr(store, "_optimize_copy", write_meanwhile)
    try:
        assert store.optimize() is True

        assert store.retrieve("late", tenant="t1", namespace="ns", now=NOW) is not None
        assert store.retrieve("doomed", tenant="t1", namespace="ns", now=NOW) is None
        assert store.retrieve("other-model", tenant="t1", namespace="ns", now=NOW) is None
        assert store.count() == 1 + 499
    finally:
        store.close()
    reopened = QdrantEdgeStore(store_dir)
    reopened.setup(EMBEDDER, DIM)
    assert reopened.count() == 1 + 499
    assert reopened.retrieve("late", tenant="t1", namespace="ns", now=NOW) is not None
    reopened.close()


def test_optimize_with_nothing_to_do_keeps_the_shard(store_dir: Path) -> None:
    store = QdrantEdgeStore(store_dir)
    store.setup(EMBEDDER, DIM)
    store.upsert([make_entry("k1")])
    assert store.optimize() is False
    assert shard_named_in_meta(store_dir) == "shard-000001"
    assert sorted(p.name for p in store_dir.glob("shard-*")) == ["shard-000001"]
    store.close()


def test_a_failed_optimisation_is_a_store_error_and_the_store_keeps_working(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = store_dir / "fail.py"
    failing.write_text("import sys; sys.stderr.write('engine exploded'); sys.exit(3)")
    monkeypatch.setattr("semcache.stores.edge._OPTIMIZE_SCRIPT", failing)
    store = QdrantEdgeStore(store_dir / "store")
    store.setup(EMBEDDER, DIM)
    store.upsert([make_entry("k1")])

    with pytest.raises(StoreError, match="engine exploded"):
        store.optimize()

    assert store.retrieve("k1", tenant="t1", namespace="ns", now=NOW) is not None
    assert sorted(p.name for p in (store_dir / "store").glob("shard-*")) == ["shard-000001"]
    store.close()


def test_close_during_optimisation_stops_it_and_leaves_a_sound_store(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = store_dir / "slow.py"
    slow.write_text("import time; time.sleep(60)")
    monkeypatch.setattr("semcache.stores.edge._OPTIMIZE_SCRIPT", slow)
    store = QdrantEdgeStore(store_dir / "store", optimize_every=10)
    store.setup(EMBEDDER, DIM)
    store.upsert(random_entries(10))
    deadline = time.monotonic() + 10
    while store._child is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store.optimizing

    started = time.perf_counter()
    store.close()
    assert time.perf_counter() - started < 5

    reopened = QdrantEdgeStore(store_dir / "store")
    reopened.setup(EMBEDDER, DIM)
    assert reopened.count() == 10
    assert [p.name for p in (store_dir / "store").glob("shard-*")] == ["shard-000001"]
    reopened.close()


def test_engine_errors_are_store_errors(store_dir: Path) -> None:
    (store_dir / "store.json").write_text("{not json")
    with pytest.raises(StoreError, match="not valid JSON"):
        QdrantEdgeStore(store_dir).setup(EMBEDDER, DIM)
    # the failed setup released the directory lock
    (store_dir / "store.json").unlink()
    store = QdrantEdgeStore(store_dir)
    store.setup(EMBEDDER, DIM)
    store.close()
