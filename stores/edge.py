"""The embedded default store: Qdrant's own engine in this process (``qdrant-edge-py``).

Directory layout under ``path``::

    .lock           flock held while the store is open: one process per directory
    store.json      {"format": 1, "embedder": ..., "dim": ..., "shard": "shard-000002"}
    shard-000002/   the live EdgeShard (payload indexes, WAL, segments)

Optimisation never blocks a lookup: ``EdgeShard.optimize()`` holds the GIL and the shard's
lock for seconds, so after ``optimize_every`` writes a background cycle copies the live shard
(writes paused, lookups go on), optimises the copy in a child process
(``_edge_optimize.py``), then loads it, replays the writes made meanwhile and swaps it in,
pointing ``store.json`` at it by atomic rename. A crash at any step leaves ``store.json``
naming a complete shard; other generations are removed at ``setup``.

Integrity: before every write the store checks that its directory and live shard are the
ones it opened (inode numbers); one deleted or replaced underneath is reopened and the event
reported by :meth:`QdrantEdgeStore.integrity`. ``close`` releases the directory even when
the final flush fails.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from semcache.errors import EmbedderMismatchError, StoreError

from . import _edge_files as files
from ._dirlock import DirectoryLock
from ._edge_cycle import OptimizationCycle
from ._edge_engine import (
    create_shard,
    edge,
    engine_errors,
    ensure_indexes,
    expired_filter,
    live_filter,
    selection_filter,
)
from .base import Entry, Integrity, Match, point_id
from .where import Selection, Where

if TYPE_CHECKING:
    import qdrant_edge

logger = logging.getLogger(__name__)

MEMORY = ":memory:"
#: The command that optimises a shard copy (its directory is appended): this interpreter
#: running ``_edge_optimize.py``, which imports qdrant-edge and nothing of semcache.
DEFAULT_OPTIMIZER = (sys.executable, str(Path(__file__).with_name("_edge_optimize.py")))


class QdrantEdgeStore(OptimizationCycle):
    """:class:`~semcache.stores.base.VectorStore` and ``StoreAdmin`` on an embedded Qdrant shard.

    ``path``: store directory, or ``":memory:"`` for a temporary one removed on ``close``.
    ``hnsw_threshold``: points a segment may hold before it gets an HNSW graph (brute force is
    fast enough below). ``optimize_every``: points written that start a background cycle (None:
    call :meth:`optimize`); keep it at least ``hnsw_threshold``. ``optimizer``: the command a
    cycle runs on the shard copy's directory (default :data:`DEFAULT_OPTIMIZER`; a wrapper may
    add ``nice`` or a container). Safe to call from several threads.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        hnsw_threshold: int = 10_000,
        optimize_every: int | None = 10_000,
        optimize_timeout_s: float = 3600.0,
        optimizer: Sequence[str] = DEFAULT_OPTIMIZER,
    ) -> None:
        self._requested_path = str(path)
        self._optimizer_command = tuple(optimizer)
        self._hnsw_threshold = hnsw_threshold
        self._optimize_every = optimize_every
        self._optimize_timeout_s = optimize_timeout_s
        self._root: Path | None = None
        self._lock: DirectoryLock | None = None
        self._shard: Any = None
        self._shard_name = ""
        self._meta: dict[str, Any] = {}
        self._io_lock = threading.Lock()  # every engine call; queries hold the GIL anyway
        self._write_lock = threading.Lock()  # writes and the copy/swap steps of a cycle
        self._cycle_lock = threading.Lock()  # one optimisation cycle at a time
        self._replay: list[Any] | None = None  # writes made while a copy is being optimised
        self._unoptimized = 0
        self._optimizer: threading.Thread | None = None
        self._child: subprocess.Popen[str] | None = None
        self._closing = threading.Event()
        self._identity: tuple[int, ...] | None = None
        self._integrity = Integrity()

    # -- opening and closing ----------------------------------------------------------

    def recorded_embedder(self) -> tuple[str, int] | None:
        if self._requested_path == MEMORY:
            return None
        try:
            meta = files.read_meta(Path(self._requested_path))
        except StoreError:
            return None
        if meta is None:
            return None
        embedder, dim = meta.get("embedder"), meta.get("dim")
        if not isinstance(embedder, str) or isinstance(dim, bool) or not isinstance(dim, int):
            return None
        return embedder, dim

    def setup(self, embedder: str, dim: int) -> None:
        if self._shard is not None:
            self._check_meta(self._meta, embedder, dim)
            return
        self._open_directory(embedder, dim)
        self._closing.clear()

    def _open_directory(self, embedder: str, dim: int) -> None:
        """Open (or create) the store directory and its live shard; clean stale generations."""
        if self._requested_path == MEMORY:
            root = files.temporary_directory()
        else:
            root = Path(self._requested_path)
            try:
                root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create store directory {root}: {exc}") from exc
        lock = DirectoryLock(root)
        lock.acquire()
        shard = None
        try:
            meta = files.read_meta(root)
            if meta is None:
                files.remove_generations(root, keep=None)
                meta = {"format": files.META_FORMAT, "embedder": embedder, "dim": dim}
                meta["shard"] = files.generation_name(1)
                shard = create_shard(root / meta["shard"], dim, self._hnsw_threshold)
                files.write_meta(root, meta)
            else:
                self._check_meta(meta, embedder, dim)
                files.remove_generations(root, keep=meta["shard"])
                with engine_errors("load", root):
                    shard = edge().EdgeShard.load(str(root / meta["shard"]))
                    ensure_indexes(shard)
                    info = shard.info()
                self._unoptimized = info.points_count - info.indexed_vectors_count
            identity = files.checked_identity(root, meta["shard"])
        except BaseException:
            if shard is not None:
                with engine_errors("close"):
                    shard.close()
            lock.release()
            if self._requested_path == MEMORY:
                shutil.rmtree(root, ignore_errors=True)
            raise
        self._root, self._lock, self._shard, self._meta = root, lock, shard, meta
        self._shard_name = meta["shard"]
        self._identity = identity

    def close(self) -> None:
        """Stop a running optimisation, flush, close the shard and release the directory.

        The directory is released and a temporary one removed even when the flush fails
        (that error is raised after, as :class:`StoreError`).
        """
        if self._shard is None:
            return
        self._closing.set()
        child = self._child
        if child is not None and child.poll() is None:
            child.kill()
        if self._optimizer is not None:
            self._optimizer.join()
        try:
            with self._write_lock, self._io_lock:
                shard, self._shard = self._shard, None
                with engine_errors("close"):
                    try:
                        shard.flush()
                    finally:
                        shard.close()
        finally:
            if self._lock is not None:
                self._lock.release()
                self._lock = None
            if self._requested_path == MEMORY and self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    # -- integrity --------------------------------------------------------------------

    def integrity(self) -> Integrity:
        """Times the directory was found deleted or replaced and reopened (``StoreIntegrity``)."""
        return self._integrity

    def _verify_directory(self) -> None:
        """Before a write (under ``_write_lock``): reopen a lost directory. The engine keeps
        its files open, so writes into a deleted or replaced directory would vanish on restart;
        one ``stat`` of the directory and the live shard per write catches both.
        """
        root = self._root
        if root is None or self._shard is None:
            return
        try:
            current = files.identity(root, self._shard_name)
        except OSError:
            current = None
        if current == self._identity:
            return
        problem = f"store directory {root} was deleted or replaced while open"
        logger.warning("%s; reopening it (entries written before are lost)", problem)
        embedder, dim = self._meta["embedder"], self._meta["dim"]
        child = self._child
        if child is not None and child.poll() is None:
            child.kill()  # its copy lived in the lost directory
        with self._io_lock:
            shard, self._shard = self._shard, None
            try:
                with engine_errors("close lost shard"):
                    shard.close()
            except StoreError as exc:
                logger.warning("closing the lost shard failed: %s", exc)
            if self._lock is not None:
                self._lock.release()
                self._lock = None
            self._open_directory(embedder, dim)
        self._integrity = Integrity(
            reopened=self._integrity.reopened + 1,
            last_problem=problem,
            last_at=time.monotonic(),
        )

    @property
    def directory(self) -> Path | None:
        """The store's directory while it is open (for ``":memory:"`` the temporary one)."""
        return self._root

    # -- reads --------------------------------------------------------------------------

    def nearest(self, vector: np.ndarray, where: Where) -> Match | None:
        matches = self.nearest_k(vector, where, 1)
        return matches[0] if matches else None

    def nearest_k(self, vector: np.ndarray, where: Where, k: int) -> list[Match]:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise StoreError(f"k must be an int >= 1, got {k!r}")
        q = edge()
        request = q.QueryRequest(
            limit=k,
            query=q.Query.Nearest(np.asarray(vector, dtype=np.float32).tolist()),
            filter=live_filter(where),
            with_payload=True,
        )
        with self._io_lock, engine_errors("search"):
            points = self._open().query(request)
        matches = [Match(Entry.from_payload(p.payload), similarity=float(p.score)) for p in points]
        return [m for m in map(where.verified, matches) if m is not None]

    def retrieve(self, key: str, where: Where) -> Entry | None:
        with self._io_lock, engine_errors("retrieve"):
            records = self._open().retrieve([point_id(key)], with_payload=True, with_vector=False)
        return where.retrieved(key, Entry.from_payload(records[0].payload) if records else None)

    def count(self) -> int:
        with self._io_lock, engine_errors("count"):
            return int(self._open().count(edge().CountRequest(exact=True)))

    def recent(self, *, tenant: str | None = None, limit: int = 50) -> list[Entry]:
        q = edge()
        request = q.ScrollRequest(
            limit=limit,
            filter=selection_filter(Selection(tenant=tenant)),
            with_payload=True,
            order_by=q.OrderBy("created_at", q.Direction.Desc),
        )
        with self._io_lock, engine_errors("recent"):
            records, _ = self._open().scroll(request)
        return [Entry.from_payload(r.payload) for r in records]

    def indexed_vectors(self) -> int:
        """Vectors in HNSW-indexed segments (the others are searched by brute force)."""
        with self._io_lock, engine_errors("info"):
            return int(self._open().info().indexed_vectors_count)

    # -- writes -------------------------------------------------------------------------

    def upsert(self, entries: Sequence[Entry]) -> None:
        q = edge()
        points = []
        for entry in entries:
            if entry.vector is None:
                raise StoreError(f"entry {entry.key!r} has no vector")
            vector = np.asarray(entry.vector, dtype=np.float32).tolist()
            points.append(q.Point(point_id(entry.key), vector, entry.payload()))
        if points:
            self._write(q.UpdateOperation.upsert_points(points), "upsert", written=len(points))

    def purge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        selection = Selection(tenant=tenant, namespace=namespace, model=model)
        return self._delete_matching(selection_filter(selection))

    def purge_expired(self, now: float) -> int:
        return self._delete_matching(expired_filter(now))

    def _delete_matching(self, selection: qdrant_edge.Filter) -> int:
        q = edge()
        with self._write_lock:  # no write can slip in between the count and the delete
            with self._io_lock, engine_errors("count"):
                found = int(self._open().count(q.CountRequest(exact=True, filter=selection)))
            if found:
                self._apply(q.UpdateOperation.delete_points_by_filter(selection), "purge")
        return found

    def _write(self, operation: Any, name: str, *, written: int = 0) -> None:
        with self._write_lock:
            self._apply(operation, name, written=written)
            every = self._optimize_every
            start_cycle = every is not None and written > 0 and self._unoptimized >= every
        if start_cycle:
            self._start_background_cycle()

    def _apply(self, operation: Any, name: str, *, written: int = 0) -> None:
        """Apply a write; the caller holds ``_write_lock``."""
        self._verify_directory()
        with self._io_lock, engine_errors(name):
            self._open().update(operation)
        if self._replay is not None:
            self._replay.append(operation)
        self._unoptimized += written

    @staticmethod
    def _check_meta(meta: dict[str, Any], embedder: str, dim: int) -> None:
        if (meta.get("embedder"), meta.get("dim")) != (embedder, dim):
            raise EmbedderMismatchError(
                f"store was created with embedder {meta.get('embedder')!r} (dim "
                f"{meta.get('dim')}), not {embedder!r} (dim {dim}); vectors of two models "
                "cannot be compared: use another store path or purge it"
            )
