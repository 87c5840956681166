"""Exact tier, first half: the in-process LRU, answered without leaving the caller's thread."""

from __future__ import annotations

import time
from collections.abc import Callable

from semcache.core.memory import MemoryTier
from semcache.pipeline.base import Found, Next, Request
from semcache.stats import Tier
from semcache.stores.base import Entry


class MemoryStage:
    """An exact repeat of a stored request, from memory; ``peek`` is the same check, sync.

    An entry older than the caller's ``s-maxage`` is not served (it stays for other callers),
    nor one ``fresh`` refuses (an answer from a model snapshot that has been replaced).
    """

    def __init__(
        self,
        memory: MemoryTier,
        clock: Callable[[], float] = time.time,
        fresh: Callable[[Entry], bool] | None = None,
    ) -> None:
        self.memory = memory
        self._clock = clock
        self._fresh = fresh  # None: every live entry may be served

    def peek(self, request: Request) -> Found | None:
        """The memory hit for ``request`` (no await: safe from any thread), else None."""
        if not request.decision.lookup:
            return None
        answer = self.memory.get(request.keys.exact)
        if answer is None or not request.control.accepts(answer.entry.created_at, self._clock()):
            return None
        if self._fresh is not None and not self._fresh(answer.entry):
            return None
        return Found(answer, Tier.EXACT)

    async def __call__(self, request: Request, call_next: Next) -> Found:
        found = self.peek(request)
        return found if found is not None else await call_next(request)
