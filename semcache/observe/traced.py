"""Tracing decorators of the cache's plug points: each implements the same Protocol as the
object it wraps and adds one span per call, a child of the request's span.

The composition root wraps the embedder, the vector store, the answer guard, the upstream
and the write-behind in these when OpenTelemetry is on, so no stage of the request path
knows about tracing. Everything else a wrapped object offers (optional protocols such as
``StoreAdmin``, an embedder's ``window``) is passed through unchanged: ``isinstance``
checks against runtime-checkable protocols answer as for the wrapped object.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import numpy as np
from litellm import ModelResponse
from litellm.types.utils import ModelResponseStream

from semcache.core.answer import Answer
from semcache.embedders.base import Embedder
from semcache.guard import HitVerifier
from semcache.guard.base import EmbeddingVerifier
from semcache.observe.otel import Telemetry
from semcache.pipeline.write_behind import WriteBehind
from semcache.runtime.upstream import Upstream
from semcache.stores.base import Entry, Match, VectorStore, Where


class TracedEmbedder:
    """An :class:`Embedder` whose every batch is a ``semcache.embed`` span naming the
    embedder (``semcache.embedder``: which lane of a routed tier embedded)."""

    def __init__(self, inner: Embedder, telemetry: Telemetry) -> None:
        self._inner = inner
        self._telemetry = telemetry

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        attributes = {"semcache.embedder": self._inner.name, "semcache.batch_size": len(texts)}
        with self._telemetry.phase("embed", attributes):
            return self._inner.embed(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TracedStore:
    """A :class:`VectorStore` whose searches are ``semcache.search`` spans (with the
    nearest similarity found), exact reads ``semcache.retrieve`` and writes
    ``semcache.upsert``."""

    def __init__(self, inner: VectorStore, telemetry: Telemetry) -> None:
        self._inner = inner
        self._telemetry = telemetry

    def setup(self, embedder: str, dim: int) -> None:
        self._inner.setup(embedder, dim)

    def close(self) -> None:
        self._inner.close()

    def retrieve(self, key: str, where: Where) -> Entry | None:
        with self._telemetry.phase("retrieve") as span:
            entry = self._inner.retrieve(key, where)
            span.set_attribute("semcache.found", entry is not None)
            return entry

    def nearest(self, vector: np.ndarray, where: Where) -> Match | None:
        with self._telemetry.phase("search") as span:
            match = self._inner.nearest(vector, where)
            if match is not None:
                span.set_attribute("semcache.nearest_similarity", match.similarity)
            return match

    def nearest_k(self, vector: np.ndarray, where: Where, k: int) -> list[Match]:
        with self._telemetry.phase("search", {"semcache.k": k}) as span:
            found = self._inner.nearest_k(vector, where, k)
            if found:
                span.set_attribute("semcache.nearest_similarity", found[0].similarity)
            return found

    def upsert(self, entries: Sequence[Entry]) -> None:
        with self._telemetry.phase("upsert", {"semcache.batch_size": len(entries)}):
            self._inner.upsert(entries)

    def purge_expired(self, now: float) -> int:
        return self._inner.purge_expired(now)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TracedVerifier:
    """A :class:`HitVerifier` whose every verdict is a ``semcache.judge`` span."""

    def __init__(self, inner: HitVerifier, telemetry: Telemetry) -> None:
        self._inner = inner
        self._telemetry = telemetry

    @property
    def name(self) -> str:
        return self._inner.name

    def verify(self, query: str, candidate: str) -> bool:
        with self._telemetry.phase("judge", {"semcache.guard": self._inner.name}) as span:
            verdict = self._inner.verify(query, candidate)
            span.set_attribute("semcache.verdict", verdict)
            return verdict

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TracedEmbeddingVerifier(TracedVerifier):
    """:class:`TracedVerifier` of a guard that may embed (keeps ``embeds``)."""

    def __init__(self, inner: EmbeddingVerifier, telemetry: Telemetry) -> None:
        super().__init__(inner, telemetry)  # type: ignore[arg-type]
        self._embeds = inner

    def embeds(self, query: str, candidate: str) -> bool:
        return self._embeds.embeds(query, candidate)


def traced_verifier(inner: HitVerifier, telemetry: Telemetry) -> HitVerifier:
    """The traced guard, an :class:`EmbeddingVerifier` exactly when ``inner`` is one."""
    if isinstance(inner, EmbeddingVerifier):
        return TracedEmbeddingVerifier(inner, telemetry)
    return TracedVerifier(inner, telemetry)


class TracedUpstream:
    """An :class:`Upstream` whose calls are ``semcache.upstream`` spans (a stream's span
    ends with its last chunk)."""

    def __init__(self, inner: Upstream, telemetry: Telemetry) -> None:
        self._inner = inner
        self._telemetry = telemetry

    async def complete(self, params: Mapping[str, Any]) -> ModelResponse:
        model = str(params.get("model", ""))
        with self._telemetry.phase("upstream", {"gen_ai.request.model": model}):
            return await self._inner.complete(params)

    async def stream(self, params: Mapping[str, Any]) -> AsyncIterator[ModelResponseStream]:
        span, started = self._telemetry.start("upstream")
        span.set_attribute("gen_ai.request.model", str(params.get("model", "")))
        span.set_attribute("semcache.stream", True)
        try:
            async for chunk in self._inner.stream(params):
                yield chunk
        finally:
            self._telemetry.end("upstream", span, started)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TracedWriteBehind(WriteBehind):
    """Write-behind whose every store write is a ``semcache.write`` span, from the moment
    the answer is handed over to the write's outcome (``semcache.write.outcome``)."""

    def __init__(self, *args: Any, telemetry: Telemetry, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._telemetry = telemetry

    def submit(
        self, answer: Answer, *, prompt: str | None, vector: np.ndarray | None, token: int
    ) -> asyncio.Task[str] | None:
        span, started = self._telemetry.start("write")
        task = super().submit(answer, prompt=prompt, vector=vector, token=token)
        if task is None:
            span.set_attribute("semcache.write.outcome", "not_stored")
            self._telemetry.end("write", span, started)
            return None

        def ended(done: asyncio.Task[str]) -> None:
            if done.cancelled():
                outcome = "cancelled"
            elif done.exception() is not None:
                outcome = "failed"
            else:
                outcome = done.result().split(":")[0]
            span.set_attribute("semcache.write.outcome", outcome)
            self._telemetry.end("write", span, started)

        task.add_done_callback(ended)
        return task
