"""The semantic tier's start: load the model and open the store once, in the background.

The exact-store, semantic and write-behind stages share one ``SemanticBackend``, so the model
loads once and a failing store is retried on one schedule. Loading a model takes seconds, so
it never happens on a request: :meth:`SemanticBackend.start` (the facade calls it at
construction) begins the warm-up as a background task, and until it is done the lookup
stages ask :meth:`available`, which answers None at once, so those requests go upstream
(fail-open) and are counted (``stats().counts["semantic_warming"]``). Their answers are still
stored: write-behind waits for the warm-up (:meth:`ready`), then embeds and writes them (at
most ``admission.max_pending_writes`` at a time; beyond that a write is shed and counted, kind
``store_upsert``, and the answer stays in memory only). If the warm-up fails, the waiting
writes end without storing (the failure is counted as ``semantic_setup``).
After a failure setup is retried only every ``retry_s``, never on every request.
Exact reads do not wait for the model: a store on disk that records its embedder is opened
first in the warm-up (:meth:`SemanticTier.setup`), and the exact-store stage asks
:meth:`exact`, so after a restart exact repeats are answered from disk while the model loads.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from semcache.errors import StoreLockedError
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.runtime.failopen import FailOpen
from semcache.runtime.loop import interpreter_exiting
from semcache.stats import Stats

_log = logging.getLogger(__name__)

WARMING = "semantic_warming"
"""Counted when a lookup skips the tier because its model is still loading."""


class SemanticBackend:
    """``available()`` is the tier if it is up now (never waits); ``ready()`` waits for it."""

    def __init__(
        self,
        tier: SemanticTier | None,
        failopen: FailOpen,
        stats: Stats,
        *,
        setup_timeout_s: float = 120.0,
        retry_s: float = 30.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tier = tier
        self._failopen = failopen
        self._stats = stats
        self._setup_timeout_s = setup_timeout_s
        self._retry_s = retry_s
        self._monotonic = monotonic
        self._failed_at: float | None = None
        self._warming: asyncio.Task[SemanticTier | None] | None = None
        #: Set while the store is held by another process: a misconfiguration, not a
        #: transient failure, so ``SemanticCache.ready()`` raises it instead of missing.
        self.locked: StoreLockedError | None = None

    @property
    def started(self) -> SemanticTier | None:
        """The tier if it is already set up (never starts it)."""
        tier = self.tier
        return tier if tier is not None and tier.store is not None else None

    @property
    def warming(self) -> bool:
        """True while a warm-up is loading the model and opening the store."""
        return self._warming is not None and not self._warming.done()

    def start(self) -> None:
        """Begin the warm-up in the background on the running loop (idempotent; a no-op
        when the tier is off, already up, or failed less than ``retry_s`` ago)."""
        tier = self.tier
        if tier is None or tier.store is not None or self.warming or self._cooling_down():
            return
        self._warming = asyncio.get_running_loop().create_task(self._warm(tier))

    def available(self) -> SemanticTier | None:
        """The tier if it is up, else None at once (starting the warm-up if none is running);
        for lookups, which must never wait for a model to load."""
        tier = self.started
        if tier is not None or self.tier is None:
            return tier
        self.start()
        if self.warming:
            self._stats.count(WARMING)
        return None

    def exact(self) -> SemanticTier | None:
        """The tier if exact reads can run now (never waits): set up, or its store on disk
        open while the model still loads; else as :meth:`available`."""
        tier = self.tier
        if tier is not None and tier.exact_ready:
            return tier
        return self.available()

    async def ready(self) -> SemanticTier | None:
        """The tier once set up, waiting for a warm-up in progress (or running one); None
        when it is off or failing for now."""
        tier = self.tier
        if tier is None or tier.store is not None:
            return tier
        self.start()
        warming = self._warming
        if warming is None:
            return None
        return await asyncio.shield(warming)

    def _cooling_down(self) -> bool:
        failed_at = self._failed_at
        return failed_at is not None and self._monotonic() - failed_at < self._retry_s

    async def _warm(self, tier: SemanticTier) -> SemanticTier | None:
        started = self._monotonic()
        store = await self._failopen.call(
            "semantic_setup", lambda: self._setup(tier), None, timeout_s=self._setup_timeout_s
        )
        if store is None:
            self._failed_at = self._monotonic()
            log = _log.debug if interpreter_exiting() else _log.warning  # quiet at exit
            log("semantic tier warm-up failed; retrying in %.0f s", self._retry_s)
            return None
        self._failed_at = None
        _log.info("semantic tier warm in %.2f s", self._monotonic() - started)
        return tier

    async def _setup(self, tier: SemanticTier) -> object:
        try:
            store = await tier.setup()
        except StoreLockedError as exc:
            self.locked = exc
            raise
        self.locked = None
        return store

    async def close(self) -> None:
        """Let a warm-up in progress finish (cancelling it could leave a store opened by its
        thread that nobody closes, holding the store's lock), then close the tier."""
        warming = self._warming
        if warming is not None and not warming.done():
            await asyncio.gather(warming, return_exceptions=True)
        if self.tier is not None:
            await self.tier.close()
