"""The tuning stage: give every semantic hit a serve id, remember it, maybe shadow-verify it.

It sits right before the semantic stage, so it sees that stage's hits (not exact hits,
which feedback finds by key) and the request they answered. The serve id travels on
``Found.serve_id`` to ``CacheInfo.serve_id`` (and the proxy's ``x-semcache-serve-id``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace

from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Next, Request
from semcache.stats import Tier
from semcache.tuning.ledger import ServeLedger
from semcache.tuning.records import Served
from semcache.tuning.shadow import ShadowVerifier


class TuningStage:
    def __init__(
        self,
        backend: SemanticBackend,
        ledger: ServeLedger,
        shadow: ShadowVerifier | None,
        clock: Callable[[], float],
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    ) -> None:
        self._backend = backend
        self._ledger = ledger
        self._shadow = shadow
        self._clock = clock
        self._new_id = new_id

    async def __call__(self, request: Request, call_next: Next) -> Found:
        found = await call_next(request)
        if found.tier is not Tier.SEMANTIC:
            return found
        entry = found.answer.entry
        served = Served(
            serve_id=self._new_id(),
            tenant=request.tenant,
            namespace=request.control.namespace,
            scope=entry.scope,
            key=entry.key,
            query=request.keys.prompt,
            question=entry.question,
            similarity=found.similarity,
            score=found.score,
            at=self._clock(),
            model=entry.model,
            routed_to=request.routed_to,
        )
        self._ledger.add(served)
        tier = self._backend.started
        if self._shadow is not None and tier is not None:
            # the lane's own threshold: a routed hit is judged on the fallback's scale
            threshold = tier.lane(request.keys.prompt).threshold_for(served.namespace)
            self._shadow.consider(served, request.params, lambda: answer_text(found), threshold)
        return replace(found, serve_id=served.serve_id)


def answer_text(found: Found) -> str | None:
    """The first choice's message text of a found answer (None for a tool call)."""
    choices = found.answer.response().choices
    content = getattr(getattr(choices[0], "message", None), "content", None) if choices else None
    return content if isinstance(content, str) else None
