"""Invalidation that always wins: a purge fences every write that began before it.

A write-behind (or a store hit being copied into memory) that began before a purge may land
after it and bring a withdrawn answer back. Each such operation takes a ``begin()`` token;
a purge records its filter under a new sequence number; an operation may land only if no
purge recorded since its token covers its entry. Chosen over tombstones in the store because
it needs no store support and costs one integer per write; over cancelling pending writes
because a write still embedding its question cannot be found by key. Purges are kept in a
bounded window: an operation older than the window is refused (conservative: it may only
lose a write, never resurrect an answer).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from semcache.stores.base import Entry


@dataclass(frozen=True, slots=True)
class PurgeFilter:
    """Which entries a purge removed: all entries matching every given field (``key``: one
    entry, withdrawn by feedback)."""

    tenant: str | None = None
    namespace: str | None = None
    model: str | None = None
    key: str | None = None
    #: With ``key``: the scope the entry was stored under, so a replica can find it in its
    #: own store (not a filter: ``covers`` ignores it).
    scope: str | None = None

    def covers(self, entry: Entry) -> bool:
        return (
            (self.key is None or entry.key == self.key)
            and (self.tenant is None or entry.tenant == self.tenant)
            and (self.namespace is None or entry.namespace == self.namespace)
            and (self.model is None or entry.model == self.model)
        )


class Fence:
    """Purge sequence numbers and the filters recorded under them (not thread-safe: one loop)."""

    def __init__(self, window: int = 4096) -> None:
        self._seq = 0
        self._purges: deque[tuple[int, PurgeFilter]] = deque(maxlen=window)

    def begin(self) -> int:
        """A token for an operation that may land later."""
        return self._seq

    def record(self, purge: PurgeFilter) -> None:
        self._seq += 1
        self._purges.append((self._seq, purge))

    def admits(self, entry: Entry, token: int) -> bool:
        """May an operation that began at ``token`` still land ``entry``?"""
        if token == self._seq:
            return True
        if not self._purges or self._purges[0][0] > token + 1:
            return False  # purges since the token fell out of the window
        return not any(seq > token and f.covers(entry) for seq, f in self._purges)
