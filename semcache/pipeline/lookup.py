"""The lookup phase: a stored answer for a request, or what the request learned on the way.

``Lookup(request)`` reads top-down and never calls the upstream: the private-data gate, the
readability and window gates, the exact tiers (memory, the Redis shared by replicas, the
store), then the semantic tier (admission, embed, the nearest live entries in the request's
partition, the hit rule). It returns the hit as a :class:`Found`, or a :class:`Miss` holding
the request as the gates narrowed it and the lookup dressed it (the question's vector, the
nearest similarity, the candidate, the miss reason), which the answer phase takes on.

Every entry point looks up through this one object: ``completion`` (sync, async, streams,
batches; inside the exact key's flight, see :mod:`semcache.pipeline.path`), ``check`` and
``lookup`` of the direct API (``check`` with filters, several results or a threshold of its
own: :meth:`Lookup.many`, through the same gates), LiteLLM's cache slot and the proxy. So
a ``check`` can never serve what ``completion`` would not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from semcache.core.answer import Answer
from semcache.core.coalesce import Coalescer
from semcache.core.memory import MemoryTier
from semcache.errors import InvalidRequest
from semcache.pipeline import hit_rule
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Request
from semcache.pipeline.fence import Fence
from semcache.pipeline.hit_rule import Candidate, PerCallRule
from semcache.pipeline.lookup_result import Lookup as Judged
from semcache.pipeline.lookup_result import Search, Verdict
from semcache.pipeline.privacy import QuestionGate
from semcache.pipeline.readability import ReadabilityGate
from semcache.pipeline.routed_tier import FALLBACK_WARMING
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.runtime.admission import Admission
from semcache.runtime.failopen import FailOpen
from semcache.stats import MissReason, Stats, Tier
from semcache.stores.base import Entry, Match
from semcache.stores.where import Where, metadata_matches

if TYPE_CHECKING:
    from semcache.replicas.exact import RedisExact
    from semcache.replicas.purges import PurgeLog
    from semcache.tuning.misses import NearMisses
    from semcache.tuning.stage import Serves


@dataclass(frozen=True, slots=True)
class Miss:
    """No tier answered: ``request`` is what the answer phase continues with (its decision
    narrowed by the gates; vector, nearest, candidate and miss reason from the lookup;
    ``hedge`` when the semantic lookup was refused for the queue and may still race the
    upstream call)."""

    request: Request


Filters = tuple[tuple[str, tuple[str | int, ...]], ...]
"""Metadata filters as the store takes them (:func:`semcache.stores.where.metadata_filters`)."""


@dataclass(frozen=True, slots=True)
class Query:
    """``check``'s options (:meth:`Lookup.many`): metadata ``filters``, up to ``k`` hits,
    this call's cosine ``threshold`` and whether it may be looser than the served one."""

    filters: Filters = ()
    k: int = 1
    threshold: float | None = None
    allow_looser: bool = False


@dataclass(frozen=True, slots=True)
class Shared:
    """The Redis exact tier shared by replicas, with the purge log it follows."""

    exact: RedisExact
    log: PurgeLog


class _Failed:
    """A Redis read failed (not a miss): the request goes on with miss reason ``failed``."""


_FAILED = _Failed()
_LATE = object()  # a semantic search abandoned at its deadline (a shed, not a failure)


