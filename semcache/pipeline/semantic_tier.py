"""The semantic tier: embed the question, search its partition, check the candidate.

Owns the embedder (behind a micro-batcher), the vector store and the answer guard, and the
settings of the hit rule (threshold, namespace overrides, scorer) that
:mod:`semcache.pipeline.hit_rule` applies to the live entries in the same tenant, namespace
and scope (:meth:`SemanticTier.rule`).

Blocking store, model and scoring calls run in worker threads, never on the event loop.
Errors propagate: the caller's fail-open boundary turns them into misses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from semcache.embedders.base import Embedder
from semcache.embedders.readability import ANY, Readability
from semcache.errors import StoreError
from semcache.guard import HitVerifier
from semcache.pipeline import hit_rule
from semcache.pipeline.hit_rule import Candidate, OneCandidate, Through
from semcache.pipeline.lookup_result import Lookup, Search, Verdict
from semcache.stores.base import Entry, Match, RecordedEmbedder, VectorStore
from semcache.stores.where import Where

if TYPE_CHECKING:
    from semcache.embedders.batcher import MicroBatcher
    from semcache.embedders.vector_cache import VectorCache
    from semcache.scoring.decide import ScoredDecision

#: ``scope`` of entries that only answer exact lookups (requests with no user question
#: last). Real scopes are SHA-256 hex digests, so a semantic search never matches it.
EXACT_ONLY_SCOPE = "-"


class SemanticTier:
    def __init__(
        self,
        *,
        embedder: Callable[[], Embedder],
        store: Callable[[], VectorStore],
        verifier: HitVerifier,
        threshold: float,
        namespace_thresholds: Mapping[str, float] | None = None,
        scorer: Callable[[], ScoredDecision] | None = None,
        max_batch: int = 64,
        max_wait_ms: float = 2.0,
        vectors: VectorCache | None = None,
        readability: Readability = ANY,
        guard_candidates: int = 0,
    ) -> None:
        """``readability``: what the embedder reads; a question outside it is never embedded
        nor matched (:meth:`reads`). ``scorer``: builds the calibrated decision (loading
        any extra embedder it needs); called once, in a worker thread, when the tier is set
        up. ``vectors``: the text -> vector LRU (None: embed every time).
        ``guard_candidates``: how many more entries, next nearest first, are judged when the
        guard vetoes the nearest (0: the nearest only; never with a scorer)."""
        self.guard_candidates = guard_candidates
        self._vectors = vectors
        self.readability = readability
        self._make_embedder = embedder
        self._make_scorer = scorer
        self._decision: ScoredDecision | None = None
        self._make_store = store
        self.verifier = verifier
        self.threshold = threshold
        self.namespace_thresholds = dict(namespace_thresholds or {})
        self._max_batch = max_batch
        self._max_wait_ms = max_wait_ms
        self._embedder: Embedder | None = None
        self._store: VectorStore | None = None
        #: Opened with its recorded embedder while the model loads (exact reads only).
        self._exact_store: VectorStore | None = None
        self._batcher: MicroBatcher | None = None
        self._lock = asyncio.Lock()

    def reads(self, text: str) -> bool:
        """Can the embedder read ``text``? Pure and cheap (no model needed)."""
        return self.readability.reads(text)

    def routes(self, text: str) -> bool:
        """Is ``text`` embedded by another tier's embedder (:meth:`lane`)? Never here; a
        :class:`~semcache.pipeline.routed_tier.RoutedTier` routes what its primary cannot read."""
        return False

    def ready_for(self, text: str) -> bool:
        """Can ``text`` be looked up now without waiting for a model (its lane is up)?"""
        return self.store is not None

    def lane(self, text: str | None) -> SemanticTier:
        """The tier that embeds, searches and stores ``text``: this one."""
        return self

    def lane_named(self, embedder: str) -> SemanticTier:
        """The tier whose store holds entries of ``embedder``: this one."""
        return self

    def lanes(self) -> tuple[SemanticTier, ...]:
        """Every tier with a store of its own (purges and expiry reach each)."""
        return (self,)

    def threshold_for(self, namespace: str) -> float:
        """Cosine similarity a candidate needs in ``namespace`` (a hit when >=)."""
        return self.namespace_thresholds.get(namespace, self.threshold)

    @property
    def decision(self) -> ScoredDecision | None:
        """The calibrated scorer's decision once set up (None without a scorer)."""
        return self._decision

    @property
    def store(self) -> VectorStore | None:
        return self._store

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

    async def setup(self) -> VectorStore:
        """Load the embedder and open the store once (concurrent callers wait for one load).

        A store on disk that records its embedder is opened first, before the model loads
        (:meth:`_open_for_exact`): after a restart, exact repeats are answered from it while
        the model is still loading (:attr:`exact_ready`)."""
        if self._store is not None:
            return self._store
        async with self._lock:
            if self._store is None:
                from semcache.embedders.batcher import MicroBatcher

                embedder = self._embedder
                if embedder is None:
                    embedder = await asyncio.to_thread(self._make_embedder)
                self._embedder = embedder
                store = self._make_store()
                await self._open_for_exact(store, embedder.name)
                try:
                    dim = await asyncio.to_thread(lambda: embedder.dim)
                    if self._make_scorer is not None and self._decision is None:
                        self._decision = await asyncio.to_thread(self._make_scorer)
                    await asyncio.to_thread(store.setup, embedder.name, dim)
                except BaseException:
                    await self._close_exact()  # the next attempt opens a fresh store
                    raise
                self._batcher = MicroBatcher(
                    embedder, max_batch=self._max_batch, max_wait_ms=self._max_wait_ms
                )
                self._store, self._exact_store = store, None
        return self._store

    async def _open_for_exact(self, store: VectorStore, embedder: str) -> None:
        """Open ``store`` with the embedder and dimension it records, when that embedder is
        this tier's: exact reads need no vector, so they need not wait for the model. The
        full setup then checks the loaded model's dimension against the store as usual."""
        if not isinstance(store, RecordedEmbedder):
            return
        recorded = await asyncio.to_thread(store.recorded_embedder)
        if recorded is None or recorded[0] != embedder:
            return
        await asyncio.to_thread(store.setup, *recorded)
        self._exact_store = store

    async def _close_exact(self) -> None:
        store, self._exact_store = self._exact_store, None
        if store is not None:
            await asyncio.to_thread(store.close)

    @property
    def exact_ready(self) -> bool:
        """Exact reads can run now: the tier is set up, or its store is open while the
        model loads."""
        return self._store is not None or self._exact_store is not None

    def backlog(self, unqueued: int = 0) -> float | None:
        """Seconds a lookup entering now would wait for its vector at the micro-batcher,
        with ``unqueued`` more lookups about to join its queue (None before setup or the
        first batch)."""
        batcher = self._batcher
        return batcher.expected_wait_s(unqueued) if batcher is not None else None

    async def embed(
        self,
        text: str,
        *,
        background: bool = False,
        queued: Callable[[], None] | None = None,
    ) -> np.ndarray:
        """``text``'s vector: from the LRU when this embedder embedded it recently (a lookup
        then the write of its answer embed once), else through the micro-batcher.
        ``queued`` is called once the text is in the batcher's queue, or at once when it
        needs no embedding (admission control stops counting it as on its way there)."""
        await self.setup()
        assert self._batcher is not None and self._embedder is not None
        vectors, name = self._vectors, self._embedder.name
        if vectors is not None:
            known = vectors.get(name, text)
            if known is not None:
                if queued is not None:
                    queued()
                return known
        vector = await self._batcher.embed_one(text, background=background, queued=queued)
        if vectors is not None:
            vectors.put(name, text, vector)
        return vector

    def _where(self, tenant: str, namespace: str, scope: str, now: float) -> Where:
        embedder = self._embedder
        if embedder is None:
            raise StoreError("the semantic tier is not set up")
        return Where(tenant, namespace, scope, embedder.name, now)

    async def retrieve(
        self,
        key: str,
        *,
        tenant: str,
        namespace: str,
        scope: str,
        now: float,
        filters: tuple[tuple[str, tuple[str | int, ...]], ...] = (),
        prompt: str | None = None,
    ) -> Entry | None:
        """The live entry stored under exact ``key`` in this partition (``scope``: the one
        the entry was stored with, ``EXACT_ONLY_SCOPE`` for exact-only entries), matching
        ``filters`` on its metadata. ``prompt``: the question, which says which lane's store
        holds the entry (:meth:`lane`; unused by a tier of one lane)."""
        store = self._store or self._exact_store or await self.setup()
        where = replace(self._where(tenant, namespace, scope, now), filters=filters)
        return await asyncio.to_thread(store.retrieve, key, where)

    async def nearest_k(self, vector: np.ndarray, where: Where, k: int) -> list[Match]:
        """Up to ``k`` live entries ``where`` admits, closest first (not judged)."""
        store = await self.setup()
        return await asyncio.to_thread(store.nearest_k, vector, where, k)

    async def search(
        self,
        prompt: str,
        *,
        tenant: str,
        namespace: str,
        scope: str,
        now: float,
        queued: Callable[[], None] | None = None,
    ) -> Search:
        """Embed ``prompt`` and find the nearest live entry in its partition (not judged).
        ``queued``: see :meth:`embed`."""
        store = await self.setup()
        vector = await self.embed(prompt, queued=queued)
        # The store returns the nearest regardless of the threshold, so misses report how
        # close they came.
        where = self._where(tenant, namespace, scope, now)
        extra = self.extra_candidates
        if extra < 1:
            return Search(vector, await asyncio.to_thread(store.nearest, vector, where))
        found = await asyncio.to_thread(store.nearest_k, vector, where, 1 + extra)
        return Search(vector, found[0] if found else None, tuple(found[1:]))

    @property
    def extra_candidates(self) -> int:
        """How many candidates after the nearest are judged when the guard vetoes it
        (``guard_candidates``; none with a scorer, whose guarantee is for the nearest)."""
        return 0 if self._make_scorer is not None else self.guard_candidates

    async def lookup(
        self, prompt: str, *, tenant: str, namespace: str, scope: str, now: float
    ) -> Lookup:
        """Embed ``prompt``, find the best live candidate in its partition and judge it."""
        found = await self.search(prompt, tenant=tenant, namespace=namespace, scope=scope, now=now)
        return await self.settle(prompt, found, namespace)

    async def settle(
        self, prompt: str, found: Search, namespace: str, through: Through = hit_rule.direct
    ) -> Lookup:
        """Judge ``found``'s candidates by the one hit rule (:func:`hit_rule.choose`): the
        nearest, and while the guard vetoes, the next ones closest first.

        Why: a stored question that differs from the new one in one detail ("... not safe
        to eat ..." for "... safe to eat ...") is often nearer than a true paraphrase of it,
        and judging only the nearest let it hide that paraphrase. With a scorer the search
        returns the nearest only (:meth:`search`): the calibrated guarantee is for the
        nearest candidate's rule. ``through``: the caller's fail-open boundary for one
        judgement (a failed one reads as a plain miss)."""
        best = found.best
        if best is None:
            return Lookup(vector=found.vector, match=None, nearest=None)
        candidates = [Candidate(m, m.entry.question, m.similarity) for m in (best, *found.others)]
        choice = await hit_rule.choose(self, prompt, namespace, candidates, through=through)
        nearest = choice.nearest or Verdict(hit=False)
        chosen = choice.chosen
        if chosen is None or chosen.item is best:
            return self.outcome(found, nearest)
        return replace(self.outcome(found, choice.verdicts[-1]), match=chosen.item, rejected=True)

    @staticmethod
    def outcome(found: Search, verdict: Verdict) -> Lookup:
        """The lookup result of a search whose best candidate got ``verdict``."""
        best = found.best
        return Lookup(
            vector=found.vector,
            match=best if verdict.hit else None,
            nearest=None if best is None else best.similarity,
            rejected=verdict.rejected,
            score=verdict.score,
            outcome=verdict.outcome,
            candidate=best,
        )

    def rule(self, namespace: str) -> OneCandidate:
        """The hit rule for one candidate in ``namespace``, as this tier is set now."""
        return OneCandidate(
            threshold=self.threshold_for(namespace),
            floor=self.namespace_thresholds.get(namespace),
            verifier=self.verifier,
            decision=self._decision,
            scored=self._make_scorer is not None,
        )

    def judge(
        self, prompt: str, question: str | None, similarity: float, namespace: str
    ) -> Verdict:
        """:meth:`OneCandidate.judge` in ``namespace``: may an answer to ``question`` (found
        at cosine ``similarity``) serve ``prompt``? With a scorer this may run the model (and
        an extra embedder): blocking work, so callers on the event loop use :meth:`ajudge`."""
        return self.rule(namespace).judge(prompt, question, similarity)

    def under(self, similarity: float, namespace: str) -> bool:
        """:meth:`OneCandidate.under` in ``namespace``."""
        return self.rule(namespace).under(similarity)

    async def ajudge(
        self, prompt: str, question: str | None, similarity: float, namespace: str
    ) -> Verdict:
        """:meth:`judge` for callers on the event loop: a candidate the scorer must score, or
        that the guard must embed, is judged in a worker thread; every other case is a
        comparison, done inline."""
        rule = self.rule(namespace)
        if rule.blocks(prompt, question, similarity):
            return await asyncio.to_thread(rule.judge, prompt, question, similarity)
        return rule.judge(prompt, question, similarity)

    async def upsert(self, entry: Entry) -> None:
        await self.upsert_many([entry])

    async def upsert_many(self, entries: Sequence[Entry]) -> None:
        """Write several entries in one store call (write-behind's group commit)."""
        store = await self.setup()
        await asyncio.to_thread(store.upsert, list(entries))

    def exact_only_vector(self) -> np.ndarray:
        """Placeholder vector for entries that only answer exact lookups."""
        assert self._embedder is not None
        vector = np.zeros(self._embedder.dim, dtype=np.float32)
        vector[0] = 1.0
        return vector

    async def close(self) -> None:
        if self._batcher is not None:
            self._batcher.close()
        await self._close_exact()
        if self._store is not None:
            await asyncio.to_thread(self._store.close)
            self._store = None
