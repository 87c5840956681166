"""The semantic stage: answer a paraphrase from the nearest stored question in its partition."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from semcache.core.answer import Answer
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Next, Request
from semcache.pipeline.in_flight import CallStart
from semcache.pipeline.lookup_result import Lookup, Search, Verdict
from semcache.pipeline.routed_tier import FALLBACK_WARMING
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.runtime.admission import Admission, Ticket
from semcache.runtime.failopen import FailOpen
from semcache.stats import MissReason, Stats, Tier
from semcache.stores.base import Entry

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream


class Adopter(Protocol):
    """Where a hedged request joins in-flight merging once its vector is known: the merge
    stage (:meth:`semcache.pipeline.merge.MergeStage.adopt`)."""

    def begin(self) -> CallStart: ...

    async def adopt(
        self, request: Request, running: asyncio.Task[Found], start: CallStart, again: Next
    ) -> Found: ...


class SemanticStage:
    """Embed the question, find the nearest live entry, ask the tier's hit rule about it.

    Only requests with a semantic scope (the last message is a user question) are looked up.
    The question's vector and the nearest similarity travel on with the request, so a miss is
    stored without embedding the question again and reports how close it came. A hit is not
    put in memory: memory answers exact repeats of the entry's own key, and the paraphrase's
    key is not that. A match older than the caller's ``s-maxage`` is a miss.

    Admission control bounds what the lookup adds to a miss: it runs only when the
    ``admission`` gate expects it to start within its wait budget (else it is skipped at
    once and counted as shed, kind ``semantic_lookup``), and, with ``deadline_s``, an
    admitted search that takes longer is abandoned the same way (kind ``semantic_deadline``).

    A lookup refused for the queue is raced, not dropped, when ``hedge`` is on and the gate
    expects it to finish before the upstream answers (:meth:`Admission.hedge`): the upstream
    call starts at once, so a miss is no slower than a shed one, and the lookup runs beside
    it. A servable hit that arrives first is served and the call cancelled (counted
    ``hedge_hits``; a provider may still bill a cancelled call's prompt); when the upstream
    answers first the lookup is cancelled and counted as shed, as before. A streaming call
    that has passed on a chunk is committed: chunks handed out cannot be taken back. A hedged
    lookup that misses while the call runs hands its vector to ``adopter`` (the merge
    stage), so the question can still follow a paraphrase in flight, or be followed.
    Each race reports whether the upstream answered first (``Admission.hedge_ended``): while
    nearly every recent hedge lost, hedges pause but for a probe (counted ``hedges_paused``;
    the lookup is shed), so a fast upstream on a busy machine does not pay for lookups that
    cannot win.

    Counted: ``verifier_rejections`` (over the threshold, vetoed by the guard) and, with a
    calibrated scorer, ``scorer_scored`` (candidates the model scored) and
    ``scorer_rejections`` (scored and not served). A hit's score is in ``CacheInfo.score``.
    """

    def __init__(
        self,
        backend: SemanticBackend,
        failopen: FailOpen,
        stats: Stats,
        clock: Callable[[], float],
        *,
        admission: Admission,
        deadline_s: float | None = None,
        fresh: Callable[[Entry], bool] | None = None,
        hedge: bool = True,
        adopter: Adopter | None = None,
    ) -> None:
        self._hedge = hedge
        self._adopter = adopter
        self._fresh = fresh  # None: every live entry may be served
        self._backend = backend
        self._failopen = failopen
        self._stats = stats
        self._clock = clock
        self._admission = admission
        self._deadline_s = deadline_s

    async def __call__(self, request: Request, call_next: Next) -> Found:
        keys = request.keys
        prompt, scope = keys.prompt, keys.scope
        decision = request.decision
        if not (decision.lookup and decision.semantic) or prompt is None or scope is None:
            if request.miss_reason is None:
                reason = MissReason.EXACT_ONLY if decision.lookup else MissReason.BYPASS
                request = replace(request, miss_reason=reason)
            return await call_next(request)
        tier = self._backend.available()  # never waits for the model to load
        if tier is None:
            off = self._backend.tier is None or not self._backend.warming
            reason = MissReason.SEMANTIC_OFF if off else MissReason.WARMING
            return await call_next(replace(request, miss_reason=_earlier(request, reason)))
        if not tier.ready_for(prompt):  # routed, and the fallback's model is still loading
            self._stats.count(FALLBACK_WARMING)
            why = _earlier(request, MissReason.WARMING)
            return await call_next(replace(request, miss_reason=why))
        ticket = self._admission.enter()
        if ticket is None:
            hedge = self._hedge_ticket()
            if hedge is not None:
                return await self._race(tier, request, prompt, scope, hedge, call_next)
            self._failopen.shed("semantic_lookup")
            return await call_next(replace(request, miss_reason=MissReason.SHED))
        try:
            lookup = await self._lookup(tier, request, prompt, scope, ticket.queued)
        finally:
            ticket.leave()
        if lookup is _LATE:
            self._failopen.shed("semantic_deadline")
            return await call_next(replace(request, miss_reason=MissReason.SHED))
        if not isinstance(lookup, Lookup):  # failed (counted by FailOpen)
            return await call_next(replace(request, miss_reason=MissReason.FAILED))
        self._count(lookup)
        hit = self._hit(request, lookup)
        if hit is not None:
            return hit
        return await call_next(
            replace(
                request,
                vector=lookup.vector,
                nearest=lookup.nearest,
                candidate=lookup.candidate,
                miss_reason=_earlier(request, _why_not(lookup, stale=lookup.match is not None)),
            )
        )

    def _hit(self, request: Request, lookup: Lookup) -> Found | None:
        """The lookup's match as a semantic hit, or None when there is none it may serve."""
        match = lookup.match
        if match is None or not self._servable(request, match.entry):
            return None
        return Found(
            Answer.of(match.entry),
            Tier.SEMANTIC,
            match.similarity,
            lookup.nearest,
            score=lookup.score,
        )

    def _hedge_ticket(self) -> Ticket | None:
        """A hedge's ticket, or None (counted ``hedges_paused`` when recent hedges lost)."""
        if not self._hedge:
            return None
        paused = self._admission.hedges_paused
        ticket = self._admission.hedge()
        if self._admission.hedges_paused > paused:
            self._stats.count("hedges_paused")
        return ticket

    async def _race(
        self,
        tier: SemanticTier,
        request: Request,
        prompt: str,
        scope: str,
        ticket: Ticket,
        call_next: Next,
    ) -> Found:
        """The upstream call and a hedged lookup side by side (see the class docstring)."""
        self._stats.count("hedged_lookups")
        committed = False  # a chunk has gone out: the upstream answer is the one
        outer = request.emit

        def emit(chunk: ModelResponseStream) -> None:
            nonlocal committed
            committed = True
            if outer is not None:
                outer(chunk)

        shed = replace(
            request,
            miss_reason=_earlier(request, MissReason.SHED),
            emit=emit if outer is not None else None,
        )
        start = self._adopter.begin() if self._adopter is not None else None
        upstream = asyncio.ensure_future(call_next(shed))

        async def lookup() -> Lookup | object:
            try:
                return await self._lookup(tier, request, prompt, scope, ticket.queued)
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
            if isinstance(looked, Lookup):
                self._count(looked)
                hit = None if committed else self._hit(request, looked)
                if hit is not None:
                    self._stats.count("hedge_hits")
                    await _cancelled(upstream)
                    return hit
            if not isinstance(looked, Lookup):
                return await upstream
            why = _earlier(request, _why_not(looked, stale=looked.match is not None))
            if (
                start is not None
                and self._adopter is not None
                and not committed
                and not (upstream.done())
            ):
                missed = replace(
                    request,
                    vector=looked.vector,
                    nearest=looked.nearest,
                    candidate=looked.candidate,
                    miss_reason=why,
                )
                found = await self._adopter.adopt(
                    missed, upstream, start, lambda _: call_next(shed)
                )
                if found.tier is Tier.MERGED or not upstream.done():  # followed a paraphrase
                    self._stats.count("hedge_merges")
                    await _cancelled(upstream)
            else:
                found = await upstream
            if found.tier is Tier.MISS:
                found = replace(found, nearest=looked.nearest, miss_reason=why)
            return found
        finally:
            search.cancel()
            upstream.cancel()

    async def _lookup(
        self,
        tier: SemanticTier,
        request: Request,
        prompt: str,
        scope: str,
        queued: Callable[[], None],
    ) -> Lookup | object:
        """Search (kind ``semantic_lookup``), then judge the best candidate (kind
        ``semantic_judge``: a failing scorer or extra embedder). A failed judgement is a
        miss that still carries the question's vector, so storing the answer re-embeds
        nothing. Returns None when the search failed, ``_LATE`` past the deadline."""
        namespace = request.control.namespace
        found = await self._failopen.call(
            "semantic_lookup",
            lambda: self._bounded(
                tier.search(
                    prompt,
                    tenant=request.tenant,
                    namespace=namespace,
                    scope=scope,
                    now=self._clock(),
                    queued=queued,
                )
            ),
            None,
        )
        if not isinstance(found, Search):
            return found

        async def through(judge: Callable[[], Awaitable[Verdict]]) -> Verdict:
            return await self._failopen.call("semantic_judge", judge, Verdict(hit=False))

        return await tier.settle(prompt, found, namespace, through)

    def _count(self, lookup: Lookup) -> None:
        if lookup.rejected:
            self._stats.count("verifier_rejections")
            if lookup.match is not None:  # served a next-nearest candidate instead
                self._stats.count("verifier_next_hits")
        if lookup.score is not None:
            self._stats.count("scorer_scored")
            if lookup.match is None:
                self._stats.count("scorer_rejections")

    def _servable(self, request: Request, entry: Entry) -> bool:
        """Not older than the caller's ``s-maxage``, nor from a replaced model snapshot."""
        if self._fresh is not None and not self._fresh(entry):
            return False
        return request.control.accepts(entry.created_at, self._clock())

    async def _bounded(self, search: Awaitable[Search]) -> Search | object:
        """The search, or ``_LATE`` when it outlasts ``deadline_s`` (then it is cancelled)."""
        if self._deadline_s is None:
            return await search
        try:
            async with asyncio.timeout(self._deadline_s):
                return await search
        except TimeoutError:
            return _LATE


async def _cancelled(task: asyncio.Future[Found]) -> None:
    """Cancel ``task`` and wait until it has unwound (its flight left, its call closed)."""
    task.cancel()
    await asyncio.wait({task})  # never raises the task's error; our own cancellation does


def _earlier(request: Request, reason: MissReason) -> MissReason:
    """``failed`` when an earlier tier failed (the shared Redis: it might have held the
    answer), else this tier's own reason: a failure is what the response must show."""
    return MissReason.FAILED if request.miss_reason is MissReason.FAILED else reason


def _why_not(lookup: Lookup, *, stale: bool) -> MissReason:
    """Why a completed lookup served nothing."""
    if stale:
        return MissReason.STALE
    if lookup.nearest is None:
        return MissReason.NO_CANDIDATE
    if lookup.rejected or lookup.score is not None:
        return MissReason.REJECTED
    return MissReason.BELOW_THRESHOLD


#: Marks a lookup abandoned at its deadline (a shed, not a failure of the store).
_LATE = object()
