"""On-disk layout of the edge store: ``store.json``, shard generations, sparse copies.

``store.json`` is replaced atomically, so a reader (or a crash) sees the old file or the new
one. A generation is a directory ``shard-NNNNNN``; the one ``store.json`` names is live.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, cast

from semcache.errors import StoreError

META_NAME = "store.json"
META_FORMAT = 1
SHARD_PREFIX = "shard-"
_CHUNK = 1 << 20
RAM_DISK = Path("/dev/shm")
RAM_DISK_MIN_FREE = 1 << 30


def temporary_directory() -> Path:
    """Where a ``":memory:"`` store lives: in RAM (tmpfs) when there is room, else on disk.

    Creating a shard makes ~70 fsyncs, which a busy disk turns into seconds; on tmpfs they
    cost nothing. Containers often give /dev/shm only 64 MiB, hence the free-space check.
    """
    parent = None
    try:
        if os.access(RAM_DISK, os.W_OK) and shutil.disk_usage(RAM_DISK).free >= RAM_DISK_MIN_FREE:
            parent = RAM_DISK
    except OSError:
        parent = None
    try:
        return Path(tempfile.mkdtemp(prefix="semcache-edge-", dir=parent))
    except OSError as exc:
        raise StoreError(f"cannot create a temporary store directory: {exc}") from exc


def generation_name(number: int) -> str:
    return f"{SHARD_PREFIX}{number:06d}"


def next_generation(name: str) -> str:
    return generation_name(int(name.removeprefix(SHARD_PREFIX)) + 1)


def read_meta(root: Path) -> dict[str, Any] | None:
    """The store's metadata, None for a directory that holds no store yet."""
    path = root / META_NAME
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc}") from exc
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StoreError(f"{path} is not valid JSON: {exc}") from exc
    if meta.get("format") != META_FORMAT or not (root / str(meta.get("shard"))).is_dir():
        raise StoreError(f"{path} does not describe a semcache edge store")
    return cast(dict[str, Any], meta)


def write_meta(root: Path, meta: dict[str, Any]) -> None:
    tmp = root / f"{META_NAME}.tmp"
    try:
        with open(tmp, "w") as handle:
            json.dump(meta, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, root / META_NAME)
    except OSError as exc:
        raise StoreError(f"cannot write {root / META_NAME}: {exc}") from exc


def remove_generations(root: Path, keep: str | None) -> None:
    """Drop generations left by an interrupted optimisation or first setup."""
    for child in root.glob(f"{SHARD_PREFIX}*"):
        if child.name != keep and child.is_dir():
            shutil.rmtree(child, ignore_errors=True)


def copy_shard(source: Path, target: Path) -> None:
    """Copy a shard directory keeping files sparse: Qdrant preallocates sparse files, and copying
    only the data extents keeps the copy small and fast.
    """
    try:
        shutil.copytree(source, target, copy_function=_copy_sparse)
    except OSError as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise StoreError(f"cannot copy shard {source} for optimisation: {exc}") from exc


def _copy_sparse(source: str, target: str) -> None:
    if not hasattr(os, "SEEK_DATA"):
        shutil.copy2(source, target)
        return
    with open(source, "rb") as src, open(target, "wb") as dst:
        size = os.fstat(src.fileno()).st_size
        offset = 0
        while offset < size:
            try:
                start = os.lseek(src.fileno(), offset, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # only a hole remains
                    break
                raise
            end = os.lseek(src.fileno(), start, os.SEEK_HOLE)
            while start < end:
                chunk = os.pread(src.fileno(), min(_CHUNK, end - start), start)
                if not chunk:
                    break
                os.pwrite(dst.fileno(), chunk, start)
                start += len(chunk)
            offset = end
        dst.truncate(size)
    shutil.copystat(source, target)


def identity(root: Path, shard: str) -> tuple[int, ...]:
    """(device, inode) of the store directory and of its live shard: they change when either
    is deleted and recreated or replaced. Raises ``OSError`` when either is gone."""
    top, live = os.stat(root), os.stat(root / shard)
    return (top.st_dev, top.st_ino, live.st_dev, live.st_ino)


def checked_identity(root: Path, shard: str) -> tuple[int, ...]:
    """:func:`identity`, with ``OSError`` as :class:`StoreError`."""
    try:
        return identity(root, shard)
    except OSError as exc:
        raise StoreError(f"cannot stat store directory {root}: {exc}") from exc
