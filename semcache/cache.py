"""``SemanticCache``: the facade that wraps LiteLLM's ``completion`` / ``acompletion``.

``semcache.compose`` wires the request path from settings; this class runs it. All work
after the memory tier runs on one private event loop, so the sync and async APIs share one
coalescer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from litellm import ModelResponse
from litellm.types.utils import ModelResponseStream

from semcache.compose import assemble
from semcache.config.settings import CacheSettings
from semcache.direct import DirectAPI
from semcache.embedders.base import Embedder
from semcache.errors import ConfigError
from semcache.facade import operations as ops
from semcache.facade.delivery import Delivery
from semcache.facade.embedding_cache import EmbeddingAPI
from semcache.facade.health import Health, assess, probe
from semcache.facade.streams import AsyncCacheStream, ReplayStream, SyncCacheStream
from semcache.guard import HitVerifier
from semcache.observe.lookups import RECENT_BUCKETS
from semcache.pipeline.base import Request
from semcache.protocols.api import ProtocolAPI
from semcache.runtime.loop import shared_loop
from semcache.runtime.upstream import Upstream
from semcache.stats import CacheStats, FlushReport, LookupStats, StoredEntry
from semcache.stores.base import VectorStore
from semcache.tuning.api import TuningAPI

#: Seconds the readiness probe (model load, store open) may take.
READY_TIMEOUT_S = 120.0


class SemanticCache(DirectAPI, EmbeddingAPI, TuningAPI, ProtocolAPI):
    """Drop-in cache for LiteLLM completion calls (``check``/``store`` and ``embedding`` are
    in ``semcache.direct`` and ``semcache.facade.embedding_cache``; ``feedback`` and miss analysis
    in ``semcache.tuning.api``; ``responses`` and ``messages`` in ``semcache.protocols.api``).

    Extra keyword arguments understood on every call: ``tenant=`` (a partition no tier ever
    answers across) and ``cache=`` (a ``CacheControl`` or a dict with LiteLLM's names:
    ``no-cache``, ``no-store``, ``ttl``, ``s-maxage``, ``namespace``, plus ``share-sampled``).
    Everything else goes to LiteLLM unchanged; the caller's dict is never mutated.
    """

    def __init__(
        self,
        settings: CacheSettings | None = None,
        *,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        verifier: HitVerifier | None = None,
        upstream: Upstream | None = None,
        clock: Callable[[], float] = time.time,
        fallback_embedder: Embedder | None = None,
        fallback_store: VectorStore | None = None,
    ) -> None:
        if isinstance(store, dict):  # settings, not a store: SemanticCache(store={"path": ...})
            raise ConfigError(
                "store: expects a VectorStore; store settings go into CacheSettings(store={...})"
            )
        self._parts = assemble(
            settings if settings is not None else CacheSettings(),
            embedder=embedder,
            store=store,
            verifier=verifier,
            upstream=upstream,
            clock=clock,
            fallback_embedder=fallback_embedder,
            fallback_store=fallback_store,
        )
        self._loop = shared_loop()
        # the model loads in the background from now on; requests meanwhile go upstream
        self._loop.loop.call_soon_threadsafe(self._parts.backend.start)
        self._delivery = Delivery(self._parts.stats, self._parts.audit, self._parts.clock)
        self._closed = False

    # -- calls --------------------------------------------------------------------------------
    def completion(self, **kwargs: Any) -> ModelResponse | Iterator[ModelResponseStream]:
        """``litellm.completion`` through the cache (``stream=True`` returns an iterator)."""
        request = self._parts.prepare(kwargs)
        if request.stream:
            return SyncCacheStream(self._astream(request))
        observer, started = self._parts.observer, time.time_ns()
        answer = self._delivery.from_memory(
            self._parts.path, observer, request, "completion", started
        )
        if answer is not None:
            return answer
        with observer.operation("completion", started):
            return observer.served(request.tenant, self._loop.run(self._find(request)))

    async def acompletion(
        self, **kwargs: Any
    ) -> ModelResponse | AsyncIterator[ModelResponseStream]:
        """``litellm.acompletion`` through the cache (``stream=True`` returns an async iterator)."""
        request = self._parts.prepare(kwargs)
        if request.stream:
            return self._astream(request)
        observer, started = self._parts.observer, time.time_ns()
        answer = self._delivery.from_memory(
            self._parts.path, observer, request, "completion", started
        )
        if answer is not None:
            return answer
        with observer.operation("completion", started):
            return observer.served(request.tenant, await self._loop.arun(self._find(request)))

    def batch_completion(
        self, requests: Sequence[Mapping[str, Any]], *, max_concurrency: int = 8
    ) -> list[ModelResponse | BaseException]:
        """Answer many requests concurrently; identical ones cost one upstream call.

        Every request is validated before any call is made (a bad one raises and nothing
        runs). Results keep the input order; an upstream failure is returned in its slot.
        """
        prepared = []
        for i, kwargs in enumerate(requests):
            try:
                prepared.append(self._parts.prepare({**kwargs, "stream": False}))
            except ValueError as exc:
                field = getattr(exc, "field", None)
                if field is not None:
                    raise type(exc)(f"requests[{i}].{field}", exc.problem) from None  # type: ignore[attr-defined]
                raise

        async def run_all() -> list[ModelResponse | BaseException]:
            gate = asyncio.Semaphore(max_concurrency)

            async def one(request: Request) -> ModelResponse:
                async with gate:
                    return observer.served(request.tenant, await self._find(request))

            return await asyncio.gather(*(one(r) for r in prepared), return_exceptions=True)

        observer = self._parts.observer
        with observer.operation("batch_completion"):
            return self._loop.run(run_all())

    # -- operations ---------------------------------------------------------------------------
    def stats(self) -> CacheStats:
        """Counters since start, plus sizes of the memory tier and the store, and the
        recorded lookups (``lookups``: hit rate by time, tier and tenant, nearest-similarity
        histograms; what the proxy's dashboard shows)."""
        found = self._loop.run(ops.stats(self._parts))
        return replace(found, lookups=self._parts.observer.lookups.snapshot())

    def lookups(self, *, buckets: int | None = RECENT_BUCKETS) -> LookupStats:
        """The recorded lookups (``stats().lookups``) with the last ``buckets`` time buckets
        (None: all kept, up to ``telemetry.buckets``)."""
        return self._parts.observer.lookups.snapshot(buckets)

    def purge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        """Delete matching entries from every tier; returns how many were removed. ``model`` may be
        given in any form LiteLLM resolves. Writes that began before the purge never land; store
        errors are raised (an operator asked for this).
        """
        return self._loop.run(ops.purge(self._parts, tenant, namespace, model))

    async def apurge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        """``purge`` for async callers (does not block their loop)."""
        return await self._loop.arun(ops.purge(self._parts, tenant, namespace, model))

    def recent_entries(self, *, tenant: str | None = None, limit: int = 50) -> list[StoredEntry]:
        """Newest stored entries with their hit counts, for auditing what is served."""
        return self._loop.run(ops.recent(self._parts, tenant, limit))

    async def arecent_entries(
        self, *, tenant: str | None = None, limit: int = 50
    ) -> list[StoredEntry]:
        """``recent_entries`` for async callers."""
        return await self._loop.arun(ops.recent(self._parts, tenant, limit))

    def ready(self) -> bool:
        """True when the store and embedder are usable, waiting for them to load. Until the model
        has loaded, lookups skip the semantic tier (counted as ``semantic_warming``), so call this
        first when the first request should already be able to hit.
        """
        return self._loop.run(probe(self._parts, READY_TIMEOUT_S))

    async def aready(self) -> bool:
        """``ready`` for async callers."""
        return await self._loop.arun(probe(self._parts, READY_TIMEOUT_S))

    def health(self, *, wait: bool = True) -> Health:
        """Which parts are degraded or down, and whether the cache is ready (see
        :mod:`semcache.facade.health` for the policy); probes the store and embedder.
        ``wait=False`` answers at once (not ready while the model is still loading)."""
        return self._loop.run(assess(self._parts, READY_TIMEOUT_S, wait=wait))

    async def ahealth(self, *, wait: bool = True) -> Health:
        """``health`` for async callers."""
        return await self._loop.arun(assess(self._parts, READY_TIMEOUT_S, wait=wait))

    def flush(self) -> FlushReport:
        """Wait until every answer handed to write-behind so far is stored (or failed), and
        report what was written, dropped (past ``admission.max_pending_writes``, completions
        only) and failed since the previous flush, with reasons."""
        return self._loop.run(self._parts.writer.flush())

    async def aflush(self) -> FlushReport:
        """``flush`` for async callers."""
        return await self._loop.arun(self._parts.writer.flush())

    @property
    def closed(self) -> bool:
        """True once ``close``/``aclose`` was called."""
        return self._closed

    def close(self) -> None:
        """Finish pending writes and close the store (the shared loop stays for other caches)."""
        if not self._closed:
            self._closed = True
            self._loop.run(ops.shutdown(self._parts))

    async def aclose(self) -> None:
        """``close`` for async callers."""
        if not self._closed:
            self._closed = True
            await self._loop.arun(ops.shutdown(self._parts))

    def __enter__(self) -> SemanticCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> SemanticCache:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _astream(self, request: Request) -> AsyncCacheStream | ReplayStream:
        replay = self._delivery.replay_from_memory(
            self._parts.path, self._parts.observer, request, time.time_ns()
        )
        if replay is not None:
            return replay
        items = self._delivery.stream(self._parts.path, request)
        return AsyncCacheStream(self._parts.observer.stream(request.tenant, items), self._loop)

    # -- on the loop --------------------------------------------------------------------------
    async def _find(self, request: Request) -> ModelResponse:
        return self._delivery.deliver(await self._parts.path.run(request))
