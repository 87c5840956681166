"""Where a replica's own store stands in the purge log: saved beside the store, atomically.

The log's ``epoch`` and the ``last_id`` applied, in the store's own (locked) directory,
replaced by one ``rename``. An older position is always safe: replaying an entry only
removes again what is gone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

#: The file's name inside the store directory.
FILE_NAME = "purge-log.json"


@dataclass(frozen=True, slots=True)
class LogPosition:
    epoch: str
    last_id: str


class PositionFile:
    """``load`` / ``save`` one :class:`LogPosition` at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> LogPosition | None:
        """The saved position, or None (never saved, or unreadable: the caller then treats
        the store as one whose history is unknown, the safe reading)."""
        try:
            data = orjson.loads(self.path.read_bytes())
            return LogPosition(epoch=str(data["epoch"]), last_id=str(data["last_id"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, position: LogPosition) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        data = orjson.dumps({"epoch": position.epoch, "last_id": position.last_id})
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)


def _id(value: bytes | str) -> tuple[int, int]:
    text = value.decode() if isinstance(value, bytes) else value
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def replay_gap(position: LogPosition | None, epoch: str, info: dict[str, Any] | None) -> str | None:
    """Why ``position`` cannot be replayed from (None: it can). ``info`` is the log's
    ``XINFO STREAM`` (None: no log), plus ``trimmed``: the last ID the log trimmed itself."""
    if position is None:
        return "no saved position in the purge log"
    if position.epoch != epoch:
        return "the purge log is a new one (Redis restarted empty or was flushed)"
    if info is None:
        if position.last_id != "0-0":
            return "the purge log is gone"
        return None
    for removed in ("trimmed", "max-deleted-entry-id"):  # trimmed by us, or XDEL
        gone = info.get(removed)
        if gone is not None and _id(gone) > _id(position.last_id):
            return "the purge log was trimmed past this store's position"
    first = info.get("recorded-first-entry-id")
    lost_mark = info.get("trimmed") is None and info.get("entries-added", 0) > info["length"]
    if lost_mark and first is not None and _id(first) > _id(position.last_id):
        # entries were removed but the trim mark is gone: any after ours may be among them
        return "the purge log lost entries and its trim mark; this store's position is older"
    return None
