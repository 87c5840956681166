"""An exclusive, non-blocking lock on a store directory, held while a store is open.

``flock`` locks belong to an open file description, so a second store in the same process is
refused too, and the kernel drops the lock when the holder dies (no stale locks). The pid in
the file only makes the refusal message useful.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from semcache.errors import StoreError, StoreLockedError

LOCK_NAME = ".lock"


class DirectoryLock:
    """``acquire()`` raises :class:`StoreLockedError` at once when another holder exists."""

    def __init__(self, directory: Path) -> None:
        self._path = directory / LOCK_NAME
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        try:
            handle = open(self._path, "a+")  # noqa: SIM115 - held open for the store's lifetime
        except OSError as exc:
            raise StoreError(f"cannot open lock file {self._path}: {exc}") from exc
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise StoreLockedError(locked_message(self._path.parent, holder)) from exc
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._file = handle

    def release(self) -> None:
        if self._file is None:
            return
        fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
        self._file.close()
        self._file = None


def locked_message(directory: Path, holder: str) -> str:
    """The refusal text: says why and what to do instead."""
    return (
        f"store.path {directory} is held by another process (pid {holder}): the embedded "
        "store serves one process per directory. Give each process its own store.path "
        "(SEMCACHE_STORE__PATH), or share one cache between processes or hosts: "
        'store.backend = "redis" with redis.url (Redis 8; SEMCACHE_STORE__BACKEND=redis '
        'SEMCACHE_REDIS__URL=redis://host:6379/0), or store.backend = "qdrant" with store.url.'
    )
