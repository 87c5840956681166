"""Serves: give every semantic hit a serve id, remember it, maybe shadow-verify it.

The lookup calls it on each semantic hit (not exact hits, which feedback finds by key) with
the request it answered. The serve id travels on ``Found.serve_id`` to
``CacheInfo.serve_id`` (and the proxy's ``x-semcache-serve-id``); with a shared Redis tier the
serve is recorded there too, so feedback may reach any process.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Request
from semcache.tuning.ledger import ServeLedger
from semcache.tuning.records import Served
from semcache.tuning.shadow import ShadowVerifier

if TYPE_CHECKING:
    from semcache.replicas.serves import SharedServes


class Serves:
    def __init__(
        self,
        backend: SemanticBackend,
        ledger: ServeLedger,
        shadow: ShadowVerifier | None,
        clock: Callable[[], float],
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
        shared: SharedServes | None = None,
    ) -> None:
        self._shared = shared
        self._backend = backend
        self._ledger = ledger
        self._shadow = shadow
        self._clock = clock
        self._new_id = new_id

    async def __call__(self, request: Request, found: Found) -> Found:
        """The semantic hit ``found`` for ``request``, with its serve id (remembered here and,
        with a shared Redis tier, there before the answer goes out: feedback may come to
        another process)."""
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
        if self._shared is not None:
            await self._shared.put(served)
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
