"""The loop side of ``check(..., filters=, num_results=, threshold=)``, ``drop`` and ``update``.

What a RedisVL or GPTCache user reaches for first, on the cache's own tiers:

- **filters** on the metadata stored with an answer: each narrows the lookup inside the
  request's partition (tenant, namespace, scope, embedder), never beside it; they are part of
  the store's search filter (:attr:`semcache.stores.Where.filters`) and re-checked on every
  result, the exact entry included.
- **num_results**: up to k hits, the exact entry first, then by similarity, each chosen by
  the lookup's own hit rule (:func:`semcache.pipeline.hit_rule.choose`: threshold, guard or
  scorer; ``s-maxage``): the first is the candidate a lookup would serve, each next one the
  rule's choice among the candidates after it.
- **threshold**: per call. It may only be *stricter* than the one the cache serves (a
  candidate must pass both); a looser one raises unless ``allow_looser=True``, and then
  replaces the threshold for this call (the answer guard still applies; a calibrated scorer
  is not consulted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from semcache.core.answer import Answer
from semcache.errors import ConfigError, InvalidRequest
from semcache.pipeline import hit_rule
from semcache.pipeline.fence import PurgeFilter
from semcache.pipeline.hit_rule import Candidate, OneCandidate
from semcache.pipeline.lookup_result import Verdict
from semcache.pipeline.semantic_tier import EXACT_ONLY_SCOPE
from semcache.stats import CacheHit, CacheInfo, MissReason, Tier
from semcache.stores.where import Where, metadata_filters, metadata_matches

if TYPE_CHECKING:
    from semcache.compose import Assembly
    from semcache.pipeline.base import Request
    from semcache.pipeline.semantic_tier import SemanticTier
    from semcache.runtime.delivery import Delivery
    from semcache.stores.base import Entry, Match

Filters = tuple[tuple[str, tuple[str | int, ...]], ...]


def parse_filters(filters: Mapping[str, Any] | None) -> Filters:
    """``check``'s ``filters`` as store filters; InvalidRequest naming ``filters.<key>``."""
    try:
        return metadata_filters(filters)
    except ConfigError as exc:
        raise InvalidRequest("filters", str(exc)) from None


def parse_threshold(threshold: float | None) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise InvalidRequest("threshold", f"expected a cosine similarity, got {threshold!r}")
    if not -1.0 <= threshold <= 1.0:  # also refuses NaN
        raise InvalidRequest(
            "threshold", f"expected a cosine similarity in [-1, 1], got {threshold}"
        )
    return float(threshold)


async def query(
    parts: Assembly,
    delivery: Delivery,
    request: Request,
    *,
    filters: Filters,
    k: int,
    threshold: float | None,
    allow_looser: bool,
) -> list[CacheHit]:
    """Up to ``k`` stored answers for ``request`` (see the module docstring)."""
    if not request.decision.lookup:
        delivery.record(_miss(request, MissReason.BYPASS))
        return []
    tier = await parts.backend.ready()
    namespace = request.control.namespace
    served = tier.threshold_for(namespace) if tier is not None else None
    if threshold is not None and served is not None and threshold < served and not allow_looser:
        raise InvalidRequest(
            "threshold",
            f"{threshold} is looser than the served {served}; pass allow_looser=True to loosen",
        )
    now = parts.clock()
    if not parts.backend.gate.open:  # the store's hits are held back (purge replay pending)
        tier = None
    hits: list[CacheHit] = []
    exact = await _exact(parts, tier, request, filters, now)
    if exact is not None:
        hits.append(_hit(exact, Tier.EXACT, 1.0, now))
    keys = request.keys
    semantic = request.decision.semantic and keys.prompt is not None and keys.scope is not None
    if tier is not None and semantic and len(hits) < k:
        assert keys.prompt is not None and keys.scope is not None
        vector = await tier.embed(keys.prompt)  # sets up a routed question's lane
        lane = tier.lane(keys.prompt)  # a routed question: the fallback's embedder
        where = Where(request.tenant, namespace, keys.scope, _embedder(lane), now, filters)
        looser = served is not None and threshold is not None and threshold < served
        rule = PerCallRule(lane, threshold, looser=looser)
        # the exact entry, then k hits, the first behind as many vetoed ones as a lookup's
        fetch = 1 + k + rule.extra_candidates
        nothing: list[Match] = []
        matches = await parts.failopen.call(
            "semantic_lookup", lambda: tier.nearest_k(vector, where, fetch), nothing
        )
        candidates = [
            Candidate(m, m.entry.question, m.similarity)
            for m in matches
            if (exact is None or m.entry.key != exact.key)
            and request.control.accepts(m.entry.created_at, now)
            and parts.fresh(m.entry)
        ]
        while candidates and len(hits) < k:
            choice = await hit_rule.choose(rule, keys.prompt, namespace, candidates)
            if choice.chosen is None:
                break
            match = choice.chosen.item
            hits.append(_hit(match.entry, Tier.SEMANTIC, match.similarity, now))
            candidates = candidates[len(choice.verdicts) :]
    if hits:
        delivery.record(hits[0].info)
    else:
        delivery.record(_miss(request, MissReason.NO_CANDIDATE))
    return hits


