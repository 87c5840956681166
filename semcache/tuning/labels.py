"""Labeled pairs as they are recorded: kept in memory (bounded) and appended to a JSONL file.

The file is what ``semcache calibrate --labels`` reads: one JSON object per line with
``text_a`` (the query), ``text_b`` (the stored question that answered it) and ``label``
(1 right, 0 wrong), plus provenance fields calibrate ignores.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from pathlib import Path

from semcache.tuning.records import LabeledPair


class LabelLog:
    """The most recent ``capacity`` labeled pairs; each also appended to ``path`` if set."""

    def __init__(self, *, capacity: int, path: str | Path | None = None) -> None:
        self._pairs: deque[LabeledPair] = deque(maxlen=capacity)
        self._path = None if path is None else Path(path)
        self._lock = threading.Lock()

    async def add(self, pair: LabeledPair) -> None:
        with self._lock:
            self._pairs.append(pair)
        if self._path is not None:
            await asyncio.to_thread(self._append, pair)

    def _append(self, pair: LabeledPair) -> None:
        line = json.dumps(pair.row(), ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock, self._path.open("a", encoding="utf-8") as handle:  # type: ignore[union-attr]
            handle.write(line)

    def pairs(self) -> list[LabeledPair]:
        """Oldest first."""
        with self._lock:
            return list(self._pairs)

    def __len__(self) -> int:
        return len(self._pairs)
