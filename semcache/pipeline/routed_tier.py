"""A semantic tier with a second lane: questions its embedder cannot read go to another.

An English embedder maps Chinese, Thai or Hindi text to nearly one vector, so the readability
gate makes such questions exact-only (:mod:`semcache.pipeline.readability`). With
``semantic.fallback_embedder`` set, a question the primary cannot read but the fallback can
is *routed*: embedded by the fallback, searched and stored in the fallback's own store (its
own embedder name, dimension and partition), judged at the fallback's own threshold. Entries
of the two embedders are never compared: they live in different stores, and every lookup's
:class:`~semcache.stores.where.Where` names the lane's embedder.

``RoutedTier`` is the primary lane itself (a :class:`SemanticTier`) holding the fallback lane
(another ``SemanticTier``); each method that takes a text or an entry picks the lane from it
(:meth:`lane`, :meth:`lane_named`), so the stages above need not know there are two.

The fallback's model loads in the background once the primary is set up (never on a
request, never delaying the primary's start); until it is up, routed lookups are misses
with reason ``warming`` (:meth:`ready_for`). A warm-up that fails is retried after
``retry_s``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from semcache.pipeline.lookup_result import Search, Verdict
from semcache.pipeline.semantic_tier import EXACT_ONLY_SCOPE, SemanticTier
from semcache.stats import Stats
from semcache.stores.base import Entry, Match, VectorStore, Where

_log = logging.getLogger(__name__)

ROUTED = "fallback_routed"
"""``stats().counts`` name: questions routed to the fallback embedder."""
FALLBACK_WARMING = "fallback_warming"
"""``stats().counts`` name: routed lookups skipped because the fallback's model was loading."""
FALLBACK_SETUP = "fallback_setup_failures"
"""``stats().counts`` name: fallback warm-ups that failed (retried after ``retry_s``)."""


