"""Delivery: what the pipeline found becomes the caller's response, tagged and recorded once.

Every answer a caller receives (sync, async, batch, streamed) passes through here, so what was
served (tier counts, savings, hit audit) is recorded in exactly one place.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from dataclasses import replace
from typing import Any, cast

from litellm import ModelResponse
from litellm.types.utils import ModelResponseStream

from semcache.core.answer import as_stream
from semcache.facade.streams import ReplayStream
from semcache.observe.lookups import Observer
from semcache.pipeline.base import Found, Request
from semcache.pipeline.lookup import Miss, Query
from semcache.pipeline.merge_mark import merged_similarity
from semcache.pipeline.path import RequestPath
from semcache.pipeline.shared_flight import from_other_replica
from semcache.stats import CacheHit, CacheInfo, HitAudit, MissReason, Stats, Tier, cache_info


class Delivery:
    def __init__(self, stats: Stats, audit: HitAudit, clock: Callable[[], float]) -> None:
        self._stats = stats
        self._audit = audit
        self._clock = clock

    def info(self, found: Found) -> CacheInfo:
        entry = found.answer.entry
        if not found.tier.is_hit:
            return CacheInfo(
                tier=found.tier,
                key=entry.key,
                nearest_similarity=found.nearest,
                compression_saved_tokens=found.compression_saved_tokens,
                compression_saved_usd=found.compression_saved_usd,
                provider_cached_tokens=found.provider_cached_tokens,
                provider_cached_usd=found.provider_cached_usd,
                private_data=found.private_data,
                miss_reason=found.miss_reason,
                unreadable=found.unreadable,
                routed_to=found.routed_to,
            )
        return CacheInfo(
            tier=found.tier,
            key=entry.key,
            similarity=found.similarity,
            nearest_similarity=found.nearest,
            age_s=max(0.0, self._clock() - entry.created_at),
            saved_cost_usd=found.answer.cost_usd,
            saved_tokens=found.answer.tokens,
            origin=found.origin,
            private_data=found.private_data,
            score=found.score,
            serve_id=found.serve_id,
            unreadable=found.unreadable,
            routed_to=found.routed_to,
        )

    async def lookup(self, path: RequestPath, request: Request) -> CacheHit | CacheInfo:
        """The lookup phase alone (``check``, ``lookup``, LiteLLM's cache slot): the stored
        answer (recorded as served), or the miss's ``CacheInfo`` (recorded as a miss; a
        request the policy keeps out of every tier is not recorded). Never joins or starts
        a flight: a flight that ended in "miss" must never be handed to a ``completion``."""
        if not request.decision.lookup:
            return CacheInfo(Tier.BYPASS, key=request.keys.exact, miss_reason=MissReason.BYPASS)
        looked = await path.lookup(request, may_hedge=False)
        if isinstance(looked, Miss):
            info = missed(looked.request)
            self.record(info)
            return info
        return self.hits([looked])[0]

    async def query(
        self, path: RequestPath, request: Request, query: Query
    ) -> list[CacheHit] | CacheInfo:
        """``check`` with filters, several results or its own threshold
        (:meth:`Lookup.many`): the hits, the first recorded as served, or the miss's
        ``CacheInfo`` (recorded as a miss)."""
        looked = await path.lookup.many(request, query)
        if isinstance(looked, Miss):
            info = missed(looked.request)
            self.record(info)
            return info
        return self.hits(looked)

    def hits(self, found: list[Found]) -> list[CacheHit]:
        """Stored answers as the direct API hands them out; the first recorded as served."""
        hits = [
            CacheHit(f.answer.response(), self.info(f), metadata=f.answer.entry.metadata)
            for f in found
        ]
        self.record(hits[0].info)
        return hits

    def record(self, info: CacheInfo) -> None:
        self._stats.served(info)
        if info.tier.stored and info.key is not None:
            self._audit.record(info.key, info.similarity)

    def deliver(self, found: Found) -> ModelResponse:
        """A private response object for one caller, tagged and recorded."""
        response = found.response if found.response is not None else found.answer.response()
        info = self.info(found)
        self.record(info)
        return tag(response, info)

    def from_memory(
        self, path: RequestPath, observer: Observer, request: Request, name: str, started: int
    ) -> ModelResponse | None:
        """The memory tier's answer to ``request`` delivered and recorded as operation
        ``name``'s (begun at ``started`` ns), or None when memory has none: the one step every
        call takes before any await."""
        found = path.lookup.peek(request)
        if found is None:
            return None
        response = self.deliver(found)
        return observer.answered(name, request.tenant, response, started, stream=request.stream)

    def replay_from_memory(
        self,
        path: RequestPath,
        observer: Observer,
        request: Request,
        started: int,
        name: str = "completion",
    ) -> ReplayStream | None:
        """:meth:`from_memory` for a streaming caller: the memory tier's answer replayed as
        chunks, recorded once as operation ``name``'s; None when memory has none."""
        answer = self.from_memory(path, observer, request, name, started)
        if answer is None:
            return None
        info = cast(CacheInfo, cache_info(answer))  # deliver tags every answer it gives
        return ReplayStream((tag(c, info) for c in as_stream(answer.model_dump())), info)

    async def stream(
        self, path: RequestPath, request: Request
    ) -> AsyncGenerator[ModelResponseStream | CacheInfo, None]:
        """Chunks for a streaming caller; its ``CacheInfo`` is yielded before the first chunk.

        Live chunks (this caller's upstream call, or a flight it joined) are passed on as they
        arrive; an answer found in storage is replayed as chunks. A miss whose provider reported
        prompt-cache tokens yields its final ``CacheInfo`` again after the last chunk (they are
        known only then). Closing the stream early
        cancels this caller's part of the work (a shared flight runs on for the others).
        """
        queue: asyncio.Queue[tuple[ModelResponseStream, bool] | None] = asyncio.Queue()
        live = replace(request, sink=lambda chunk, shared: queue.put_nowait((chunk, shared)))
        task = asyncio.get_running_loop().create_task(path.run(live))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            info = None
            while (item := await queue.get()) is not None:
                chunk, shared = item
                if info is None:
                    info = _live_info(request, chunk, shared)
                    yield info
                yield tag(chunk.model_copy(deep=True) if shared else chunk, info)
            found = await task
            final = self.info(found)
            if info is None:
                yield final
                for chunk in as_stream(found.answer.response().model_dump()):
                    yield tag(chunk, final)
            elif not final.hit and final.provider_cached_tokens:
                yield final
            self.record(final)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)


