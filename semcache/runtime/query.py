"""The loop side of ``check(..., filters=, num_results=, threshold=)``, ``drop`` and ``update``.

What a RedisVL or GPTCache user reaches for first (issue 22 item 6), on the cache's own tiers:

- **filters** on the metadata stored with an answer: each narrows the lookup inside the
  request's partition (tenant, namespace, scope, embedder), never beside it; they are part of
  the store's search filter (:attr:`semcache.stores.Where.filters`) and re-checked on every
  result, the exact entry included.
- **num_results**: up to k candidates, the exact entry first, then by similarity; each one
  passes the same hit rule as a single lookup (threshold, guard or scorer, ``s-maxage``).
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
from semcache.pipeline.fence import PurgeFilter
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
        nothing: list[Match] = []
        matches = await parts.failopen.call(
            "semantic_lookup", lambda: tier.nearest_k(vector, where, k + 1), nothing
        )
        for match in matches:
            entry = match.entry
            if len(hits) >= k or (exact is not None and entry.key == exact.key):
                continue
            if not request.control.accepts(entry.created_at, now):
                continue
            if await _passes(tier, keys.prompt, entry, match.similarity, namespace, threshold,
                             looser=served is not None and threshold is not None
                             and threshold < served):  # fmt: skip
                hits.append(_hit(entry, Tier.SEMANTIC, match.similarity, now))
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
                key, tenant=request.tenant, namespace=request.control.namespace,
                scope=request.entry_scope, now=now, filters=filters,
                prompt=request.keys.prompt,
            ),
            None,
        )  # fmt: skip
    if entry is None or entry.tenant != request.tenant:
        return None
    if not metadata_matches(entry.metadata, filters) and filters:
        return None
    if not request.control.accepts(entry.created_at, now):
        return None
    return entry


async def _passes(
    tier: SemanticTier,
    prompt: str,
    entry: Entry,
    similarity: float,
    namespace: str,
    threshold: float | None,
    *,
    looser: bool,
) -> bool:
    if threshold is not None and similarity < threshold:
        return False
    if looser:  # explicit: the caller's threshold replaces the served one; the guard stays
        question = entry.question
        return question is None or tier.verifier.verify(prompt, question)
    verdict = await tier.ajudge(prompt, entry.question, similarity, namespace)
    return verdict.hit


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
            key, tenant=request.tenant, namespace=request.control.namespace,
            scope=request.entry_scope or EXACT_ONLY_SCOPE, now=now,
        )  # fmt: skip
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
