"""The readability gate: a question the embedder cannot read is exact-only.

An embedder maps text in scripts it was not trained on to nearly one vector, so any two such
questions look like paraphrases. Before any lookup, ``ReadabilityStage`` asks the semantic
tier whether its embedder reads the question (:meth:`SemanticTier.reads`, a script check
that needs no model); when it does not, the semantic tier is turned off for the request: no
semantic lookup, no vector stored (the answer is kept for exact repeats only, under the
exact-only scope), counted as ``unreadable`` and reported in ``CacheInfo.unreadable``.
"""

from __future__ import annotations

from dataclasses import replace

from semcache.pipeline.base import Found, Next, Request
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
        if not request.decision.semantic or prompt is None or self._tier.reads(prompt):
            return await call_next(request)
        self._stats.count(UNREADABLE)
        decision = replace(request.decision, semantic=False)
        why = request.miss_reason or MissReason.UNREADABLE
        found = await call_next(replace(request, decision=decision, miss_reason=why))
        return replace(found, unreadable=True)
