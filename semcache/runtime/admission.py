"""Admission control: start a semantic lookup only when it can start soon, otherwise skip it.

Why a gate and not a timeout: a timeout lets the work queue up first and gives up after the
user has already waited; a gate in front of the queue refuses at once, so a skipped lookup
costs nothing and the request goes upstream at no-cache speed.

Contract of :class:`Admission`:

- ``enter()`` returns a :class:`Ticket` when the lookup's expected wait for its vector is at
  most the wait budget, else None (the caller skips the lookup and counts it as shed). The
  caller must ``leave()`` every ticket it got, success or failure.
- The expected wait is the embedder's own queue, ``backlog(unqueued)`` (the micro-batcher's
  ``expected_wait_s``): the texts queued at the embedder, the batch it is running, and
  ``unqueued`` more, the tickets admitted but not handed to the embedder yet
  (``Ticket.queued()`` marks the hand-over). Tickets searching the store or judging do not
  count: they are not embedder work. ``backlog`` returning None (no batch yet) admits.
- With no ticket in flight a lookup is always admitted, whatever the estimate: it waits for
  at most the batch running now, so one sequential client is never shed.
- The budget is ``wait_fraction`` of the upstream latency (:class:`UpstreamLatency`), never
  less than ``wait_budget_s``: a lookup that hits saves an upstream call, so what it may
  wait is priced against that call.
- ``lag`` (optional, a :class:`LoopLag`): while the event loop runs later than ``max_lag_s``
  nothing is admitted, even with nothing in flight: a late loop means the process is out of
  CPU, and a lookup admitted then takes CPU from the requests themselves.
- ``hedge()``: a second chance for a lookup ``enter()`` refused, to run beside the upstream
  call instead of before it. ``hedge_ended(lost=...)`` reports each hedge's outcome; while
  nearly every recent hedge lost, hedges pause but for one probe in ``HEDGE_PROBE_EVERY``,
  because a hedge that cannot finish in time only takes CPU from the requests.

Pure bookkeeping on one event loop (not thread-safe); clocks are injected.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections import deque
from collections.abc import Callable

#: Weight of the newest sample in the loop lag's moving average.
LAG_WEIGHT = 0.2
#: Hedges are judged on their last HEDGE_WINDOW outcomes (at least half of it seen) ...
HEDGE_WINDOW = 32
#: ... and pause while at least this share of them lost to the upstream answer ...
HEDGE_MAX_LOST = 0.9
#: ... but for one hedge in HEDGE_PROBE_EVERY, whose outcome tells when they can win again.
HEDGE_PROBE_EVERY = 8


class Ticket:
    """Admission of one lookup; ``leave()`` it when the lookup ends (idempotent)."""

    __slots__ = ("_gate", "_left", "_queued")

    def __init__(self, gate: Admission) -> None:
        self._gate = gate
        self._left = False
        self._queued = False

    def queued(self) -> None:
        """The lookup was handed to the embedder's queue (or needs none); idempotent."""
        if not self._queued:
            self._queued = True
            self._gate._unqueued -= 1

    def leave(self) -> None:
        if not self._left:
            self.queued()
            self._left = True
            self._gate._in_flight -= 1