class Lookup:
    """The lookup phase over the cache's services (see the module docstring).

    Exact tiers: an entry older than the caller's ``s-maxage`` is not served, nor one
    ``fresh`` refuses (an answer from a replaced model snapshot). A hit from Redis or the
    store is kept in memory too, unless a purge ran meanwhile (the read raced it; remembering
    it would undo the purge); from Redis only once this replica follows the purge log. The
    store read is never shed (one key, no embedding); a hanging store is bounded by
    ``FailOpen``.

    Semantic tier: only a request with a semantic scope (the last message is a user
    question) is looked up. It runs only when ``admission`` expects it to start within its
    wait budget (else it is shed at once, kind ``semantic_lookup``, or, with ``hedge``, left
    to race the upstream call: :mod:`semcache.pipeline.hedge`); with ``deadline_s`` an
    admitted search that takes longer is abandoned the same way (kind
    ``semantic_deadline``). A semantic hit is not put in memory (memory answers exact repeats
    of the entry's own key), gets a serve id, and is counted: ``verifier_rejections``,
    ``verifier_next_hits``, ``scorer_scored``, ``scorer_rejections``.
    """

    def __init__(
        self,
        *,
        memory: MemoryTier,
        backend: SemanticBackend,
        failopen: FailOpen,
        fence: Fence,
        stats: Stats,
        clock: Callable[[], float],
        fresh: Callable[[Entry], bool],
        privacy: QuestionGate,
        readability: ReadabilityGate | None,
        admission: Admission,
        serves: Serves,
        near_misses: NearMisses,
        shared: Shared | None = None,
        deadline_s: float | None = None,
        hedge: bool = True,
    ) -> None:
        self.memory = memory
        self._backend = backend
        self._failopen = failopen
        self._fence = fence
        self._stats = stats
        self._clock = clock
        self._fresh = fresh
        self._privacy = privacy
        self._readability = readability
        self._admission = admission
        self._serves = serves
        self._near_misses = near_misses
        self._shared = shared
        self._deadline_s = deadline_s
        self._hedge = hedge
        # concurrent reads of one key share one GET: one Redis round trip per replica
        self._redis_reads: Coalescer[Entry | _Failed | None, None] = Coalescer()

    async def __call__(self, request: Request, *, may_hedge: bool = True) -> Found | Miss:
        """The hit for ``request``, or its miss; ``may_hedge`` False: a lookup refused for
        the queue is shed, never left to race (a caller with no upstream call to race)."""
        if request.privacy is None:  # not through the gates yet
            request = await self.gate(request)
        if self._shared is not None:
            await self._shared.log.started()  # hear of purges before remembering anything
        if not request.decision.lookup:
            return Miss(request)
        found = self.peek(request)
        if found is None and self._shared is not None:
            found, request = await self._redis(request, self._shared)
        if found is None:
            found = await self._store(request)
        if found is None:
            return await self._semantic(request, may_hedge)
        return learned(request, found)

    async def gate(self, request: Request) -> Request:
        """``request`` through the private-data gate and the readability gate: its decision
        narrowed, its verdict and lane set (each request's own, counted once)."""
        request = await self._privacy(request)
        if self._readability is not None:
            request = await self._readability(request)
        return request

    # -- exact tiers ----------------------------------------------------------------------
    def peek(self, request: Request) -> Found | None:
        """The memory hit for ``request`` (no await: safe from any thread), else None."""
        if not request.decision.lookup:
            return None
        answer = self.memory.get(request.keys.exact)
        if answer is None or not self._servable(request, answer.entry):
            return None
        return Found(answer, Tier.EXACT)

    async def _redis(self, request: Request, shared: Shared) -> tuple[Found | None, Request]:
        token = self._fence.begin()

        async def read(_: object) -> Entry | _Failed | None:
            return await self._failopen.call(
                "redis_get",
                lambda: shared.exact.get(
                    request.keys.exact,
                    tenant=request.tenant,
                    namespace=request.control.namespace,
                    model=request.keys.model,
                ),
                _FAILED,
            )

        entry = (await self._redis_reads.do(request.keys.exact, read)).value
        if isinstance(entry, _Failed):  # counted by FailOpen; the response says so too
            return None, replace(request, miss_reason=MissReason.FAILED)
        if entry is None or not self._fresh(entry):
            return None, request
        answer = Answer.of(entry)
        if shared.log.synced and self._fence.admits(entry, token):
            self.memory.put(answer)
        return Found(answer, Tier.EXACT), request

    async def _store(self, request: Request) -> Found | None:
        tier = self._backend.exact()  # never waits for the model to load
        if tier is None:
            return None
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
        if entry is None or not self._servable(request, entry):
            return None
        answer = Answer.of(entry)
        if self._fence.admits(entry, token):
            self.memory.put(answer)
        return Found(answer, Tier.EXACT)

    # -- check's lookup: filters, k hits, a threshold of its own ------------------------
    async def many(self, request: Request, query: Query) -> list[Found] | Miss:
        """Up to ``query.k`` hits, the exact entry first, then by similarity, each the hit
        rule's choice among the candidates after the previous one (the first is the one a
        lookup would serve): ``check(filters=, num_results=, threshold=)``. Through the same
        gates as every lookup; unlike one it waits for the semantic tier to be set up.

        ``filters`` narrow the partition (part of the store's search filter, re-checked on
        every result, the exact entry's too). ``threshold`` may only be stricter than the
        served one (a candidate must pass both); a looser one raises InvalidRequest unless
        ``allow_looser``, and then replaces the served rule by the plain cosine rule with the
        answer guard (a calibrated scorer is not consulted)."""
        request = await self.gate(request)
        if not request.decision.lookup:
            return Miss(_missing(request, MissReason.BYPASS))
        tier = await self._backend.ready()
        namespace = request.control.namespace
        served = tier.threshold_for(namespace) if tier is not None else None
        cut = query.threshold
        looser = cut is not None and served is not None and cut < served
        if looser and not query.allow_looser:
            raise InvalidRequest(
                "threshold",
                f"{cut} is looser than the served {served}; pass allow_looser=True to loosen",
            )
        if not self._backend.gate.open:  # the store's hits are held back (purge replay)
            tier = None
        now = self._clock()
        exact = await self._exact_entry(request, tier, query.filters, now)
        hits = [] if exact is None else [Found(Answer.of(exact), Tier.EXACT, nearest=1.0)]
        prompt, scope = request.keys.prompt, request.keys.scope
        if tier is None or not request.decision.semantic or prompt is None or scope is None:
            return hits or Miss(_missing(request, MissReason.NO_CANDIDATE))
        if len(hits) >= query.k:
            return hits
        vector = await tier.embed(prompt)  # sets up a routed question's lane
        lane = tier.lane(prompt)  # a routed question: the fallback's embedder
        assert lane.embedder is not None  # ready() returned the tier: it is set up
        where = Where(request.tenant, namespace, scope, lane.embedder.name, now, query.filters)
        rule = PerCallRule(lane, cut, looser=looser)
        # the exact entry, then k hits, the first behind as many vetoed ones as a lookup's
        fetch = 1 + query.k + rule.extra_candidates
        nothing: list[Match] = []
        matches = await self._failopen.call(
            "semantic_lookup", lambda: tier.nearest_k(vector, where, fetch), nothing
        )
        candidates = [
            Candidate(m, m.entry.question, m.similarity)
            for m in matches
            if (exact is None or m.entry.key != exact.key) and self._servable(request, m.entry)
        ]
        while candidates and len(hits) < query.k:
            choice = await hit_rule.choose(rule, prompt, namespace, candidates)
            if choice.chosen is None:
                break
            match = choice.chosen.item
            found = Found(Answer.of(match.entry), Tier.SEMANTIC, match.similarity, match.similarity)
            hits.append(found)
            candidates = candidates[len(choice.verdicts) :]
        return hits or Miss(_missing(request, MissReason.NO_CANDIDATE))

    async def _exact_entry(
        self, request: Request, tier: SemanticTier | None, filters: Filters, now: float
    ) -> Entry | None:
        """The entry stored under the request's own key, if live, fresh and matching."""
        key = request.keys.exact
        answer = self.memory.get(key)
        entry: Entry | None = answer.entry if answer is not None else None
        if entry is None and tier is not None:
            entry = await self._failopen.call(
                "store_retrieve",
                lambda: tier.retrieve(
                    key,
                    tenant=request.tenant,
                    namespace=request.control.namespace,
                    scope=request.entry_scope,
                    now=now,
                    filters=filters,
                    prompt=request.keys.prompt,
                ),
                None,
            )
        if entry is None or entry.tenant != request.tenant:
            return None
        if filters and not metadata_matches(entry.metadata, filters):
            return None
        return entry if self._servable(request, entry) else None

    # -- semantic tier --------------------------------------------------------------------
    async def _semantic(self, request: Request, may_hedge: bool) -> Found | Miss:
        keys = request.keys
        prompt, scope = keys.prompt, keys.scope
        if not request.decision.semantic or prompt is None or scope is None:
            return Miss(_missing(request, MissReason.EXACT_ONLY))
        tier = self._backend.available()  # never waits for the model to load
        if tier is None:
            off = self._backend.tier is None or not self._backend.warming
            return Miss(_missing(request, MissReason.SEMANTIC_OFF if off else MissReason.WARMING))
        if not tier.ready_for(prompt):  # routed, and the fallback's model is still loading
            self._stats.count(FALLBACK_WARMING)
            return Miss(_missing(request, MissReason.WARMING))
        ticket = self._admission.enter()
        if ticket is None:
            shed = _missing(request, MissReason.SHED)
            if self._hedge and may_hedge:
                return Miss(replace(shed, hedge=True))
            self._failopen.shed("semantic_lookup")
            return Miss(shed)
        try:
            looked = await self.search(tier, request, ticket.queued)
        finally:
            ticket.leave()
        if looked is _LATE:
            self._failopen.shed("semantic_deadline")
            return Miss(_missing(request, MissReason.SHED))
        if not isinstance(looked, Judged):  # failed (counted by FailOpen)
            return Miss(_missing(request, MissReason.FAILED))
        return await self.judged(request, looked)

    def semantic_tier(self) -> SemanticTier | None:
        """The semantic tier when a lookup may run now (for a hedged race)."""
        return self._backend.available()

    async def search(
        self, tier: SemanticTier, request: Request, queued: Callable[[], None]
    ) -> Judged | object:
        """Search (kind ``semantic_lookup``), then judge the candidates (kind
        ``semantic_judge``: a failing scorer or extra embedder). A failed judgement is a miss
        that still carries the question's vector, so storing the answer re-embeds nothing.
        Returns None when the search failed, ``_LATE`` past the deadline."""
        prompt, scope = request.keys.prompt, request.keys.scope
        assert prompt is not None and scope is not None
        namespace = request.control.namespace
        search = tier.search(
            prompt,
            tenant=request.tenant,
            namespace=namespace,
            scope=scope,
            now=self._clock(),
            queued=queued,
        )
        found = await self._failopen.call("semantic_lookup", lambda: self._bounded(search), None)
        if not isinstance(found, Search):
            return found

        async def through(judge: Callable[[], Awaitable[Verdict]]) -> Verdict:
            return await self._failopen.call("semantic_judge", judge, Verdict(hit=False))

        return await tier.settle(prompt, found, namespace, through)

    async def judged(
        self, request: Request, looked: Judged, *, may_serve: bool = True
    ) -> Found | Miss:
        """A completed semantic lookup as a hit (with its serve id), or the miss it leaves:
        the request dressed with the vector, the nearest similarity and the candidate (a
        near miss is recorded for miss analysis); ``may_serve`` False: a miss either way."""
        if looked.rejected:
            self._stats.count("verifier_rejections")
            if looked.match is not None:  # served a next-nearest candidate instead
                self._stats.count("verifier_next_hits")
        if looked.score is not None:
            self._stats.count("scorer_scored")
            if looked.match is None:
                self._stats.count("scorer_rejections")
        match = looked.match
        if match is not None and may_serve and self._servable(request, match.entry):
            hit = Found(
                Answer.of(match.entry),
                Tier.SEMANTIC,
                match.similarity,
                looked.nearest,
                score=looked.score,
            )
            return learned(request, await self._serves(request, hit))
        missed = replace(
            request,
            vector=looked.vector,
            nearest=looked.nearest,
            candidate=looked.candidate,
            miss_reason=_earlier(request, _why_not(looked, stale=match is not None)),
        )
        self._near_misses.record(missed)
        return Miss(missed)

    def _servable(self, request: Request, entry: Entry) -> bool:
        """Not older than the caller's ``s-maxage``, nor from a replaced model snapshot."""
        return self._fresh(entry) and request.control.accepts(entry.created_at, self._clock())

    async def _bounded(self, search: Awaitable[Search]) -> Search | object:
        """The search, or ``_LATE`` when it outlasts ``deadline_s`` (then it is cancelled)."""
        if self._deadline_s is None:
            return await search
        try:
            async with asyncio.timeout(self._deadline_s):
                return await search
        except TimeoutError:
            return _LATE


def learned(request: Request, found: Found) -> Found:
    """``found`` with what the request's gates learned: the kinds of private data in the
    question, whether the embedder could not read it, the lane it was routed to."""
    verdict = request.privacy
    private = verdict.labels if verdict is not None and verdict.private else ()
    return replace(
        found, private_data=private, unreadable=request.unreadable, routed_to=request.routed_to
    )


def _missing(request: Request, reason: MissReason) -> Request:
    """``request`` missing for ``reason``, unless an earlier gate gave one (a failure of an
    earlier tier wins: it is what the response must show)."""
    if request.miss_reason is not None:
        return request
    return replace(request, miss_reason=reason)


def _earlier(request: Request, reason: MissReason) -> MissReason:
    """``failed`` when an earlier tier failed (the shared Redis: it might have held the
    answer), else this tier's own reason."""
    return MissReason.FAILED if request.miss_reason is MissReason.FAILED else reason


def _why_not(looked: Judged, *, stale: bool) -> MissReason:
    """Why a completed lookup served nothing."""
    if stale:
        return MissReason.STALE
    if looked.nearest is None:
        return MissReason.NO_CANDIDATE
    if looked.rejected or looked.score is not None:
        return MissReason.REJECTED
    return MissReason.BELOW_THRESHOLD
