"""Write-behind: store fresh answers off the response path, purge, and delete expired entries.

A miss's answer goes into memory at once (so the next identical request hits) and into the
store in a background task (so the caller never waits for embedding or the store). Under
overload the store write is dropped (the answer stays in memory) and counted as shed, kind
``store_upsert``: when ``max_pending`` writes are already pending, or when the question
still needs embedding and the embedder's admission gate would not admit a lookup now (a
queue over its wait budget, or the process short of CPU): writes never pile up behind a
busy embedder, where they would take CPU from the requests and delay the lookups.
Pending writes are thus bounded, never a queue that grows with the load. Purges go
through here too, because a purge must win over writes still pending: both share the fence
and a lock around "check the fence, write" and "record the purge, delete".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from semcache.core.answer import Answer, is_complete
from semcache.core.memory import MemoryTier
from semcache.errors import StoreError
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Next, Request
from semcache.pipeline.fence import Fence, PurgeFilter
from semcache.pipeline.semantic_tier import EXACT_ONLY_SCOPE
from semcache.runtime.admission import Admission
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats, Tier
from semcache.stores.base import StoreAdmin

if TYPE_CHECKING:
    import numpy as np


class WriteBehind:
    """Pending writes, the purge fence and the expiry janitor of one cache.

    Runs on the cache's event loop. ``flush()`` waits for every write submitted so far;
    ``close()`` stops the janitor and flushes. Write failures are counted by ``FailOpen``
    (kind ``store_upsert``), never raised to a caller.
    """

    def __init__(
        self,
        backend: SemanticBackend,
        memory: MemoryTier,
        failopen: FailOpen,
        stats: Stats,
        clock: Callable[[], float],
        *,
        purge_interval_s: float,
        embed_gate: Admission,
        max_pending: int = 256,
    ) -> None:
        self._embed_gate = embed_gate
        self._max_pending = max_pending
        self._backend = backend
        self._memory = memory
        self._failopen = failopen
        self._stats = stats
        self._clock = clock
        self._purge_interval_s = purge_interval_s
        self.fence = Fence()
        self._lock = asyncio.Lock()
        self._pending: set[asyncio.Task[None]] = set()
        self._janitor: asyncio.Task[None] | None = None

    def submit(
        self, answer: Answer, *, prompt: str | None, vector: np.ndarray | None, token: int
    ) -> None:
        """Keep ``answer`` in memory now and in the store soon, unless a purge since ``token``.

        ``prompt`` is the question to embed when ``vector`` is None; with neither, the entry
        answers exact lookups only.
        """
        if not self.fence.admits(answer.entry, token):
            self._stats.count("fenced_writes")
            return
        self._memory.put(answer)
        if self._backend.started is None and not self._backend.warming:
            return  # the semantic tier is off or failing: memory alone keeps the answer
        if len(self._pending) >= self._max_pending:
            self._failopen.shed("store_upsert")
            return
        task = asyncio.get_running_loop().create_task(
            self._write_when_ready(answer, prompt, vector, token)
        )
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        self._start_janitor()

    async def _write_when_ready(
        self, answer: Answer, prompt: str | None, vector: np.ndarray | None, token: int
    ) -> None:
        """Wait for a warm-up in progress (answers given while the model loads are stored
        too), then write under the store's timeout."""
        if self._backend.started is None:
            await self._backend.ready()
        await self._failopen.call(
            "store_upsert", lambda: self._write(answer, prompt, vector, token), None
        )

    async def _write(
        self, answer: Answer, prompt: str | None, vector: np.ndarray | None, token: int
    ) -> None:
        tier = self._backend.started
        if tier is None or tier.embedder is None:
            return
        entry = answer.entry
        if vector is None and prompt is not None:
            ticket = self._embed_gate.enter(background=True)
            if ticket is None:
                self._failopen.shed("store_upsert")
                return
            try:
                vector = await tier.embed(prompt)
            finally:
                ticket.leave()
        if vector is None:
            vector = tier.exact_only_vector()
        async with self._lock:
            if not self.fence.admits(entry, token):
                self._stats.count("fenced_writes")
                return
            await tier.upsert(replace(entry, vector=vector, embedder=tier.embedder.name))
        self._stats.count("stored")

    async def purge(self, purge: PurgeFilter) -> int:
        """Delete matching entries everywhere, fencing writes that began before; return a count.

        Store errors are raised here, including a store that cannot be opened (locked by
        another process, unreachable): an operator asked for this, and must know it did not
        reach the store. Memory and the fence are purged first either way. A store without the
        admin operations cannot purge, so nothing is touched then.
        """
        if purge.key is not None:  # one entry, withdrawn by feedback on another replica
            return await self.withdraw(purge.key, lambda: self.expire_stored(purge))
        started = self._backend.started
        if started is not None and not isinstance(started.store, StoreAdmin):
            name = type(started.store).__name__
            raise StoreError(f"{name} cannot purge (no StoreAdmin operations)")
        async with self._lock:
            self.fence.record(purge)
            removed = self._memory.purge(
                tenant=purge.tenant, namespace=purge.namespace, model=purge.model
            )
            tier = self._backend.tier
            if tier is None:
                return removed
            store = await tier.setup()  # raises when the store cannot be opened
            if not isinstance(store, StoreAdmin):
                raise StoreError(f"{type(store).__name__} cannot purge (no StoreAdmin operations)")
            stored = await asyncio.to_thread(
                store.purge, tenant=purge.tenant, namespace=purge.namespace, model=purge.model
            )
            return max(removed, stored)

    async def withdraw(self, key: str, expire: Callable[[], Awaitable[int]]) -> int:
        """Withdraw one entry: fence pending writes of ``key``, drop it from memory, then run
        ``expire`` (which ends it in the store) under the write lock, so no write that began
        before lands after it. Returns how many copies were removed."""
        async with self._lock:
            self.fence.record(PurgeFilter(key=key))
            removed = self._memory.discard(key)
            return removed + await expire()

    async def expire_stored(self, withdrawn: PurgeFilter) -> int:
        """End the one entry ``withdrawn`` names (key, tenant, namespace, scope) in this
        cache's store: re-written with ``expires_at = now``, so a persistent store keeps it
        withdrawn across restarts. On a store every replica shares it is already ended by the
        replica that withdrew it; doing it again is harmless. Returns 1 if it was live."""
        tier = await self._backend.ready()
        if tier is None or tier.store is None or tier.embedder is None:
            return 0
        if withdrawn.key is None or withdrawn.tenant is None or withdrawn.namespace is None:
            return 0
        now = self._clock()
        entry = await tier.retrieve(
            withdrawn.key,
            tenant=withdrawn.tenant,
            namespace=withdrawn.namespace,
            scope=withdrawn.scope or EXACT_ONLY_SCOPE,
            now=now,
        )
        if entry is None:
            return 0
        await tier.upsert(replace(entry, expires_at=now, vector=tier.exact_only_vector()))
        return 1

    async def flush(self) -> None:
        """Wait until every write submitted so far has landed or failed."""
        while self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    def _start_janitor(self) -> None:
        if self._janitor is None:
            self._janitor = asyncio.get_running_loop().create_task(self._purge_expired_forever())

    async def _purge_expired_forever(self) -> None:
        while True:
            await asyncio.sleep(self._purge_interval_s)
            tier = self._backend.started
            if tier is not None and tier.store is not None:
                purge = partial(asyncio.to_thread, tier.store.purge_expired, self._clock())
                await self._failopen.call("purge_expired", purge, 0)

    async def close(self) -> None:
        if self._janitor is not None:
            self._janitor.cancel()
            await asyncio.gather(self._janitor, return_exceptions=True)
            self._janitor = None
        await self.flush()


class WriteBehindStage:
    """After the upstream call: hand a complete, storable answer to :class:`WriteBehind`."""

    def __init__(self, writer: WriteBehind) -> None:
        self._writer = writer

    async def __call__(self, request: Request, call_next: Next) -> Found:
        token = self._writer.fence.begin()  # before the call: a purge during it wins
        found = await call_next(request)
        response = found.response
        if (
            found.tier is Tier.MISS
            and found.storable
            and request.decision.store
            and response is not None
            and is_complete(response)
        ):
            semantic = request.entry_scope != EXACT_ONLY_SCOPE
            prompt = request.keys.prompt if semantic else None
            vector = request.vector if semantic else None
            answer = found.stored if found.stored is not None else found.answer
            self._writer.submit(answer, prompt=prompt, vector=vector, token=token)
        return found
