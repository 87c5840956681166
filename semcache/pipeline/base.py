"""The request pipeline's vocabulary: the request a stage sees, what it returns, the chain.

A stage is middleware (like an ASGI or httpx transport wrapper): it receives the request and
the rest of the chain, and either answers itself (a hit), or calls the rest, possibly with a
changed request (a gate that turns storing off) and possibly acting on the result (writing it
behind). The composition root (``semcache.compose``) lists the stages in order, so adding one
is a new module plus one line there; the facade only runs the chain.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from semcache.core.answer import Answer
from semcache.core.fingerprint import RequestKeys
from semcache.core.policy import CacheControl, Decision
from semcache.pipeline.semantic_tier import EXACT_ONLY_SCOPE
from semcache.stats import MissReason, Tier

if TYPE_CHECKING:
    import numpy as np
    from litellm import ModelResponse
    from litellm.types.utils import ModelResponseStream

    from semcache.privacy.gate import Verdict
    from semcache.stores.base import Match

Sink = Callable[["ModelResponseStream", bool], None]
"""A streaming caller's live-chunk consumer: ``(chunk, shared)``; ``shared`` is True when the
chunk belongs to another caller's flight (the consumer must not mutate it)."""

Emit = Callable[["ModelResponseStream"], None]
"""Inside a flight: where the upstream call's chunks go (the flight's fan-out buffer)."""


@dataclass(frozen=True, slots=True)
class Request:
    """One validated call as the stages see it; stages pass on changed copies, never mutate.

    ``sink`` is set for a streaming caller outside a flight, ``emit`` inside one. ``vector`` and
    ``nearest`` are filled by the semantic stage (the question's embedding, reused to store the
    answer, and the best similarity it saw), and ``candidate`` with the entry it saw there
    (not served: miss analysis records it without searching again). ``privacy`` is the
    private-data gate's verdict on the question (None when the gate did not look).
    ``miss_reason``: why no tier answered so far (set by the stage that gave up).
    ``routed_to``: the fallback embedder the readability gate routed the question to;
    ``unreadable``: no embedder reads it (exact-only). ``hedge``: the semantic lookup was
    refused for the queue and may still race the upstream call.
    """

    params: dict[str, Any]
    tenant: str
    control: CacheControl
    keys: RequestKeys
    decision: Decision
    stream: bool
    sink: Sink | None = None
    emit: Emit | None = None
    vector: np.ndarray | None = None
    nearest: float | None = None
    candidate: Match | None = None
    privacy: Verdict | None = None
    miss_reason: MissReason | None = None
    routed_to: str | None = None
    unreadable: bool = False
    hedge: bool = False

    @property
    def entry_scope(self) -> str:
        """The scope this request's entry is stored and retrieved under: its semantic scope, or
        ``EXACT_ONLY_SCOPE`` when it may only be answered exactly (no user question last, or a
        decision that keeps it out of the semantic tier), so no semantic search can reach it."""
        scope = self.keys.scope
        return scope if scope is not None and self.decision.semantic else EXACT_ONLY_SCOPE


@dataclass(frozen=True, slots=True)
class Found:
    """What the chain produced for a request: the answer and how it was found.

    ``response`` is the live upstream object (only the caller whose stage made the call gets
    it; everyone else gets a fresh copy built from ``answer``). ``origin`` is, for a coalesced
    answer, the tier the leader's answer came from. ``storable`` False keeps a fresh answer out
    of every tier; ``stored`` is what to keep instead of ``answer`` (a masked copy).
    ``compression_saved_tokens`` / ``_usd``: input saved by compressing the upstream prompt.
    ``provider_cached_tokens`` / ``_usd``: input tokens the provider's prompt cache served on
    this request's own upstream call, and what they saved.
    ``private_data``: kinds of private data found in the question (never the text).
    ``score``: the scorer's score of a semantic hit when one ran; ``serve_id``: the id the
    tuning stage gave a semantic hit (feedback names it). ``unreadable``: the question is in
    a script the embedder cannot read, so it was exact-only (miss reason ``unreadable``).
    ``routed_to``: the fallback embedder that looked the question up instead (the primary
    cannot read it; ``semantic.fallback_embedder``); None otherwise.
    """

    answer: Answer
    tier: Tier
    similarity: float | None = None
    nearest: float | None = None
    response: ModelResponse | None = None
    origin: Tier | None = None
    storable: bool = True
    stored: Answer | None = None
    compression_saved_tokens: int = 0
    compression_saved_usd: float = 0.0
    provider_cached_tokens: int = 0
    provider_cached_usd: float = 0.0
    private_data: tuple[str, ...] = ()
    score: float | None = None
    serve_id: str | None = None
    miss_reason: MissReason | None = None
    unreadable: bool = False
    routed_to: str | None = None


Next = Callable[[Request], Awaitable[Found]]


class Stage(Protocol):
    """One step of the request path; calls ``call_next`` unless it answers itself."""

    async def __call__(self, request: Request, call_next: Next) -> Found: ...


class Pipeline:
    """Stages in order, ending in a terminal step that always answers (the upstream call)."""

    def __init__(self, stages: Sequence[Stage], terminal: Next) -> None:
        self.stages = tuple(stages)
        chain = terminal
        for stage in reversed(self.stages):
            chain = partial(stage, call_next=chain)
        self._chain = chain

    async def run(self, request: Request) -> Found:
        return await self._chain(request)
