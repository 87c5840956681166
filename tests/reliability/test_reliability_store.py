"""Store integrity: ``kill -9`` during writes, a deleted store directory, an orphaned optimiser.

* A child process writes entries to the embedded store and acknowledges each once
  ``upsert`` returned; it is killed with SIGKILL mid-stream, five rounds on one directory.
  Every acknowledged entry must be back after reopening, field by field.
* The store directory is deleted under a running cache: the loss is detected on the next
  write, counted (``errors["store_lost"]``), reported by ``health()`` and the store
  reopened, so later answers are stored and survive a restart.
* The optimiser child dies with its parent.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.facade.health import Status
from semcache.stats import Tier
from semcache.stores.edge import QdrantEdgeStore
from semcache.stores.where import Where
from semcache.testing import FakeEmbedder, FakeUpstream

KILLS = 5
DIM = 8
WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from semcache.stores.base import Entry
    from semcache.stores.edge import QdrantEdgeStore

    path, prefix, dim = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = QdrantEdgeStore(path, optimize_every=None)
    store.setup("kill-test", dim)
    print("open", flush=True)
    for i in range(1_000_000):
        key = f"{prefix}-{i}"
        vector = np.random.default_rng(abs(hash(key)) % 2**32).random(dim, dtype=np.float32)
        store.upsert([Entry(key=key, tenant="t", namespace="n", model="m", scope="s",
                            response=f"answer {key}", created_at=float(i),
                            expires_at=1e12, embedder="kill-test", question=f"q {key}",
                            vector=vector)])
        print(key, flush=True)
    """
)


def _where() -> Where:
    return Where(tenant="t", namespace="n", scope="s", embedder="kill-test", now=0.0)


def test_kill_9_during_writes_loses_no_acknowledged_entry(tmp_path: Path) -> None:
    rng = random.Random(7)
    path = tmp_path / "store"
    acknowledged: list[str] = []
    for round_ in range(KILLS):
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"r{round_}", str(DIM)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "open"
        wanted = rng.randint(20, 200)
        for _ in range(wanted):
            acknowledged.append(child.stdout.readline().strip())
        os.kill(child.pid, signal.SIGKILL)  # mid-write: the child never stops writing
        child.wait()
        child.stdout.close()
    store = QdrantEdgeStore(path, optimize_every=None)
    store.setup("kill-test", DIM)
    try:
        missing = []
        for key in acknowledged:
            entry = store.retrieve(key, _where())
            if entry is None or entry.response != f"answer {key}" or entry.question != f"q {key}":
                missing.append(key)
        count = store.count()
    finally:
        store.close()
    print(f"\nkill -9: {KILLS} kills, {len(acknowledged)} acknowledged entries checked")
    assert missing == []
    assert count >= len(acknowledged)


def _ask(question: str) -> dict:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]}


def test_deleted_store_directory_is_detected_counted_reported_and_reopened(tmp_path: Path):
    path = tmp_path / "store"
    settings = CacheSettings(
        semantic={"threshold": 0.99, "verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "edge", "path": str(path)},
        # creating the new shard stalls the process (fsyncs under the GIL): not what this
        # test is about, so the loop-lag gate must not shed the writes that follow
        admission={"max_loop_lag_ms": None},
    )
    upstream = FakeUpstream()
    cache = SemanticCache(settings, embedder=FakeEmbedder(), upstream=upstream)
    try:
        assert cache.ready()
        for i in range(5):
            cache.completion(**_ask(f"before deletion {i}"))
        cache.flush()
        assert cache.stats().store_entries == 5
        shutil.rmtree(path)
        for i in range(7):
            cache.completion(**_ask(f"after deletion {i}"))
        cache.flush()
        stats = cache.stats()
        health = cache.health()
    finally:
        cache.close()
    assert stats.errors.get("store_lost") == 1
    assert stats.store_entries == 7
    assert health.ready  # reopened: degraded, not down
    assert health.parts["store_integrity"].status is Status.DEGRADED
    # the answers written after the deletion survive a restart
    with SemanticCache(settings, embedder=FakeEmbedder(), upstream=upstream) as again:
        assert again.ready()
        assert again.stats().store_entries == 7
        served = again.completion(**_ask("after deletion 3"))
        assert cache_info(served).tier is Tier.EXACT


def test_close_never_raises_a_store_error(tmp_path: Path) -> None:
    class BrokenClose(QdrantEdgeStore):
        def close(self) -> None:
            super().close()
            from semcache.errors import StoreError

            raise StoreError("flush failed: disk gone")

    store = BrokenClose(tmp_path / "s")
    cache = SemanticCache(
        CacheSettings(semantic={"verifier": "none"}),
        embedder=FakeEmbedder(),
        store=store,
        upstream=FakeUpstream(),
    )
    cache.completion(**_ask("anything"))
    cache.flush()
    errors_before = cache.stats().errors.get("store_close", 0)
    cache.close()  # must not raise
    assert errors_before == 0
    assert cache.stats().errors["store_close"] == 1


def test_optimiser_child_dies_with_its_parent(tmp_path: Path) -> None:
    from semcache.stores import _edge_optimize

    pidfile = tmp_path / "child.pid"
    child = tmp_path / "child.py"
    child.write_text(
        "import os, sys, time\n"
        f"sys.path.insert(0, {str(Path(_edge_optimize.__file__).parent)!r})\n"
        "import _edge_optimize\n"
        "_edge_optimize.die_with_parent()\n"
        f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(60)\n"
    )
    parent_code = (
        f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, {str(child)!r}])\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code])
    deadline = time.monotonic() + 20
    while not (pidfile.exists() and pidfile.read_text()):
        assert time.monotonic() < deadline, "child did not start"
        time.sleep(0.02)
    child_pid = int(pidfile.read_text())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 5
    while _alive(child_pid):
        assert time.monotonic() < deadline, "the optimiser child outlived its parent"
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (dead, not yet reaped by init) counts as gone
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))