class Admission:
    """A gate bounded by the embedder's expected wait (see the module docstring)."""

    def __init__(
        self,
        *,
        backlog: Callable[[int], float | None],
        upstream: UpstreamLatency,
        wait_budget_s: float,
        wait_fraction: float,
        lag: LoopLag | None = None,
        max_lag_s: float = 0.01,
    ) -> None:
        self._backlog = backlog
        self._upstream = upstream
        self.wait_budget_s = wait_budget_s
        self.wait_fraction = wait_fraction
        self._lag = lag
        self.max_lag_s = max_lag_s
        self._in_flight = 0
        self._unqueued = 0  # tickets admitted, not yet handed to the embedder
        self.shed = 0
        self.hedged = 0
        self.hedges_paused = 0  # hedges refused because recent ones lost
        self._hedge_lost: deque[bool] = deque(maxlen=HEDGE_WINDOW)
        self._losing_tries = 0

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def expected_wait_s(self) -> float:
        """Seconds a lookup entering now is expected to wait for its vector."""
        return self._backlog(self._unqueued) or 0.0  # None: no batch yet, nothing known

    def budget_s(self) -> float:
        """The wait this gate accepts now (seconds)."""
        latency = self._upstream.estimate_s()
        if latency is None:
            return self.wait_budget_s
        return max(self.wait_budget_s, self.wait_fraction * latency)

    def _late(self) -> bool:
        if self._lag is None:
            return False
        self._lag.ensure_running()
        return self._lag.lag_s > self.max_lag_s

    def enter(self) -> Ticket | None:
        """A ticket, or None when the lookup should be skipped (counted in ``shed``)."""
        wait = self.expected_wait_s()  # asked every time: the embedder learns a lookup came
        if (self._in_flight > 0 and wait > self.budget_s()) or self._late():
            self.shed += 1
            return None
        return self._ticket()

    def hedge(self) -> Ticket | None:
        """A ticket for a lookup ``enter()`` refused, to run beside the upstream call rather
        than before it (the request does not wait for it: :mod:`semcache.pipeline.hedge`), or
        None.

        Admitted while the lookup's expected wait is under the upstream p50 (a lookup that
        would end after the upstream answer is CPU spent for nothing), or while no upstream
        latency is known yet (a start-up burst); never while the loop is late. Paused while
        recent hedges lost (see :meth:`hedge_ended`), counted in ``hedges_paused``. Counted
        in ``hedged``; the caller must ``leave()`` it like any ticket.
        """
        if self._late():
            return None
        p50 = self._upstream.p50_s
        if p50 is not None and self.expected_wait_s() >= p50:
            return None
        if self._losing():
            self._losing_tries += 1
            if self._losing_tries % HEDGE_PROBE_EVERY:
                self.hedges_paused += 1
                return None
        self.hedged += 1
        return self._ticket()

    def hedge_ended(self, *, lost: bool) -> None:
        """A hedge's outcome: ``lost`` when the upstream answered before its lookup ended.

        The wait estimate that admits a hedge counts the embedder's queue, not a machine
        short of CPU for everything; the outcomes say whether hedges finish in time."""
        self._hedge_lost.append(lost)

    def _losing(self) -> bool:
        """At least HEDGE_MAX_LOST of the recent hedges lost (half a window seen at least)."""
        seen = len(self._hedge_lost)
        if seen < HEDGE_WINDOW // 2:
            return False
        return sum(self._hedge_lost) >= HEDGE_MAX_LOST * seen

    def _ticket(self) -> Ticket:
        """Count one more lookup in flight, not yet handed to the embedder."""
        self._in_flight += 1
        self._unqueued += 1
        return Ticket(self)


class UpstreamLatency:
    """The upstream call's latency: the p50 of the last ``window`` calls.

    The one estimate of what a call costs, for everything priced against it (the lookup
    budget, hedging, the adaptive gathering window). A median, so a few very slow calls do
    not inflate it. ``observe(seconds)`` is fed every upstream call's latency. Before the
    first answer, :meth:`estimate_s` is the age of the oldest call still out (``begin()``
    marks one, ``abandon()`` forgets it when it failed), capped at ``max_unknown_s``: a lower
    bound of the latency, so the first burst against a slow upstream is not priced at the
    floor and shed.
    """

    def __init__(
        self,
        *,
        window: int = 256,
        max_unknown_s: float = 10.0,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._latencies: deque[float] = deque(maxlen=window)
        self._p50: float | None = None
        self._since = 0
        self._clock = clock
        self._max_unknown_s = max_unknown_s
        self._first_out: float | None = None  # start of the oldest call out, before any answer

    def begin(self) -> None:
        """An upstream call starts (only its start before the first answer matters)."""
        if self._p50 is None and self._first_out is None:
            self._first_out = self._clock()

    def abandon(self) -> None:
        """The call failed: its age says nothing about the upstream's latency."""
        self._first_out = None

    def observe(self, seconds: float) -> None:
        """One upstream call answered after ``seconds``."""
        self._latencies.append(seconds)
        self._since += 1
        self._first_out = None
        if self._p50 is None or self._since >= 16:  # a median of 256 every 16 calls
            self._p50 = statistics.median(self._latencies)
            self._since = 0

    @property
    def p50_s(self) -> float | None:
        """The observed p50 in seconds; None before the first answer."""
        return self._p50

    def estimate_s(self) -> float | None:
        """The p50, else the age of the oldest call out (a lower bound), else None."""
        if self._p50 is None and self._first_out is not None:
            return min(self._clock() - self._first_out, self._max_unknown_s)
        return self._p50


class LoopLag:
    """How late the running event loop wakes a sleeper (seconds, moving average).

    A task sleeps ``interval_s`` at a time and records how much later than asked it woke:
    well under a millisecond on an idle process, growing with the backlog when CPU-bound
    work saturates the machine. Started on first use on the loop that uses it; ``stop()``
    ends it. Costs one wake-up per interval.
    """

    def __init__(
        self, *, interval_s: float = 0.01, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self._interval_s = interval_s
        self._clock = clock
        self._task: asyncio.Task[None] | None = None
        self.lag_s = 0.0

    def ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._sample_forever())

    def stop(self) -> None:
        if self._task is not None:
            with contextlib.suppress(RuntimeError):  # its loop is already closed
                self._task.get_loop().call_soon_threadsafe(self._task.cancel)
            self._task = None

    async def _sample_forever(self) -> None:
        while True:
            asked = self._clock()
            await asyncio.sleep(self._interval_s)
            sample = max(0.0, self._clock() - asked - self._interval_s)
            self.lag_s += LAG_WEIGHT * (sample - self.lag_s)
