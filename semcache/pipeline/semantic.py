"""The semantic stage: answer a paraphrase from the nearest stored question in its partition."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from semcache._answer import Answer
from semcache._failopen import FailOpen
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Next, Request
from semcache.stats import Stats, Tier
from semcache.stores.base import Entry


class SemanticStage:
    """Embed the question, find the nearest live entry, apply threshold and guard.

    Only requests with a semantic scope (the last message is a user question) are looked up.
    The question's vector and the nearest similarity travel on with the request, so a miss is
    stored without embedding the question again and reports how close it came. A hit is not
    put in memory: memory answers exact repeats of the entry's own key, and the paraphrase's
    key is not that.
    """

    def __init__(
        self,
        backend: SemanticBackend,
        failopen: FailOpen,
        stats: Stats,
        clock: Callable[[], float],
        fresh: Callable[[Entry], bool] | None = None,
    ) -> None:
        self._fresh = fresh  # None: every live entry may be served
        self._backend = backend
        self._failopen = failopen
        self._stats = stats
        self._clock = clock

    async def __call__(self, request: Request, call_next: Next) -> Found:
        keys = request.keys
        prompt, scope = keys.prompt, keys.scope
        if not request.decision.lookup or prompt is None or scope is None:
            return await call_next(request)
        tier = await self._backend.ready()
        if tier is None:
            return await call_next(request)
        lookup = await self._failopen.call(
            "semantic_lookup",
            lambda: tier.lookup(
                prompt,
                tenant=request.tenant,
                namespace=request.control.namespace,
                scope=scope,
                now=self._clock(),
            ),
            None,
        )
        if lookup is None:
            return await call_next(request)
        if lookup.rejected:
            self._stats.count("verifier_rejections")
        if lookup.match is not None and (self._fresh is None or self._fresh(lookup.match.entry)):
            answer = Answer.of(lookup.match.entry)
            return Found(answer, Tier.SEMANTIC, lookup.match.similarity, lookup.nearest)
        return await call_next(replace(request, vector=lookup.vector, nearest=lookup.nearest))
