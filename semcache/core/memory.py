"""The exact tier's in-process LRU: bounded by entries and bytes, entries expire by wall time.

Thread-safe (one lock; every operation is O(1) except purge). Times come from the injected
``clock`` (wall-clock epoch seconds, the same clock the store's ``expires_at`` uses), so
tests advance a fake clock instead of sleeping.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from semcache.core.answer import Answer


class MemoryTier:
    def __init__(
        self, *, max_entries: int, max_bytes: int, clock: Callable[[], float] = time.time
    ) -> None:
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._clock = clock
        self._entries: OrderedDict[str, Answer] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> Answer | None:
        """The live answer for ``key`` (marked most recently used), else None."""
        with self._lock:
            answer = self._entries.get(key)
            if answer is None:
                return None
            if answer.entry.expires_at <= self._clock():
                self._remove(key)
                return None
            self._entries.move_to_end(key)
            return answer

    def put(self, answer: Answer) -> None:
        size = answer.nbytes
        if self._max_entries == 0 or size > self._max_bytes:
            return
        key = answer.entry.key
        with self._lock:
            if key in self._entries:
                self._remove(key)
            self._entries[key] = answer
            self._bytes += size
            while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
                self._remove(next(iter(self._entries)))

    def purge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        """Drop entries matching every given field (all if none given); return how many."""
        with self._lock:
            doomed = [
                key
                for key, answer in self._entries.items()
                if (e := answer.entry) is not None
                and (tenant is None or e.tenant == tenant)
                and (namespace is None or e.namespace == namespace)
                and (model is None or e.model == model)
            ]
            for key in doomed:
                self._remove(key)
            return len(doomed)

    def discard(self, key: str) -> int:
        """Drop the entry stored under ``key``; return 1 if there was one, else 0."""
        with self._lock:
            if key not in self._entries:
                return 0
            self._remove(key)
            return 1

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def _remove(self, key: str) -> None:
        self._bytes -= self._entries.pop(key).nbytes
