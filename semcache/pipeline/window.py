"""The window gate: a question longer than the embedder reads is exact-only.

A model embeds only its window (all-MiniLM-L6-v2: 256 word pieces) and drops the rest, so two
questions that differ only past it embed to one vector and would serve each other's answers
(a long document followed by two different questions, at cosine 1.0). No threshold or guard
can see a difference the vector does not hold, so such a question is never matched
semantically: like an unreadable one (:mod:`semcache.pipeline.readability`), its semantic
lookup is turned off, its answer is kept for exact repeats only (under the exact-only scope),
and the miss is counted and reported as ``beyond_window``. The window is the embedder's own
(:mod:`semcache.embedders.window`): its tokenizer where it has one, a lower bound otherwise;
a routed question is measured against the fallback's window.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from semcache.embedders.window import Window, unseen
from semcache.pipeline.base import Found, Next, Request
from semcache.stats import MissReason, Stats

BEYOND_WINDOW = MissReason.BEYOND_WINDOW.value
"""The miss reason and the ``stats().counts`` name of a question longer than the window."""


class WindowStage:
    """Turns the semantic tier off for a question the embedder cannot read to its end.

    ``window``: the primary embedder's; ``fallback``: the routed lane's (None: no lane). A
    text short enough to fit whatever the tokenizer does is decided inline; a longer one is
    tokenized in a worker thread (the first such text also reads the tokenizer file).
    """

    def __init__(self, window: Window, stats: Stats, fallback: Window | None = None) -> None:
        self._window = window
        self._fallback = fallback
        self._stats = stats

    async def __call__(self, request: Request, call_next: Next) -> Found:
        prompt = request.keys.prompt
        if not request.decision.semantic or prompt is None:
            return await call_next(request)
        routed = request.routed_to is not None and self._fallback is not None
        window = self._fallback if routed and self._fallback is not None else self._window
        if not await _beyond(window, prompt):
            return await call_next(request)
        self._stats.count(BEYOND_WINDOW)
        decision = replace(request.decision, semantic=False)
        why = request.miss_reason or MissReason.BEYOND_WINDOW
        return await call_next(replace(request, decision=decision, miss_reason=why))


async def _beyond(window: Window, text: str) -> bool:
    """Does ``text`` go on past what ``window`` reads?"""
    tokens = window.tokens
    if tokens is None or len(text) * 4 <= tokens:  # UTF-8: at most 4 bytes a character
        return False
    return bool(await asyncio.to_thread(unseen, window, text))
