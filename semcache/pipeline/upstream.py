"""The terminal step: the LLM call itself, through the ``Upstream`` plug point."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from litellm import ModelResponse

from semcache.core.answer import Answer, encode, response_cost
from semcache.pipeline.base import Found, Request
from semcache.runtime.admission import UpstreamLatency
from semcache.runtime.upstream import Upstream, stream_and_assemble
from semcache.stats import MissReason, Stats, Tier
from semcache.stores.base import NEVER_EXPIRES, Entry


class UpstreamCall:
    """Call upstream (streaming into the flight when the leader streams) and wrap the answer.

    The answer becomes an :class:`Entry` here (key, partition, expiry from the request's TTL,
    else its namespace's default in ``namespace_ttl_s``, else ``default_ttl_s``), so every
    later stage and every follower sees one shape; whether it is stored is the write-behind
    stage's decision.
    """

    def __init__(
        self,
        upstream: Upstream,
        stats: Stats,
        clock: Callable[[], float],
        *,
        default_ttl_s: float | None,
        namespace_ttl_s: Mapping[str, float | None] | None = None,
        store_question: bool,
        latency: UpstreamLatency | None = None,
    ) -> None:
        self._latency = latency
        self._upstream = upstream
        self._stats = stats
        self._clock = clock
        self.default_ttl_s = default_ttl_s
        self._namespace_ttl_s = dict(namespace_ttl_s or {})
        self._store_question = store_question

    async def __call__(self, request: Request) -> Found:
        started = time.perf_counter()
        latency = self._latency  # what a hit saves: the lookup budget and the window follow it
        if latency is not None:
            latency.begin()
        try:
            if request.stream and request.emit is not None:
                response = await stream_and_assemble(self._upstream, request.params, request.emit)
            else:
                response = await self._upstream.complete(request.params)
        except BaseException:
            if latency is not None:
                latency.abandon()
            raise
        if latency is not None:
            latency.observe(time.perf_counter() - started)
        self._stats.count("upstream_calls")
        return self.found(request, response)

    def found(self, request: Request, response: ModelResponse) -> Found:
        """``response`` as the answer to ``request``; also how ``store()`` hands in an answer
        the caller obtained itself, so both become entries by the same rules."""
        tier = Tier.BYPASS if request.decision.bypass else Tier.MISS
        answer = Answer.of(self._entry(request, encode(response, response_cost(response))))
        reason = request.miss_reason
        if reason is None:
            reason = MissReason.BYPASS if not request.decision.lookup else MissReason.NO_CANDIDATE
        return Found(answer, tier, nearest=request.nearest, response=response, miss_reason=reason)

    def _entry(self, request: Request, envelope: str) -> Entry:
        now = self._clock()
        ttl = request.control.ttl
        if ttl is None:
            ttl = self._namespace_ttl_s.get(request.control.namespace, self.default_ttl_s)
        keys = request.keys
        return Entry(
            key=keys.exact,
            tenant=request.tenant,
            namespace=request.control.namespace,
            model=keys.model,
            scope=request.entry_scope,
            response=envelope,
            created_at=now,
            expires_at=NEVER_EXPIRES if ttl is None else now + ttl,
            embedder="",  # set when written: the embedder that made the stored vector
            question=keys.prompt if self._store_question else None,
        )
