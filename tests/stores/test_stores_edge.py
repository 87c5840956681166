"""Edge-only behaviour: one process per directory, optimisation that never blocks lookups."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from store_helpers import DIM, EMBEDDER, make_entry, unit, where

from semcache.errors import StoreError, StoreLockedError
from semcache.stores import QdrantEdgeStore
from semcache.stores.edge import DEFAULT_OPTIMIZER

ALONG = unit(1.0)

#: An optimizer wrapper: touch argv[1], wait for argv[2] to exist, then run the rest.
GATED_OPTIMIZER = """
import pathlib, subprocess, sys, time
pathlib.Path(sys.argv[1]).touch()
while not pathlib.Path(sys.argv[2]).exists():
    time.sleep(0.01)
sys.exit(subprocess.call(sys.argv[3:]))
"""

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


def gated_optimizer(directory: Path) -> tuple[list[str], Path, Path]:
    """An optimizer command that signals ``started`` and then waits for ``go``."""
    script = directory / "gated.py"
    script.write_text(GATED_OPTIMIZER)
    started, go = directory / "started", directory / "go"
    return [sys.executable, str(script), str(started), str(go), *DEFAULT_OPTIMIZER], started, go


def wait_for(path: Path, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} did not appear"
        time.sleep(0.01)


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
    directory = store.directory
    store.upsert([make_entry("k1")])
    assert directory is not None and (directory / "store.json").exists()

    store.close()

    assert not directory.exists()
    assert store.directory is None
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
            match = store.nearest(ALONG, where())
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
        assert store.indexed_vectors() > 0  # HNSW was built
        assert store.count() == 1_000
        assert store.nearest(ALONG, where()).entry.key == "probe"
    finally:
        store.close()


def test_writes_made_while_a_copy_is_optimised_are_replayed(store_dir: Path) -> None:
    optimizer, started, go = gated_optimizer(store_dir)
    store = QdrantEdgeStore(
        store_dir / "store", hnsw_threshold=200, optimize_every=None, optimizer=optimizer
    )
    store.setup(EMBEDDER, DIM)
    store.upsert([make_entry("doomed", tenant="t9"), make_entry("other-model", model="x")])
    store.upsert(random_entries(499))
    pool = ThreadPoolExecutor(1)
    cycle = pool.submit(store.optimize)
    try:
        wait_for(started)  # the copy exists and is being optimised
        store.upsert([make_entry("late", ALONG)])
        assert store.purge(tenant="t9") == 1
        assert store.purge(model="x") == 1
        go.touch()
        assert cycle.result(timeout=120) is True

        assert shard_named_in_meta(store_dir / "store") == "shard-000002"
        assert store.retrieve("late", where()) is not None
        assert store.retrieve("doomed", where(tenant="t9")) is None
        assert store.retrieve("other-model", where()) is None
        assert store.count() == 1 + 499
    finally:
        go.touch()
        pool.shutdown()
        store.close()
    reopened = QdrantEdgeStore(store_dir / "store")
    reopened.setup(EMBEDDER, DIM)
    assert reopened.count() == 1 + 499
    assert reopened.retrieve("late", where()) is not None
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
    store_dir: Path,
) -> None:
    failing = store_dir / "fail.py"
    failing.write_text("import sys; sys.stderr.write('engine exploded'); sys.exit(3)")
    store = QdrantEdgeStore(store_dir / "store", optimizer=[sys.executable, str(failing)])
    store.setup(EMBEDDER, DIM)
    store.upsert([make_entry("k1")])

    with pytest.raises(StoreError, match="engine exploded"):
        store.optimize()

    assert store.retrieve("k1", where()) is not None
    assert sorted(p.name for p in (store_dir / "store").glob("shard-*")) == ["shard-000001"]
    store.close()


def test_close_during_optimisation_stops_it_and_leaves_a_sound_store(store_dir: Path) -> None:
    optimizer, started, _never = gated_optimizer(store_dir)
    store = QdrantEdgeStore(store_dir / "store", optimize_every=10, optimizer=optimizer)
    store.setup(EMBEDDER, DIM)
    store.upsert(random_entries(10))  # starts a background cycle
    wait_for(started)
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
