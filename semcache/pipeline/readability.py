"""The readability gate: a question the embedder cannot read is exact-only, or routed.

An embedder maps text in scripts it was not trained on to nearly one vector, so any two such
questions look like paraphrases. Before any lookup, ``ReadabilityGate`` asks the semantic
tier whether its embedder reads the question (:meth:`SemanticTier.reads`, a script check
that needs no model). With ``semantic.fallback_embedder`` set and that embedder reading it,
the question is *routed* (:mod:`semcache.pipeline.routed_tier`): counted as
``fallback_routed`` and reported in ``CacheInfo.routed_to``; the tier embeds, searches and
stores it in the fallback's lane. When no lane reads it, the semantic tier is turned off for
the request: no semantic lookup, no vector stored (the answer is kept for exact repeats only,
under the exact-only scope), counted as ``unreadable`` and reported in ``CacheInfo.unreadable``.

A question longer than the embedder's window (:mod:`semcache.embedders.window`: its tokenizer
where it has one, a lower bound otherwise) is exact-only too: a model embeds only its window
and drops the rest, so two questions that differ only past it embed to one vector (a long
document followed by two different questions, at cosine 1.0) and no threshold or guard can
see the difference. ``ReadabilityGate`` turns its semantic lookup off, counted and reported as
``beyond_window``; a routed question is measured against the fallback's window.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from semcache.embedders.window import Window, unseen
from semcache.pipeline.base import Request
from semcache.pipeline.routed_tier import ROUTED, RoutedTier
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.stats import MissReason, Stats

UNREADABLE = MissReason.UNREADABLE.value
"""The miss reason and the ``stats().counts`` name of a question the embedder cannot read."""

BEYOND_WINDOW = MissReason.BEYOND_WINDOW.value
"""The miss reason and the ``stats().counts`` name of a question longer than the window."""


class ReadabilityGate:
    """Routes, or turns exact-only, a question the embedder cannot read (to its end).

    ``window``: the primary embedder's; ``fallback``: the routed lane's (None: no lane). A
    text short enough to fit whatever the tokenizer does is decided inline; a longer one is
    tokenized in a worker thread (the first such text also reads the tokenizer file).
    """

    def __init__(
        self, tier: SemanticTier, stats: Stats, window: Window, fallback: Window | None = None
    ) -> None:
        self._tier = tier
        self._stats = stats
        self._window = window
        self._fallback = fallback

    async def __call__(self, request: Request) -> Request:
        prompt = request.keys.prompt
        if not request.decision.semantic or prompt is None:
            return request
        tier = self._tier
        if isinstance(tier, RoutedTier) and tier.routes(prompt):
            self._stats.count(ROUTED)
            request = replace(request, routed_to=tier.routed_name())
        elif not tier.reads(prompt):
            self._stats.count(UNREADABLE)
            unreadable = exact_only(request, MissReason.UNREADABLE)
            return replace(unreadable, unreadable=True)
        routed = request.routed_to is not None and self._fallback is not None
        window = self._fallback if routed and self._fallback is not None else self._window
        if not await _beyond(window, prompt):
            return request
        self._stats.count(BEYOND_WINDOW)
        return exact_only(request, MissReason.BEYOND_WINDOW)


async def _beyond(window: Window, text: str) -> bool:
    """Does ``text`` go on past what ``window`` reads?"""
    tokens = window.tokens
    if tokens is None or len(text) * 4 <= tokens:  # UTF-8: at most 4 bytes a character
        return False
    return bool(await asyncio.to_thread(unseen, window, text))


def exact_only(request: Request, reason: MissReason) -> Request:
    """``request`` with its semantic lookup and store turned off (its answer is kept for exact
    repeats only), missing for ``reason`` unless an earlier stage gave one."""
    decision = replace(request.decision, semantic=False)
    return replace(request, decision=decision, miss_reason=request.miss_reason or reason)
