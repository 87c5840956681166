"""Exact tier, first half: the in-process LRU, answered without leaving the caller's thread."""

from __future__ import annotations

from collections.abc import Callable

from semcache._memory import MemoryTier
from semcache.pipeline.base import Found, Next, Request
from semcache.stats import Tier
from semcache.stores.base import Entry


class MemoryStage:
    """An exact repeat of a stored request, from memory; ``peek`` is the same check, sync."""

    def __init__(self, memory: MemoryTier, fresh: Callable[[Entry], bool] | None = None) -> None:
        self.memory = memory
        self._fresh = fresh  # None: every live entry may be served

    def peek(self, request: Request) -> Found | None:
        """The memory hit for ``request`` (no await: safe from any thread), else None."""
        if not request.decision.lookup:
            return None
        answer = self.memory.get(request.keys.exact)
        if answer is None or (self._fresh is not None and not self._fresh(answer.entry)):
            return None
        return Found(answer, Tier.EXACT)

    async def __call__(self, request: Request, call_next: Next) -> Found:
        found = self.peek(request)
        return found if found is not None else await call_next(request)