class RoutedTier(SemanticTier):
    def __init__(
        self,
        *,
        fallback: SemanticTier,
        fallback_name: str,
        stats: Stats | None = None,
        retry_s: float = 30.0,
        monotonic: Callable[[], float] = time.monotonic,
        **primary: Any,
    ) -> None:
        """``fallback``: the second lane (its own embedder, store and threshold);
        ``fallback_name``: its configured name, reported before its model has loaded;
        ``primary``: :class:`SemanticTier`'s arguments for this (the primary) lane."""
        super().__init__(**primary)
        self.fallback = fallback
        self.fallback_name = fallback_name
        self._stats = stats
        self._retry_s = retry_s
        self._monotonic = monotonic
        self._warming: asyncio.Task[None] | None = None
        self._failed_at: float | None = None

    # -- routing ---------------------------------------------------------------------------

    def reads(self, text: str) -> bool:
        """Either lane reads ``text``: only text neither reads is exact-only."""
        return super().reads(text) or self.fallback.reads(text)

    def routes(self, text: str) -> bool:
        return not super().reads(text) and self.fallback.reads(text)

    def lane(self, text: str | None) -> SemanticTier:
        return self.fallback if text is not None and self.routes(text) else self

    def lane_named(self, embedder: str) -> SemanticTier:
        fallback = self.fallback.embedder
        return self.fallback if fallback is not None and fallback.name == embedder else self

    def lanes(self) -> tuple[SemanticTier, ...]:
        return (self, self.fallback)

    def routed_name(self) -> str:
        """The fallback embedder's name (the loaded model's, else the configured one)."""
        embedder = self.fallback.embedder
        return self.fallback_name if embedder is None else embedder.name

    def ready_for(self, text: str) -> bool:
        """Can ``text`` be looked up now without waiting for a model? False while the
        fallback loads (starting its warm-up when none runs and none failed lately)."""
        if not self.routes(text):
            return super().ready_for(text)
        if self.fallback.store is not None:
            return True
        self._start_fallback()
        return False

    # -- lifecycle -------------------------------------------------------------------------

    async def setup(self) -> VectorStore:
        """The primary's setup; the fallback's begins after it, in the background."""
        store = await super().setup()
        self._start_fallback()
        return store

    def _start_fallback(self) -> None:
        if self.fallback.store is not None or (
            self._warming is not None and not self._warming.done()
        ):
            return
        failed_at = self._failed_at
        if failed_at is not None and self._monotonic() - failed_at < self._retry_s:
            return
        self._warming = asyncio.get_running_loop().create_task(self._warm_fallback())

    async def _warm_fallback(self) -> None:
        started = self._monotonic()
        try:
            await self.fallback.setup()
        except Exception:  # counted and retried: routed questions miss meanwhile
            self._failed_at = self._monotonic()
            if self._stats is not None:
                self._stats.count(FALLBACK_SETUP)
            _log.warning("fallback embedder %s failed to start", self.fallback_name, exc_info=True)
            return
        self._failed_at = None
        _log.info(
            "fallback embedder %s warm in %.2f s", self.fallback_name, self._monotonic() - started
        )

    async def close(self) -> None:
        """Let the fallback's warm-up finish (cancelling could leave its store open), then
        close both lanes."""
        warming = self._warming
        if warming is not None and not warming.done():
            await asyncio.gather(warming, return_exceptions=True)
        await self.fallback.close()
        await super().close()

    # -- per-lane operations ---------------------------------------------------------------

    async def embed(
        self,
        text: str,
        *,
        background: bool = False,
        queued: Callable[[], None] | None = None,
    ) -> np.ndarray:
        if self.routes(text):
            return await self.fallback.embed(text, background=background, queued=queued)
        return await super().embed(text, background=background, queued=queued)

    async def search(
        self,
        prompt: str,
        *,
        tenant: str,
        namespace: str,
        scope: str,
        now: float,
        queued: Callable[[], None] | None = None,
    ) -> Search:
        if self.routes(prompt):
            return await self.fallback.search(
                prompt, tenant=tenant, namespace=namespace, scope=scope, now=now, queued=queued
            )
        return await super().search(
            prompt, tenant=tenant, namespace=namespace, scope=scope, now=now, queued=queued
        )

    def judge(
        self, prompt: str, question: str | None, similarity: float, namespace: str
    ) -> Verdict:
        """A routed question is judged by the fallback's rule (its own threshold; no scorer,
        no namespace overrides: those are stated in the primary's cosines)."""
        if self.routes(prompt):
            return self.fallback.judge(prompt, question, similarity, namespace)
        return super().judge(prompt, question, similarity, namespace)

    async def ajudge(
        self, prompt: str, question: str | None, similarity: float, namespace: str
    ) -> Verdict:
        if self.routes(prompt):
            return await self.fallback.ajudge(prompt, question, similarity, namespace)
        return await super().ajudge(prompt, question, similarity, namespace)

    async def retrieve(
        self,
        key: str,
        *,
        tenant: str,
        namespace: str,
        scope: str,
        now: float,
        filters: tuple[tuple[str, tuple[str | int, ...]], ...] = (),
        prompt: str | None = None,
    ) -> Entry | None:
        """From the lane of ``prompt``; without it (a withdrawal by key), the primary's store
        and then, for a semantic scope, the fallback's once it is open. Exact-only entries
        are always the primary's. Never waits for the fallback's model."""
        fallback = self.fallback
        semantic = scope != EXACT_ONLY_SCOPE
        if prompt is not None and semantic and self.routes(prompt):
            if not fallback.exact_ready:
                return None
            return await fallback.retrieve(
                key, tenant=tenant, namespace=namespace, scope=scope, now=now, filters=filters
            )
        entry = await super().retrieve(
            key, tenant=tenant, namespace=namespace, scope=scope, now=now, filters=filters
        )
        if entry is None and prompt is None and semantic and fallback.exact_ready:
            return await fallback.retrieve(
                key, tenant=tenant, namespace=namespace, scope=scope, now=now, filters=filters
            )
        return entry

    async def nearest_k(self, vector: np.ndarray, where: Where, k: int) -> list[Match]:
        lane = self.lane_named(where.embedder)
        if lane is self:
            return await super().nearest_k(vector, where, k)
        return await lane.nearest_k(vector, where, k)

    async def upsert_many(self, entries: Sequence[Entry]) -> None:
        """Each entry into the store of the embedder that made its vector."""
        routed = self.fallback.embedder
        name = None if routed is None else routed.name
        ours = [e for e in entries if e.embedder != name]
        theirs = [e for e in entries if e.embedder == name]
        if theirs:
            await self.fallback.upsert_many(theirs)
        if ours:
            await super().upsert_many(ours)
