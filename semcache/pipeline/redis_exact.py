"""Exact tier, shared half: stored answers in Redis, between memory and the local store.

Reading and writing are two stages because they sit at different places in the chain: the
read runs early (any replica's answer is a hit here), the write runs right after the fresh
answer is made and *before* the cross-replica flight announces it, so whoever is told an
answer exists (or arrives after its lease is released) finds it stored.
"""

from __future__ import annotations

from dataclasses import replace

from semcache.core.answer import Answer, is_complete
from semcache.core.coalesce import Coalescer
from semcache.core.memory import MemoryTier
from semcache.core.model_watch import ModelWatch, snapshot_of
from semcache.pipeline.base import Found, Next, Request
from semcache.pipeline.fence import Fence
from semcache.replicas.exact import RedisExact
from semcache.replicas.purges import PurgeLog
from semcache.runtime.failopen import FailOpen
from semcache.stats import MissReason, Stats, Tier
from semcache.stores.base import Entry


class _Failed:
    """The Redis read failed (not a miss): the request goes on with miss reason ``failed``."""


FAILED = _Failed()


class RedisReadStage:
    """An exact repeat answered from Redis; the hit is kept in memory too unless a purge ran
    meanwhile (the local fence, as for the local store). Starts following the purge log
    first, so this replica hears of purges before it remembers anything.

    The exact key includes tenant and namespace, so requests sharing a read always share a
    partition."""

    def __init__(
        self,
        exact: RedisExact,
        log: PurgeLog,
        memory: MemoryTier,
        failopen: FailOpen,
        fence: Fence,
        watch: ModelWatch,
    ) -> None:
        self._watch = watch
        self._exact = exact
        self._log = log
        self._memory = memory
        self._failopen = failopen
        self._fence = fence
        # Concurrent reads of one key share one GET: a burst of identical requests costs
        # Redis one round trip (and one connection) per replica, not one per request.
        self._reads: Coalescer[Entry | _Failed | None, None] = Coalescer()

    async def __call__(self, request: Request, call_next: Next) -> Found:
        await self._log.started()
        if not request.decision.lookup:
            return await call_next(request)
        token = self._fence.begin()

        async def read(_: object) -> Entry | _Failed | None:
            return await self._failopen.call(
                "redis_get",
                lambda: self._exact.get(
                    request.keys.exact,
                    tenant=request.tenant,
                    namespace=request.control.namespace,
                    model=request.keys.model,
                ),
                FAILED,
            )

        entry = (await self._reads.do(request.keys.exact, read)).value
        if isinstance(entry, _Failed):  # counted by FailOpen; the response says so too
            return await call_next(replace(request, miss_reason=MissReason.FAILED))
        if entry is None or not self._watch.fresh(entry):
            return await call_next(request)
        answer = Answer.of(entry)
        # remembered only once the purge log is followed: a purge meanwhile might miss memory
        if self._log.synced and self._fence.admits(entry, token):
            self._memory.put(answer)
        return Found(answer, Tier.EXACT)


class RedisWriteStage:
    """Store a fresh, complete answer in Redis, unless a purge covering it ran since the
    request began (checked atomically in Redis against the generations read here first)."""

    def __init__(
        self,
        exact: RedisExact,
        log: PurgeLog,
        failopen: FailOpen,
        stats: Stats,
        watch: ModelWatch,
    ) -> None:
        self._exact = exact
        self._log = log
        self._failopen = failopen
        self._stats = stats
        self._watch = watch

    async def __call__(self, request: Request, call_next: Next) -> Found:
        if not request.decision.store:
            return await call_next(request)
        token = await self._failopen.call(
            "redis_begin",
            lambda: self._exact.begin(
                request.keys.exact,
                tenant=request.tenant,
                namespace=request.control.namespace,
                model=request.keys.model,
            ),
            None,
        )
        found = await call_next(request)
        response = found.response
        if (
            token is not None
            and found.tier is Tier.MISS
            and found.storable
            and response is not None
            and is_complete(response)
        ):
            entry = (found.stored or found.answer).entry  # masked when the privacy gate says so
            result = await self._failopen.call(
                "redis_put",
                lambda: self._exact.put(
                    entry,
                    token,
                    snapshot=snapshot_of(response),
                    invalidate=self._watch.invalidate,
                ),
                None,
            )
            if result is not None:
                stored, changed = result
                self._stats.count("redis_stored" if stored else "redis_fenced_writes")
                if changed:  # decided in Redis for everyone; tell the replicas' watches
                    self._stats.count("redis_model_changes")
                    self._watch.mark(entry.model, entry.created_at)
                    await self._failopen.call(
                        "redis_publish",
                        lambda: self._log.publish_model_change(entry.model, entry.created_at),
                        None,
                    )
        return found