async def _exact(
    parts: Assembly, tier: SemanticTier | None, request: Request, filters: Filters, now: float
) -> Entry | None:
    """The entry stored under the request's own key, if live, fresh and matching."""
    key = request.keys.exact
    answer = parts.memory.get(key)
    entry: Entry | None = answer.entry if answer is not None else None
    if entry is None and tier is not None:
        entry = await parts.failopen.call(
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
    if not metadata_matches(entry.metadata, filters) and filters:
        return None
    if not request.control.accepts(entry.created_at, now) or not parts.fresh(entry):
        return None  # too old for the caller, or from a replaced model snapshot
    return entry


class PerCallRule:
    """The hit rule with this call's ``threshold`` (a hit when cosine >= it) on top of
    ``lane``'s: a candidate must pass both; ``looser``: the call's threshold replaces the
    lane's rule by the plain cosine rule with the lane's answer guard (never a calibrated
    scorer: its guarantee is for the served rule). Which candidates are judged is
    :func:`hit_rule.choose`'s."""

    def __init__(self, lane: SemanticTier, threshold: float | None, *, looser: bool) -> None:
        self._lane = lane
        self._threshold = threshold
        self._loose: OneCandidate | None = None
        if looser and threshold is not None:
            self._loose = OneCandidate(
                threshold=threshold, floor=None, verifier=lane.verifier, decision=None, scored=False
            )

    @property
    def extra_candidates(self) -> int:
        return self._lane.extra_candidates

    def lane(self, text: str | None) -> PerCallRule:
        return self

    def under(self, similarity: float, namespace: str) -> bool:
        if self._loose is not None:
            return self._loose.under(similarity)
        return self._stricter(similarity) or self._lane.under(similarity, namespace)

    def judge(
        self, prompt: str, question: str | None, similarity: float, namespace: str
    ) -> Verdict:
        if self._loose is not None:
            return self._loose.judge(prompt, question, similarity)
        if self._stricter(similarity):
            return Verdict(hit=False)
        return self._lane.judge(prompt, question, similarity, namespace)

    async def ajudge(
        self, prompt: str, question: str | None, similarity: float, namespace: str
    ) -> Verdict:
        if self._loose is not None or self._stricter(similarity):
            return self.judge(prompt, question, similarity, namespace)
        return await self._lane.ajudge(prompt, question, similarity, namespace)

    def _stricter(self, similarity: float) -> bool:
        """Under this call's threshold."""
        return self._threshold is not None and similarity < self._threshold


def _hit(entry: Entry, tier: Tier, similarity: float, now: float) -> CacheHit:
    answer = Answer.of(entry)
    info = CacheInfo(
        tier,
        key=entry.key,
        similarity=similarity if tier is Tier.SEMANTIC else None,
        nearest_similarity=similarity,
        age_s=max(0.0, now - entry.created_at),
        saved_cost_usd=answer.cost_usd,
        saved_tokens=answer.tokens,
    )
    return CacheHit(answer.response(), info, metadata=entry.metadata)


def _miss(request: Request, reason: MissReason) -> CacheInfo:
    return CacheInfo(Tier.MISS, key=request.keys.exact, miss_reason=reason)


def _embedder(tier: SemanticTier) -> str:
    embedder = tier.embedder
    assert embedder is not None  # ready() returned the tier: it is set up
    return embedder.name


async def drop(parts: Assembly, request: Request) -> int:
    """Withdraw the entry stored for ``request`` from memory and the store (the write fence
    keeps a pending write of it from landing after), and with a shared Redis tier from Redis
    and every replica (through the purge log); returns how many copies went."""
    key = request.keys.exact

    async def expire() -> int:
        tier = await parts.backend.ready()
        if tier is None or tier.store is None or tier.embedder is None:
            return 0
        now = parts.clock()
        entry = await tier.retrieve(
            key,
            tenant=request.tenant,
            namespace=request.control.namespace,
            scope=request.entry_scope or EXACT_ONLY_SCOPE,
            now=now,
        )
        if entry is None:
            return 0
        lane = tier.lane_named(entry.embedder)  # a routed entry is in the fallback's store
        await lane.upsert(replace(entry, expires_at=now, vector=lane.exact_only_vector()))
        return 1

    removed = await parts.writer.withdraw(key, expire)
    if parts.shared is not None:  # raises on a Redis error: the caller must know
        scope = request.entry_scope or EXACT_ONLY_SCOPE
        namespace = request.control.namespace
        withdrawn = PurgeFilter(request.tenant, namespace, request.keys.model, key=key, scope=scope)
        removed += await parts.shared.withdraw(withdrawn)
    return removed
