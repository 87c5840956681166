"""Exact tier, second half: the stored answer for the very same request, by key from the store."""

from __future__ import annotations

from collections.abc import Callable

from semcache._answer import Answer
from semcache._failopen import FailOpen
from semcache._memory import MemoryTier
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Next, Request
from semcache.pipeline.fence import Fence
from semcache.semantic import EXACT_ONLY_SCOPE
from semcache.stats import Tier
from semcache.stores.base import Entry


class ExactStoreStage:
    """Retrieve by the exact key (a store read, no embedding); a hit is kept in memory too,
    unless a purge ran meanwhile (the read raced it; remembering it would undo the purge)."""

    def __init__(
        self,
        backend: SemanticBackend,
        memory: MemoryTier,
        failopen: FailOpen,
        fence: Fence,
        clock: Callable[[], float],
        fresh: Callable[[Entry], bool] | None = None,
    ) -> None:
        self._fresh = fresh  # None: every live entry may be served
        self._backend = backend
        self._fence = fence
        self._memory = memory
        self._failopen = failopen
        self._clock = clock

    async def __call__(self, request: Request, call_next: Next) -> Found:
        if request.decision.lookup:
            tier = await self._backend.ready()
            if tier is not None:
                token = self._fence.begin()  # a purge during the read must not be undone
                entry = await self._failopen.call(
                    "store_retrieve",
                    lambda: tier.retrieve(
                        request.keys.exact,
                        tenant=request.tenant,
                        namespace=request.control.namespace,
                        scope=request.keys.scope or EXACT_ONLY_SCOPE,
                        now=self._clock(),
                    ),
                    None,
                )
                if entry is not None and (self._fresh is None or self._fresh(entry)):
                    answer = Answer.of(entry)
                    if self._fence.admits(entry, token):
                        self._memory.put(answer)
                    return Found(answer, Tier.EXACT)
        return await call_next(request)
