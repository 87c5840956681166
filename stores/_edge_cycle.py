"""The edge store's optimisation cycle: copy the shard, optimise the copy in a child process,
swap it in and replay the writes made meanwhile, so lookups are answered throughout.

A mixin of :class:`~semcache.stores.edge.QdrantEdgeStore`, kept apart because the cycle's
copy/swap protocol is its own job; the attributes below are the store's state it shares.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from semcache.errors import StoreError

from . import _edge_files as files
from ._edge_engine import edge, engine_errors
from ._edge_optimize import PARENT_VARIABLE

logger = logging.getLogger("semcache.stores.edge")


class OptimizationCycle:
    """Background and on-demand optimisation of the live shard (see the module docstring)."""

    _root: Path | None
    _shard: Any
    _shard_name: str
    _meta: dict[str, Any]
    _io_lock: threading.Lock
    _write_lock: threading.Lock
    _cycle_lock: threading.Lock
    _replay: list[Any] | None
    _unoptimized: int
    _optimizer: threading.Thread | None
    _child: subprocess.Popen[str] | None
    _closing: threading.Event
    _identity: tuple[int, ...] | None
    _optimizer_command: tuple[str, ...]
    _optimize_timeout_s: float

    @property
    def optimizing(self) -> bool:
        """True while an optimisation cycle runs."""
        return self._cycle_lock.locked()

    def wait_optimized(self, timeout: float | None = None) -> bool:
        """Wait for the background cycle; True when it is no longer running."""
        optimizer = self._optimizer
        if optimizer is not None:
            optimizer.join(timeout)
            return not optimizer.is_alive()
        return True

    def optimize(self) -> bool:
        """Run one optimisation cycle now and wait for it (lookups are answered meanwhile).

        Waits for a running cycle first. Returns True when a newly optimised shard was
        swapped in, False when the engine had nothing to do.
        """
        return self._cycle()

    def _start_background_cycle(self) -> None:
        with self._write_lock:
            running = self._optimizer is not None and self._optimizer.is_alive()
            if running or self.optimizing or self._closing.is_set():
                return
            self._optimizer = threading.Thread(
                target=self._background_cycle, name="semcache-edge-optimize", daemon=True
            )
            self._optimizer.start()

    def _background_cycle(self) -> None:
        try:
            self._cycle()
        except StoreError as exc:  # nobody to raise to in this thread; the live shard is intact
            logger.warning("background optimisation of %s failed: %s", self._root, exc)

    def _cycle(self) -> bool:
        with self._cycle_lock:
            return self._run_cycle()

    def _run_cycle(self) -> bool:
        root = self._root
        if root is None or self._closing.is_set():
            raise StoreError("store is not open; call setup() first")
        copy = root / files.next_generation(self._shard_name)
        started = time.perf_counter()
        with self._write_lock:
            with self._io_lock, engine_errors("flush"):
                self._open().flush()
            files.copy_shard(root / self._shard_name, copy)
            self._replay = []
            self._unoptimized = 0
        copied = time.perf_counter()
        try:
            changed = self._optimize_copy(copy)
            optimised = time.perf_counter()
            if not changed or self._closing.is_set():
                return False
            replayed = self._swap_in(root, copy)
            logger.info(
                "optimised %s: copy %.2f s, optimiser %.1f s, swap %.2f s (writes paused during "
                "copy and swap), %d writes replayed",
                copy,
                copied - started,
                optimised - copied,
                time.perf_counter() - optimised,
                replayed,
            )
            return True
        finally:
            with self._write_lock:
                self._replay = None
            if copy.name != self._shard_name:
                shutil.rmtree(copy, ignore_errors=True)

    def _optimize_copy(self, copy: Path) -> bool:
        """Optimise ``copy`` in a child process; True when the engine changed something."""
        command = [*self._optimizer_command, str(copy)]
        try:
            child = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, PARENT_VARIABLE: str(os.getpid())},
            )
        except OSError as exc:
            raise StoreError(f"cannot start the optimiser process: {exc}") from exc
        self._child = child
        if self._closing.is_set():  # close() may have looked for a child just before
            child.kill()
        try:
            out, err = child.communicate(timeout=self._optimize_timeout_s)
        except subprocess.TimeoutExpired as exc:
            child.kill()
            child.communicate()
            raise StoreError(f"optimising {copy} took over {self._optimize_timeout_s} s") from exc
        finally:
            self._child = None
        if self._closing.is_set():
            return False
        if child.returncode != 0:
            raise StoreError(f"optimiser process failed ({child.returncode}): {err.strip()[-500:]}")
        return out.strip() == "optimized"

    def _swap_in(self, root: Path, copy: Path) -> int:
        """Make the optimised ``copy`` live; returns how many writes were replayed onto it."""
        with self._write_lock:
            with engine_errors(f"load {copy}", root):
                fresh = edge().EdgeShard.load(str(copy))
            replay = self._replay or []
            try:
                with engine_errors("replay"):
                    for operation in replay:
                        fresh.update(operation)
                meta = {**self._meta, "shard": copy.name}
                files.write_meta(root, meta)
                identity = files.checked_identity(root, copy.name)
            except BaseException:
                with engine_errors("close copy"):
                    fresh.close()
                raise
            with self._io_lock:
                old, old_name = self._shard, self._shard_name
                self._shard, self._shard_name, self._meta = fresh, copy.name, meta
                self._identity = identity
        with engine_errors("close old shard"):
            old.close()
        shutil.rmtree(root / old_name, ignore_errors=True)
        return len(replay)

    def _open(self) -> Any:
        if self._shard is None:
            raise StoreError("store is not open; call setup() first")
        return self._shard
