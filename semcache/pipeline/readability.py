"""The readability gate: a question the embedder cannot read is exact-only, or routed.

An embedder maps text in scripts it was not trained on to nearly one vector, so any two such
questions look like paraphrases. Before any lookup, ``ReadabilityStage`` asks the semantic
tier whether its embedder reads the question (:meth:`SemanticTier.reads`, a script check
that needs no model). With ``semantic.fallback_embedder`` set and that embedder reading it,
the question is *routed* (:mod:`semcache.pipeline.routed_tier`): counted as
``fallback_routed`` and reported in ``CacheInfo.routed_to``; the tier embeds, searches and
stores it in the fallback's lane. When no lane reads it, the semantic tier is turned off for
the request: no semantic lookup, no vector stored (the answer is kept for exact repeats only,
under the exact-only scope), counted as ``unreadable`` and reported in ``CacheInfo.unreadable``.
"""

from __future__ import annotations

from dataclasses import replace

from semcache.pipeline.base import Found, Next, Request
from semcache.pipeline.routed_tier import ROUTED, RoutedTier
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.stats import MissReason, Stats

UNREADABLE = MissReason.UNREADABLE.value
"""The miss reason and the ``stats().counts`` name of a question the embedder cannot read."""


class ReadabilityStage:
    def __init__(self, tier: SemanticTier, stats: Stats) -> None:
        self._tier = tier
        self._stats = stats

    async def __call__(self, request: Request, call_next: Next) -> Found:
        prompt = request.keys.prompt
        if not request.decision.semantic or prompt is None:
            return await call_next(request)
        tier = self._tier
        if isinstance(tier, RoutedTier) and tier.routes(prompt):
            self._stats.count(ROUTED)
            name = tier.routed_name()
            found = await call_next(replace(request, routed_to=name))
            return replace(found, routed_to=name)
        if tier.reads(prompt):
            return await call_next(request)
        self._stats.count(UNREADABLE)
        decision = replace(request.decision, semantic=False)
        why = request.miss_reason or MissReason.UNREADABLE
        found = await call_next(replace(request, decision=decision, miss_reason=why))
        return replace(found, unreadable=True)
