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
After a failure setup is retried only every ``retry_s``, never on every request; after a
store server that did not answer (:class:`~semcache.errors.StoreUnreachable`) every
``UNREACHABLE_RETRY_S``: the model is kept loaded, so a retry is one connection attempt, and
the tier should be back within seconds of its server, not half a minute later.
Exact reads do not wait for the model: a store on disk that records its embedder is opened
first in the warm-up (:meth:`SemanticTier.setup`), and the exact-store stage asks
:meth:`exact`, so after a restart exact repeats are answered from disk while the model loads
(once the purge log below has been replayed: the gate holds exact reads back too).

A replica that keeps its own store beside a shared Redis must not serve a hit from it until
it has replayed the purges it missed while it was down (:mod:`semcache.replicas.purges`):
:class:`ServingGate` is that switch. While it is closed :meth:`available` answers None (the
request goes on to Redis and upstream), ``warming`` stays true and ``/readyz`` says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from semcache.errors import StoreError, StoreLockedError, StoreUnreachable
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.runtime.failopen import FailOpen
from semcache.runtime.loop import interpreter_exiting
from semcache.stats import Stats
from semcache.stores.base import StoreAdmin

_log = logging.getLogger(__name__)

#: Seconds between setup attempts while the store's server does not answer.
UNREACHABLE_RETRY_S = 1.0

WARMING = "semantic_warming"
"""Counted when a lookup skips the tier because its model is still loading."""


class ServingGate:
    """May the local store serve hits now? Open unless something must happen first.

    ``require`` closes it and names what opens it (the purge log's reader, started with the
    backend); ``release`` opens it. ``settled`` is set once waiting is pointless for now:
    the gate opened, or what opens it failed (Redis unreachable), so ``ready()`` answers at
    once instead of waiting out its timeout."""

    def __init__(self) -> None:
        self._reason: str | None = None
        self._starter: Callable[[], None] | None = None
        self._started = False
        self._settled = asyncio.Event()
        self._settled.set()

    @property
    def open(self) -> bool:
        return self._reason is None

    @property
    def reason(self) -> str | None:
        """Why local-store hits are held back (None: they are not)."""
        return self._reason

    def require(self, reason: str, starter: Callable[[], None]) -> None:
        self._starter = starter
        self.close(reason)

    def start(self) -> None:
        """Run the starter once (on the cache's loop)."""
        if self._starter is not None and not self._started:
            self._started = True
            self._starter()

    def close(self, reason: str, *, settled: bool = False) -> None:
        self._reason = reason
        if settled:
            self._settled.set()
        else:
            self._settled.clear()

    def release(self) -> None:
        self._reason = None
        self._settled.set()

    async def settled(self, timeout_s: float) -> bool:
        """Wait (at most ``timeout_s``) until the gate opened or cannot open for now;
        whether it is open."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._settled.wait(), timeout_s)
        return self.open


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
        gate: ServingGate | None = None,
    ) -> None:
        self.gate = gate if gate is not None else ServingGate()
        self.tier = tier
        self._failopen = failopen
        self._stats = stats
        self._setup_timeout_s = setup_timeout_s
        self._retry_s = retry_s
        self._monotonic = monotonic
        self._failed_at: float | None = None
        self._cooldown_s = retry_s
        self._unreachable = False  # the last warm-up failed on a store server that did not answer
        self._warming: asyncio.Task[SemanticTier | None] | None = None
        #: Set while the store is held by another process: a misconfiguration, not a
        #: transient failure, so ``SemanticCache.ready()`` raises it instead of missing.
        self.locked: StoreLockedError | None = None
        #: Entries the store held when this process opened it, before any write of its own
        #: (None: not opened yet, or it cannot count): the purge log's replay asks.
        self.opened_with: int | None = None

    @property
    def started(self) -> SemanticTier | None:
        """The tier if it is already set up (never starts it)."""
        tier = self.tier
        return tier if tier is not None and tier.store is not None else None

    @property
    def warming(self) -> bool:
        """True while a warm-up is loading the model and opening the store, or while the
        gate holds the store's hits back (a purge replay pending)."""
        return self._loading or (self.tier is not None and not self.gate.open)

    @property
    def reconnecting(self) -> bool:
        """True while the warm-up is only retrying a store server that did not answer (an
        outage, graded degraded by health, not a model still loading)."""
        return self._unreachable and self.gate.open

    def not_set_up(self) -> StoreError:
        """The error for work that needs the tier while its warm-up failed: a
        :class:`StoreUnreachable` when the store's server did not answer (graded like it)."""
        error = StoreUnreachable if self._unreachable else StoreError
        return error("the semantic tier is not set up (its warm-up failed)")

    @property
    def _loading(self) -> bool:
        return self._warming is not None and not self._warming.done()

    def start(self) -> None:
        """Begin the warm-up in the background on the running loop (idempotent; a no-op
        when the tier is off, already up, or failed less than ``retry_s`` ago); starts
        what opens the gate too."""
        self.gate.start()
        tier = self.tier
        if tier is None or tier.store is not None or self._loading or self._cooling_down():
            return
        self._warming = asyncio.get_running_loop().create_task(self._warm(tier))

    def available(self) -> SemanticTier | None:
        """The tier if it is up, else None at once (starting the warm-up if none is running);
        for lookups, which must never wait for a model to load."""
        tier = self.started
        if tier is not None and not self.gate.open:
            self._stats.count(WARMING)
            return None
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
        if tier is not None and tier.exact_ready and self.gate.open:
            return tier
        return self.available()

    async def ready(self) -> SemanticTier | None:
        """The tier once set up, waiting for a warm-up in progress (or running one); None
        when it is off or failing for now. Not gated: for writes, purges and withdrawals
        (lookups that may serve a hit check ``gate`` themselves)."""
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
        return failed_at is not None and self._monotonic() - failed_at < self._cooldown_s

    async def _warm(self, tier: SemanticTier) -> SemanticTier | None:
        started = self._monotonic()
        store = await self._failopen.call(
            "semantic_setup", lambda: self._setup(tier), None, timeout_s=self._setup_timeout_s
        )
        if store is None:
            self._failed_at = self._monotonic()
            setup = self._failopen.state().get("semantic_setup")
            self._unreachable = setup is not None and setup.down and setup.unreachable
            self._cooldown_s = (
                min(self._retry_s, UNREACHABLE_RETRY_S) if self._unreachable else self._retry_s
            )
            log = _log.debug if interpreter_exiting() else _log.warning  # quiet at exit
            log("semantic tier warm-up failed; retrying in %.0f s", self._cooldown_s)
            return None
        self._failed_at, self._unreachable = None, False
        _log.info("semantic tier warm in %.2f s", self._monotonic() - started)
        return tier

    async def _setup(self, tier: SemanticTier) -> object:
        try:
            store = await tier.setup()
        except StoreLockedError as exc:
            self.locked = exc
            raise
        self.locked = None
        if isinstance(store, StoreAdmin) and self.opened_with is None:
            # before the warm-up ends: writes wait for it, so none is counted here
            self.opened_with = await asyncio.to_thread(store.count)
        return store

    async def close(self) -> None:
        """Let a warm-up in progress finish (cancelling it could leave a store opened by its
        thread that nobody closes, holding the store's lock), then close the tier."""
        warming = self._warming
        if warming is not None and not warming.done():
            await asyncio.gather(warming, return_exceptions=True)
        if self.tier is not None:
            await self.tier.close()
