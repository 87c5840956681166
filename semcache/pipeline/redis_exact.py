"""Exact tier, shared half, written: a fresh answer stored in Redis for every replica.

The lookup reads it (:mod:`semcache.pipeline.lookup`: any replica's answer is a hit there);
this stage writes right after the fresh answer is made and *before* the cross-replica flight
announces it, so whoever is told an answer exists (or arrives after its lease is released)
finds it stored.
"""

from __future__ import annotations

from semcache.core.answer import is_complete
from semcache.core.model_watch import ModelWatch, snapshot_of
from semcache.pipeline.base import Found, Next, Request
from semcache.pipeline.fence import Refusals
from semcache.replicas.exact import RedisExact
from semcache.replicas.purges import PurgeLog
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats, Tier


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
        self._refusals = Refusals(stats)

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
                stored, changed, refused = result
                self._stats.count("redis_stored" if stored else "redis_fenced_writes")
                if refused is not None:
                    self._refusals.note("redis_exact", refused, entry.key)
                if changed:  # decided in Redis for everyone; tell the replicas' watches
                    self._stats.count("redis_model_changes")
                    self._watch.mark(entry.model, entry.created_at)
                    await self._failopen.call(
                        "redis_publish",
                        lambda: self._log.publish_model_change(entry.model, entry.created_at),
                        None,
                    )
        return found
