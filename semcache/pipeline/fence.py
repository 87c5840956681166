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

import enum
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from semcache.stats import Stats
from semcache.stores.base import Entry

_log = logging.getLogger("semcache")


class Refusal(enum.StrEnum):
    """Why a fence refused a write (``stats().write_refused`` and the
    ``semcache_write_refused{tier, reason}`` metric)."""

    PURGED = "purged"
    """A purge covering the entry ran after the write began: the purge wins, by design."""
    WITHDRAWN = "withdrawn"
    """The entry's key was withdrawn (a "wrong" verdict, ``drop()``) after the write began."""
    PURGE_LOG_RESET = "purge_log_reset"
    """The purge log lost its history (its keys evicted or deleted, a new log): what was purged
    meanwhile is unknown, so every write that began before is refused."""
    FENCE_WINDOW = "fence_window"
    """More purges ran since the write began than the fence remembers."""
    FENCE_MISSING = "fence_missing"
    """The shared Redis tier's generations for the entry were lost (evicted, deleted, a master
    back empty): it cannot tell what was purged, so it refuses (fails closed)."""


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
        self._purges: deque[tuple[int, PurgeFilter, Refusal]] = deque(maxlen=window)

    def begin(self) -> int:
        """A token for an operation that may land later."""
        return self._seq

    def record(self, purge: PurgeFilter, reason: Refusal | None = None) -> None:
        """Record ``purge``; ``reason``: what a write it refuses is told (by default
        ``withdrawn`` for one key, else ``purged``)."""
        if reason is None:
            reason = Refusal.WITHDRAWN if purge.key is not None else Refusal.PURGED
        self._seq += 1
        self._purges.append((self._seq, purge, reason))

    def refusal(self, entry: Entry, token: int) -> Refusal | None:
        """Why an operation that began at ``token`` may not land ``entry`` (None: it may)."""
        if token == self._seq:
            return None
        if not self._purges or self._purges[0][0] > token + 1:
            return Refusal.FENCE_WINDOW  # purges since the token fell out of the window
        for seq, purge, reason in self._purges:
            if seq > token and purge.covers(entry):
                return reason
        return None

    def admits(self, entry: Entry, token: int) -> bool:
        """May an operation that began at ``token`` still land ``entry``?"""
        return self.refusal(entry, token) is None


#: Seconds between two log lines about refused writes of one tier and reason.
LOG_EVERY_S = 10.0


class Refusals:
    """Counts every refused write by tier and reason (``Stats.refused``) and says so in the
    log: a warning for a reason an operator must look at (a lost history or fence), at most
    one line per tier and reason every ``LOG_EVERY_S`` with the count since the last, so a
    burst of refusals is one line; ``purged``/``withdrawn`` (a purge winning, by design) at
    debug level."""

    def __init__(self, stats: Stats, clock: Callable[[], float] = time.monotonic) -> None:
        self._stats = stats
        self._clock = clock
        self._pending: dict[tuple[str, Refusal], tuple[float, int]] = {}

    def note(self, tier: str, reason: Refusal, key: str) -> None:
        self._stats.refused(tier, reason)
        routine = reason in (Refusal.PURGED, Refusal.WITHDRAWN)
        level = logging.DEBUG if routine else logging.WARNING
        now = self._clock()
        last, count = self._pending.get((tier, reason), (-LOG_EVERY_S, 0))
        count += 1
        if now - last < LOG_EVERY_S:
            self._pending[(tier, reason)] = (last, count)
            return
        self._pending[(tier, reason)] = (now, 0)
        _log.log(
            level,
            "semcache write refused (%s, %s): %d write(s) since the last line, latest key %s; "
            "see stats().write_refused",
            tier,
            reason,
            count,
            key,
        )
