"""The hedged race: a semantic lookup refused for the queue, run beside the upstream call.

The one place the answer phase looks up. A lookup the admission gate refused (the
embedder's queue is long) comes here as a miss marked ``hedge``. When the gate expects the
lookup to finish before the upstream answers (:meth:`Admission.hedge`), the upstream call
starts at once, so a miss is no slower than a shed one, and the lookup runs beside it. A
servable hit that arrives first is served and the call cancelled (counted ``hedge_hits``; a
provider may still bill a cancelled call's prompt); when the upstream answers first the
lookup is cancelled and counted as shed. A streaming call that has passed on a chunk is
committed: chunks handed out cannot be taken back. A lookup that misses while the call runs
hands its vector to the in-flight merge (``adopter``), so the question can still follow a
paraphrase in flight, or be followed. Each race reports whether the upstream answered first
(``Admission.hedge_ended``): while nearly every recent hedge lost, hedges pause but for a
probe (counted ``hedges_paused``; the lookup is shed).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from semcache.pipeline.base import Found, Next, Request
from semcache.pipeline.in_flight import CallStart
from semcache.pipeline.lookup import Lookup, Miss
from semcache.pipeline.lookup_result import Lookup as Judged
from semcache.runtime.admission import Admission, Ticket
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats, Tier

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream


class Adopter(Protocol):
    """Where a hedged request joins in-flight merging once its vector is known: the merge
    stage (:meth:`semcache.pipeline.merge.MergeStage.adopt`)."""

    def begin(self) -> CallStart: ...

    async def adopt(
        self, request: Request, running: asyncio.Task[Found], start: CallStart, again: Next
    ) -> Found: ...


class HedgeStage:
    """Races a ``hedge`` miss's lookup against the rest of the answer phase."""

    def __init__(
        self,
        lookup: Lookup,
        admission: Admission,
        failopen: FailOpen,
        stats: Stats,
        adopter: Adopter | None = None,
    ) -> None:
        self._lookup = lookup
        self._admission = admission
        self._failopen = failopen
        self._stats = stats
        self._adopter = adopter

    async def __call__(self, request: Request, call_next: Next) -> Found:
        if not request.hedge:
            return await call_next(request)
        request = replace(request, hedge=False)
        tier = self._lookup.semantic_tier()
        ticket = self._ticket() if tier is not None else None
        if tier is None or ticket is None:
            self._failopen.shed("semantic_lookup")
            return await call_next(request)
        self._stats.count("hedged_lookups")
        committed = False  # a chunk has gone out: the upstream answer is the one
        outer = request.emit

        def emit(chunk: ModelResponseStream) -> None:
            nonlocal committed
            committed = True
            if outer is not None:
                outer(chunk)

        shed = replace(request, emit=emit if outer is not None else None)
        start = self._adopter.begin() if self._adopter is not None else None
        upstream = asyncio.ensure_future(call_next(shed))

        async def lookup() -> Judged | object:
            try:
                return await self._lookup.search(tier, request, ticket.queued)
            finally:
                ticket.leave()

        search = asyncio.ensure_future(lookup())
        try:
            await asyncio.wait({upstream, search}, return_when=asyncio.FIRST_COMPLETED)
            self._admission.hedge_ended(lost=upstream.done())
            if upstream.done():  # the answer came first: the lookup lost, as a shed one
                self._failopen.shed("semantic_lookup")
                self._stats.count("hedge_lost")
                return upstream.result()
            looked = None if search.cancelled() or search.exception() else search.result()
            if not isinstance(looked, Judged):
                return await upstream
            judged = await self._lookup.judged(request, looked, may_serve=not committed)
            if isinstance(judged, Found):
                self._stats.count("hedge_hits")
                await _cancelled(upstream)
                return judged
            missed = judged.request if isinstance(judged, Miss) else request
            adopt = start is not None and not committed and not upstream.done()
            if adopt and start is not None and self._adopter is not None:
                found = await self._adopter.adopt(
                    missed, upstream, start, lambda _: call_next(shed)
                )
                if found.tier is Tier.MERGED or not upstream.done():  # followed a paraphrase
                    self._stats.count("hedge_merges")
                    await _cancelled(upstream)
            else:
                found = await upstream
            if found.tier is Tier.MISS:
                found = replace(found, nearest=missed.nearest, miss_reason=missed.miss_reason)
            return found
        finally:
            search.cancel()
            upstream.cancel()

    def _ticket(self) -> Ticket | None:
        """A hedge's ticket, or None (counted ``hedges_paused`` when recent hedges lost)."""
        paused = self._admission.hedges_paused
        ticket = self._admission.hedge()
        if self._admission.hedges_paused > paused:
            self._stats.count("hedges_paused")
        return ticket


async def _cancelled(task: asyncio.Future[Found]) -> None:
    """Cancel ``task`` and wait until it has unwound (its flight left, its call closed)."""
    task.cancel()
    await asyncio.wait({task})  # never raises the task's error; our own cancellation does
