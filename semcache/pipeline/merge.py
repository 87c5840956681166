"""Approximate in-flight merge: a paraphrase waits for the upstream call already asking it.

Sits right after the semantic stage, so it sees only requests that missed the store, with
their question's vector. A miss whose question is, by the semantic tier's one hit rule
(:meth:`SemanticTier.judge`: same threshold, guard and scorer), equivalent to a question whose
upstream call is in flight *in the same partition* (tenant, namespace and scope; the scope
covers the model, the parameters and the conversation before the question) follows that
call instead of making its own; its answer is tagged ``merged`` with the similarity. Exactly
as a semantic hit would have served the leader's answer had it been stored a moment earlier,
and no more: in-flight questions are judged as stored ones are (the nearest; when the guard
vetoes it, up to ``semantic.guard_candidates`` next nearest over the threshold), and only
calls whose answer would be stored in the semantic tier can be followed. A leader stays
followable after its call until its store write lands, so no paraphrase falls in between.

Everything else leads: it registers its question (when it may be followed), waits out the
gathering window, and calls the rest of the chain in a flight of its own that followers join
through the coalescer (so streams fan out live, with replay, as for identical requests).

A follower falls back to its own call when the leader fails, is fenced by a purge, or its
answer is not servable (not storable, cut off, from a replaced model snapshot). A streaming
follower can do so only before it has passed on a chunk: after that it shares the leader's
outcome, as an identical request's follower does (chunks handed out cannot be taken back).
With replicas sharing a Redis (``redis.coalesce``), a miss that finds no leader to follow
here asks for the nearest question in flight in any replica (:mod:`semcache.pipeline.shared_merge`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from semcache.core.coalesce import Coalescer, Role
from semcache.pipeline import hit_rule
from semcache.pipeline.adopted import Adopted, answers_first
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Emit, Found, Next, Request
from semcache.pipeline.fence import Fence
from semcache.pipeline.gather import GatherWindow
from semcache.pipeline.hit_rule import Candidate
from semcache.pipeline.in_flight import CallStart, InFlight, InFlightQuestion, Partition, unit
from semcache.pipeline.merge_choose import Chooser
from semcache.pipeline.merge_mark import pass_on
from semcache.pipeline.merge_servable import Servable
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats, Tier

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream

    from semcache.pipeline.shared_merge import SharedMerge
    from semcache.replicas.inflight import Published
    from semcache.stores.base import Entry


class MergeStage:
    """Follow an in-flight paraphrase's call, or lead (after the gathering window)."""

    def __init__(
        self,
        backend: SemanticBackend,
        coalescer: Coalescer[Found, ModelResponseStream],
        fence: Fence,
        stats: Stats,
        window: GatherWindow,
        failopen: FailOpen,
        *,
        merge: bool = True,
        fresh: Callable[[Entry], bool] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        clock: Callable[[], float] = time.time,
        shared: SharedMerge | None = None,
        follow_budget_s: Callable[[], float] = lambda: 0.0,
        landing: Callable[[str], asyncio.Task[str] | None] = lambda _: None,
    ) -> None:
        self._backend = backend
        self._coalescer = coalescer
        self._fence = fence
        self._stats = stats
        self._failopen = failopen
        self._window = window
        self._merge = merge
        self._servable = Servable(fence, fresh, clock)
        self._monotonic = monotonic
        self._shared = shared  # None: merge within this process only
        self.in_flight = InFlight()
        self._choose = Chooser(self.in_flight, failopen, stats)
        #: Leaders whose call may still switch to a paraphrase's earlier one (see _switch).
        self._offers: dict[object, asyncio.Future[InFlightQuestion]] = {}
        self._follow_budget_s = follow_budget_s  # how much later a leader's call may begin
        self._landing = landing  # the pending store write of a key (WriteBehind.landing)

    async def __call__(self, request: Request, call_next: Next) -> Found:
        if not request.decision.coalesce:  # no-cache or a sampling request: never shares
            return await call_next(request)
        return await self._take_part(request, call_next, self._partition(request), None)

    def begin(self) -> CallStart:
        """When a call starts now, for :meth:`adopt` (a purge after its token is seen)."""
        return CallStart(self._fence.begin(), self._monotonic())

    async def adopt(
        self, request: Request, running: asyncio.Task[Found], start: CallStart, again: Next
    ) -> Found:
        """Take part once the vector is known, for a call that started without one.

        A hedged lookup's request (:mod:`semcache.pipeline.hedge`) went upstream before its
        question was embedded, so it could neither follow nor be followed. When its lookup misses
        while the call still runs, the question is judged against the paraphrases in flight
        as any miss is, and it follows one or becomes followable itself, ``running``
        standing for its call (no gathering hold: the call is already under way). ``start``:
        :meth:`begin` at the call's start, so a purge since then keeps followers off its
        answer. Streaming requests are not adopted: their call already passes chunks on.

        Following, it cancels ``running`` at once when the leader's call began at most
        ``follow_budget_s`` (the admission wait budget) after its own: the call is saved,
        the answer comes at most that much later. (Paraphrases that arrive together are
        hedged together and the first lookup to end leads: racing, a follower whose call
        began a few ms earlier took its own answer, and both calls were paid.) Otherwise
        the first answer wins; ``again`` calls anew when a leader cancelled for fails.
        """

        async def rest(_: Request) -> Found:
            return await running

        partition = self._partition(request)
        if not request.decision.coalesce or request.stream or partition is None:
            return await running
        adopted = Adopted(running, start, again)
        return await self._take_part(request, rest, partition, start.token, adopted)

    async def _take_part(
        self,
        request: Request,
        call_next: Next,
        partition: Partition | None,
        token: int | None,
        adopted: Adopted | None = None,
    ) -> Found:
        """Follow a paraphrase in flight (here, then in other replicas), or lead."""
        if partition is not None and request.decision.lookup and request.vector is not None:
            vector = unit(request.vector)
            found = await self._follow(request, call_next, partition, vector, token, adopted)
            if found is None and self._shared is not None:
                seen = self.in_flight.added
                found = await self._follow_shared(request, partition, vector)
                if found is None and self.in_flight.added != seen:  # a leader began here
                    found = await self._follow(
                        request, call_next, partition, vector, token, adopted
                    )
            if found is not None:
                return found
        start = adopted.start if adopted is not None else None
        return await self._lead(request, call_next, partition, token, start)

    async def _follow_shared(
        self, request: Request, partition: Partition, vector: np.ndarray
    ) -> Found | None:
        """Another replica's paraphrase in flight (see :mod:`semcache.pipeline.shared_merge`)."""
        tier, shared = self._backend.started, self._shared
        if tier is None or shared is None:
            return None
        emit = request.emit if request.stream else None
        return await shared.follow(request, partition, vector, tier, emit)

    def _partition(self, request: Request) -> Partition | None:
        """Where this request's question is compared, or None when it takes no part."""
        scope = request.keys.scope
        tier = self._backend.started
        prompt = request.keys.prompt
        if not self._merge or tier is None or prompt is None or scope is None:
            return None
        embedder = tier.lane(prompt).embedder  # vectors of two embedders are never compared
        if not request.decision.semantic or embedder is None:
            return None
        return (request.tenant, request.control.namespace, scope, embedder.name)

    async def _lead(
        self,
        request: Request,
        call_next: Next,
        partition: Partition | None,
        token: int | None = None,
        start: CallStart | None = None,
        offer: asyncio.Future[InFlightQuestion] | None = None,
    ) -> Found:
        """Lead a flight of the rest of the chain; ``token`` set: the call already runs
        (:meth:`adopt`), begun at that fence token (at ``start``), so there is no
        gathering hold. ``offer``: a leader whose call began later, offered this one's
        (:meth:`_switch`)."""
        key = object()  # nobody joins by accident: only through the index
        delay = 0.0 if token is not None else self._window.delay_s()
        started = start.at if start is not None else self._monotonic() + delay
        # Followable only when the answer would be stored in the semantic tier.
        followable = partition is not None and request.decision.store
        published: asyncio.Task[Published | None] | None = None
        question: InFlightQuestion | None = None
        if followable and partition is not None and request.vector is not None:
            question = InFlightQuestion(
                key,
                request.keys.prompt or "",
                unit(request.vector),
                self._fence.begin() if token is None else token,
                started,
            )
            self.in_flight.add(partition, question)
            if self._shared is not None:  # in the background: the call does not wait for it
                published = self._shared.publish_soon(request, partition, question.vector)
        outer = request.emit if request.stream else None

        async def execute(emit: Emit) -> Found:
            def both(chunk: ModelResponseStream) -> None:
                emit(chunk)
                if outer is not None:
                    outer(chunk)

            try:
                if token is not None:  # adopted: the call is under way, not timed from here
                    return await call_next(request)
                call = self._call(request, call_next, delay, both if outer else None)
                if question is None or partition is None or outer is not None:
                    return await call
                offered = self._offers[key] = asyncio.get_running_loop().create_future()
                running = asyncio.ensure_future(call)
                try:
                    await asyncio.wait({running, offered}, return_when=asyncio.FIRST_COMPLETED)
                    if running.done():
                        return running.result()
                    return await self._switch(
                        request, call_next, partition, question, offered.result(), running
                    )
                finally:
                    running.cancel()
            finally:  # before the flight's result is visible: nobody follows a finished call
                self._offers.pop(key, None)
                if partition is not None:
                    self.in_flight.remove(partition, key)

        try:
            async with self._coalescer.subscribe(key, execute) as flight:
                if offer is not None and question is not None and not offer.done():
                    offer.set_result(question)  # our flight exists: the other may join it
                found = await flight.result()
        finally:  # a flight cancelled before its first step never ran execute's finally
            if partition is not None:
                self.in_flight.remove(partition, key)
            if published is not None and self._shared is not None:
                # After the result: a replica that finds it meanwhile finds the stored answer.
                self._shared.withdraw_soon(published)
        if question is not None and partition is not None:
            self._land(partition, question, found)
        return found

    def _land(self, partition: Partition, question: InFlightQuestion, found: Found) -> None:
        """Keep a finished leader followable until its store write lands.

        Between the end of the call and the write landing (embedding, group commit), a
        paraphrase finds the answer neither in the store nor in flight, and would pay for an
        upstream call a moment later would have saved. Replicas sharing Redis already closed
        it (their follower finds the leader's stored answer)."""
        landing = self._landing((found.stored or found.answer).entry.key)
        if landing is None or landing.done() or not self._servable(found, question.token):
            return
        self.in_flight.add(partition, replace(question, landed=found))
        landing.add_done_callback(lambda _: self.in_flight.remove(partition, question.key))

    async def _follow(
        self,
        request: Request,
        call_next: Next,
        partition: Partition,
        vector: np.ndarray,
        token: int | None = None,
        adopted: Adopted | None = None,
    ) -> Found | None:
        """The leader's answer, a fallback of our own, or None when there is nobody to follow.
        ``adopted``: an adopted request's call (already running), when it began, and how to
        call anew. Its call is cancelled at once for a leader whose call began within the
        follow budget after it; for a leader whose call began later, it leads and offers
        the leader its own call (:meth:`_switch`) when the leader may take it; otherwise,
        when it answers before the leader, its answer is taken. See :meth:`adopt`."""
        own = adopted.running if adopted is not None else None
        tier = self._backend.started
        if tier is None:
            return None
        chosen = await self._choose(tier, request, partition, vector)
        if chosen is None:
            return None
        leader, similarity = chosen
        start = adopted.start if adopted is not None else None
        if adopted is not None and leader.landed is None:
            if leader.started <= adopted.start.at + self._follow_budget_s():
                adopted.running.cancel()  # the leader's answer comes soon enough: save our call
                self._stats.count("hedge_early_follows")
                own, call_next, token, start = None, adopted.again, None, None
            elif (offer := self._offers.get(leader.key)) is not None and not offer.done():
                self._stats.count("hedge_leads")  # ours began first: the leader may follow it
                return await self._lead(request, call_next, partition, token, start, offer)
        found = await self._join(request, call_next, leader, similarity, own)
        if found is not None:
            return found
        self._stats.count("merge_fallbacks")
        return await self._lead(request, call_next, partition, token, start)

    async def _join(
        self,
        request: Request,
        call_next: Next,
        leader: InFlightQuestion,
        similarity: float,
        own: asyncio.Task[Found] | None = None,
    ) -> Found | None:
        """``leader``'s answer as a merged one; our own when ``own`` (an adopted request's
        running call) answers first or max_wait gave up on the leader; None when the
        leader's answer may not be served (failed, purged, cut off, not storable)."""
        passed_on = 0
        if leader.landed is not None:  # finished, its write not landed yet: no flight to join
            found: Found | None = leader.landed
        else:
            outer = request.emit if request.stream else None

            async def alone(emit: Emit) -> Found:  # only when max_wait gives up on the leader
                return await call_next(replace(request, emit=emit if outer else None))

            flight = self._coalescer.join(leader.key, alone)
            if flight is None:  # pragma: no cover - the index drops a leader before its flight
                return None
            async with flight:
                purged = lambda: self._fence.begin() != leader.token  # noqa: E731
                passed_on = await pass_on(flight, outer, purged, similarity)
                if own is not None and await answers_first(own, flight):
                    return await own  # our own call (adopted) answered before the leader's
                ok = await flight.settled()
                if flight.role is Role.ALONE:
                    return await flight.result()  # our own call (max_wait gave up on the leader)
                found = await flight.result() if ok or passed_on else None
        if found is None or not (passed_on or self._servable(found, leader.token)):
            return None
        answer = found.stored if found.stored is not None else found.answer
        return Found(answer, Tier.MERGED, similarity=similarity, nearest=request.nearest)

    async def _call(
        self, request: Request, call_next: Next, delay: float, emit: Emit | None
    ) -> Found:
        """A leader's call, after its gathering hold."""
        if delay > 0:
            self._stats.count("gather_holds")
            await asyncio.sleep(delay)
        return await call_next(replace(request, emit=emit))

    async def _switch(
        self,
        request: Request,
        call_next: Next,
        partition: Partition,
        question: InFlightQuestion,
        other: InFlightQuestion,
        running: asyncio.Task[Found],
    ) -> Found:
        """A leader offered ``other``'s call, which began before its own (``running``, in
        its gathering hold or under way): a hedged paraphrase's, whose lookup missed after
        this leader registered. Racing, the earlier call would answer first and both would
        be paid.

        The leader judges ``other`` by the hit rule (that it was judged a hit the other way
        round is not enough); on a hit, when nobody follows it yet (its followers judged it,
        not the other) and neither call has answered meanwhile, it cancels its own call,
        leaves the index, and follows ``other``'s; it calls anew if that one fails. A
        streaming leader is never offered one: its call may already pass chunks on."""
        tier = self._backend.started
        similarity = float(np.dot(question.vector, other.vector))
        namespace = request.control.namespace
        if tier is None:
            return await running
        candidate = Candidate(other, other.prompt, similarity)
        choice = await hit_rule.choose(
            tier, question.prompt, namespace, [candidate], through=self._choose.through
        )
        busy = self._coalescer.waiters(question.key) > 1  # somebody follows it
        ended = self._coalescer.waiters(other.key) == 0  # it answered while we judged
        if choice.chosen is None or running.done() or busy or ended:
            return await running
        running.cancel()
        self.in_flight.remove(partition, question.key)
        self._stats.count("merge_switches")
        found = await self._join(request, call_next, other, similarity)
        if found is not None:
            return found
        self._stats.count("merge_fallbacks")
        return await call_next(replace(request, emit=None))