def missed(request: Request) -> CacheInfo:
    """The ``CacheInfo`` of a lookup that found nothing for ``request`` (as the lookup
    dressed it: miss reason, nearest similarity, the gates' findings)."""
    verdict = request.privacy
    return CacheInfo(
        Tier.MISS,
        key=request.keys.exact,
        nearest_similarity=request.nearest,
        miss_reason=request.miss_reason or MissReason.NO_CANDIDATE,
        private_data=verdict.labels if verdict is not None and verdict.private else (),
        unreadable=request.unreadable,
        routed_to=request.routed_to,
    )


def _live_info(request: Request, chunk: ModelResponseStream, shared: bool) -> CacheInfo:
    """A streaming caller's CacheInfo, from its first live chunk (before the answer is known):
    its own call's, an identical request's flight (``coalesced``, in this process or on
    another replica), or a paraphrase's call that it merged onto (``merged``, with the
    similarity the chunk carries)."""
    if request.decision.bypass:
        return CacheInfo(tier=Tier.BYPASS, key=request.keys.exact)
    similarity = merged_similarity(chunk)
    if similarity is not None:
        if shared:
            return CacheInfo(
                tier=Tier.COALESCED,
                key=request.keys.exact,
                similarity=similarity,
                origin=Tier.MERGED,
            )
        return CacheInfo(tier=Tier.MERGED, key=request.keys.exact, similarity=similarity)
    if shared or from_other_replica(chunk):  # a live flight: its leader is calling upstream
        return CacheInfo(tier=Tier.COALESCED, key=request.keys.exact, origin=Tier.MISS)
    return CacheInfo(tier=Tier.MISS, key=request.keys.exact)


def tag(response: Any, info: CacheInfo) -> Any:
    """Attach ``info`` where ``cache_info`` and LiteLLM's own tooling look for it."""
    hidden = getattr(response, "_hidden_params", None)
    if not isinstance(hidden, dict):
        hidden = {}
        response._hidden_params = hidden
    hidden["semcache"] = info
    hidden["cache_hit"] = info.hit
    return response
