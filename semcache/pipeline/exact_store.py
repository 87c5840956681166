"""Exact tier, second half: the stored answer for the very same request, by key from the store."""

from __future__ import annotations

from collections.abc import Callable

from semcache.core.answer import Answer
from semcache.core.memory import MemoryTier
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Next, Request
from semcache.pipeline.fence import Fence
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.runtime.failopen import FailOpen
from semcache.stats import Tier
from semcache.stores.base import Entry


class ExactStoreStage:
    """Retrieve by the exact key (a store read, no embedding); a hit is kept in memory too,
    unless a purge ran meanwhile (the read raced it; remembering it would undo the purge).

    An entry older than the caller's ``s-maxage`` is a miss. The read is never shed: it is
    one key lookup (microseconds of store work, no embedding), so skipping it saves nothing
    and loses an exact hit. A store that hangs is bounded by ``store.timeout_s`` instead
    (through ``FailOpen``).
    """

    def __init__(
        self,
        backend: SemanticBackend,
        memory: MemoryTier,
        failopen: FailOpen,
        fence: Fence,
        clock: Callable[[], float],
        *,
        fresh: Callable[[Entry], bool] | None = None,
    ) -> None:
        self._fresh = fresh  # None: every live entry may be served (model-change cutoffs)
        self._backend = backend
        self._fence = fence
        self._memory = memory
        self._failopen = failopen
        self._clock = clock

    async def __call__(self, request: Request, call_next: Next) -> Found:
        if request.decision.lookup:
            tier = self._backend.exact()  # never waits for the model to load
            found = await self._read(request, tier) if tier is not None else None
            if found is not None:
                return found
        return await call_next(request)

    async def _read(self, request: Request, tier: SemanticTier) -> Found | None:
        token = self._fence.begin()  # a purge during the read must not be undone
        entry = await self._failopen.call(
            "store_retrieve",
            lambda: tier.retrieve(
                request.keys.exact,
                tenant=request.tenant,
                namespace=request.control.namespace,
                scope=request.entry_scope,
                now=self._clock(),
                prompt=request.keys.prompt,
            ),
            None,
        )
        if entry is None or not request.control.accepts(entry.created_at, self._clock()):
            return None
        if self._fresh is not None and not self._fresh(entry):
            return None
        answer = Answer.of(entry)
        if self._fence.admits(entry, token):
            self._memory.put(answer)
        return Found(answer, Tier.EXACT)
