"""Admission control: start cache work only when it can start soon, otherwise skip it.

Why not timeouts: a timeout lets the work queue up first and gives up after the user has
already waited (issue 10: every lookup waited 2 s, then went upstream anyway). A gate in
front of the queue refuses at once, so a skipped lookup costs nothing and the request goes
upstream at no-cache speed.

Contract of :class:`Admission`:

- ``enter()`` returns a :class:`Ticket` when the expected wait for this piece of work is at
  most ``wait_budget_s``, else None (the caller skips the work and counts it as shed).
  The caller must ``leave()`` every ticket it got, success or failure.
- The expected wait is ``in_flight x cost``: work already admitted times the observed
  cost per completed item (seconds of busy time between completions, an exponentially
  weighted average). A micro-batched embedder finishing n items per batch of T seconds
  shows a cost of T/n, so the estimate follows batching without knowing about it.
- When nothing is in flight the gate always admits: the estimate refreshes even after a
  slow spell (a gate that only ever refuses would never learn that the spell ended).
  Before the first completion the cost is unknown, so a cold gate admits one piece of work
  at a time (a burst at start-up must not all queue behind a model that is still slow).
- ``max_in_flight`` (optional) is a hard ceiling whatever the estimate says.
- ``lag`` (optional, a :class:`LoopLag`): how late the event loop currently runs its
  callbacks. A late loop means the process is out of CPU (or GIL): work admitted then would
  take CPU from the requests themselves, which is how a cache makes a saturated proxy
  slower than no cache. So while the lag exceeds ``max_lag_s`` nothing is admitted, even
  with nothing in flight (the lag is measured on its own, so it still refreshes). It has
  its own limit, above the wait budget, because a busy machine delays every wake-up by a
  few milliseconds without being saturated.

- ``budget`` (optional, a :class:`WaitBudget`) replaces the fixed ``wait_budget_s`` with
  one relative to what the work can save: a lookup that hits saves an upstream call, so it
  may wait a ``fraction`` of the upstream p50 the cache observes (never less than the
  floor, ``wait_budget_s``). Shedding a lookup to save 20 ms of embedding costs a second of
  upstream call and its price (issue 24: 1 semantic hit in 2,714 requests under load).
- ``backlog`` (optional): the embedder's own queue, ``(unqueued) -> seconds or None``
  (``MicroBatcher.expected_wait_s``): how long a lookup entering now would wait for its
  vector, behind the texts queued at the embedder, the batch it is running, and
  ``unqueued`` more: this gate's tickets admitted but not handed to the embedder yet
  (``Ticket.queued()`` marks the hand-over; a burst admitted in one instant reaches the
  queue a moment later, and must count). What the embedder has finished does not count,
  even while its callers wait for the event loop to resume them, nor do tickets searching
  the store or judging: counting every admitted lookup as embedder work made 50 concurrent
  store searches, and a late event loop, look like a queue and shed hits (issue 24). Store
  writes do not count either: they queue behind lookups. With no ticket of this gate in
  flight a lookup is always admitted, whatever the estimate (it waits for at most the
  batch running now, so one sequential client is never shed); before the first batch
  nothing is known: admitted.
- ``hedge()``: a second chance for a lookup ``enter()`` refused: it runs beside the
  upstream call instead of before it, so it delays nothing, and a hit that arrives first
  replaces the call (issue 24: shed paraphrases paid a second of upstream call each).
  ``hedge_ended(lost=...)`` reports each hedge's outcome; while nearly every recent hedge
  lost (the upstream answered first), hedges pause but for one probe in
  ``HEDGE_PROBE_EVERY``: a hedge that cannot finish in time only takes CPU from the requests
  (measured, 400 clients on a 100 ms upstream: 4 of 2,068 hedges won, and misses were
  708 ms slower at p50 than the no-cache proxy's, against 239 ms with hedging off).

Pure bookkeeping on one event loop (not thread-safe); the clock is injected.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections import deque
from collections.abc import Callable

#: Weight of the newest cost sample in the moving average.
ALPHA = 0.1
#: Hedges are judged on their last HEDGE_WINDOW outcomes (at least half of it seen) ...
HEDGE_WINDOW = 32
#: ... and pause while at least this share of them lost to the upstream answer ...
HEDGE_MAX_LOST = 0.9
#: ... but for one hedge in HEDGE_PROBE_EVERY, whose outcome tells when they can win again.
HEDGE_PROBE_EVERY = 8


class Ticket:
    """Admission of one piece of work; ``leave()`` it when the work ends (idempotent)."""

    __slots__ = ("_gate", "_left", "_queued")

    def __init__(self, gate: Admission) -> None:
        self._gate = gate
        self._left = False
        self._queued = False

    def queued(self) -> None:
        """The work was handed to the embedder's queue (or needs none); idempotent."""
        if not self._queued:
            self._queued = True
            self._gate._unqueued -= 1

    def leave(self) -> None:
        if not self._left:
            self.queued()
            self._left = True
            self._gate._leave()


class Admission:
    """A gate bounded by expected wait (see the module docstring)."""

    def __init__(
        self,
        *,
        wait_budget_s: float,
        max_in_flight: int | None = None,
        lag: LoopLag | None = None,
        max_lag_s: float = 0.01,
        budget: WaitBudget | None = None,
        backlog: Callable[[int], float | None] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._budget = budget
        self._backlog = backlog
        self._lag = lag
        self.max_lag_s = max_lag_s
        self.wait_budget_s = wait_budget_s
        self.max_in_flight = max_in_flight
        self._clock = clock
        self._in_flight = 0
        self._unqueued = 0  # tickets admitted, not yet handed to the embedder
        self._cost_s = 0.0
        self._busy_since = 0.0  # start of the current busy stretch's unaccounted time
        self._completed = 0
        self.admitted = 0
        self.shed = 0
        self.hedged = 0
        self.hedges_paused = 0  # hedges refused because recent ones lost
        self._hedge_lost: deque[bool] = deque(maxlen=HEDGE_WINDOW)
        self._losing_tries = 0

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def cost_s(self) -> float:
        """Observed seconds of busy time per completed item (moving average)."""
        return self._cost_s

    def expected_wait_s(self) -> float:
        """Seconds a piece of work entering now is expected to wait before it starts."""
        if self._backlog is not None:
            return self._backlog(self._unqueued) or 0.0  # None: no batch yet, nothing known
        return self._in_flight * self._cost_s

    def budget_s(self) -> float:
        """The wait this gate accepts now (seconds)."""
        if self._budget is None:
            return self.wait_budget_s
        return self._budget.seconds(floor_s=self.wait_budget_s)

    def _late(self) -> bool:
        if self._lag is None:
            return False
        self._lag.ensure_running()
        return self._lag.lag_s > self.max_lag_s

    def enter(self, *, background: bool = False) -> Ticket | None:
        """A ticket, or None when the work should be skipped (counted in ``shed``).

        ``background`` work (nobody waits for it, such as a store write) is also admitted
        while the cost is not measured yet; it is otherwise gated like any other, so it
        runs only when the queue is short and never piles up behind a busy embedder.
        """
        full = self.max_in_flight is not None and self._in_flight >= self.max_in_flight
        if self._backlog is not None:
            # the embedder's queue decides; with no lookup of ours in flight, one is always
            # admitted (it waits for at most the batch running now: a sequential client,
            # however slow its embedder, is never shed)
            wait = self.expected_wait_s()  # asked every time: the embedder learns a lookup came
            queued = full or (self._in_flight > 0 and wait > self.budget_s())
        else:
            cold = self._completed == 0 and not background
            queued = self._in_flight > 0 and (
                full or cold or self.expected_wait_s() > self.budget_s()
            )
        if queued or self._late():
            self.shed += 1
            return None
        self.admitted += 1
        return self._ticket()

    def hedge(self) -> Ticket | None:
        """A ticket for a lookup ``enter()`` refused, to run beside the upstream call rather
        than before it (the request does not wait for it: see ``SemanticStage``), or None.

        Admitted while the lookup's expected wait is under the upstream p50 the budget
        follows (a lookup that would end after the upstream answer is CPU spent for
        nothing), or while no upstream latency is known yet (a start-up burst); never while
        the loop is late (the process is short of CPU) or at ``max_in_flight``. Paused
        while recent hedges lost (see :meth:`hedge_ended`), counted in ``hedges_paused``.
        Counted in ``hedged``; the caller must ``leave()`` it like any ticket.
        """
        if self.max_in_flight is not None and self._in_flight >= self.max_in_flight:
            return None
        if self._late():
            return None
        p50 = self._budget.upstream_p50_s if self._budget is not None else None
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
        """Count one more piece of work in flight, not yet handed to the embedder."""
        if self._in_flight == 0:
            self._busy_since = self._clock()
        self._in_flight += 1
        self._unqueued += 1
        return Ticket(self)

    def _leave(self) -> None:
        now = self._clock()
        sample = max(0.0, now - self._busy_since)
        self._busy_since = now
        first = self._completed == 0
        self._cost_s = sample if first else self._cost_s + ALPHA * (sample - self._cost_s)
        self._completed += 1
        self._in_flight -= 1


class WaitBudget:
    """How long a lookup may wait: ``fraction`` of the upstream p50 latency, at least a floor.

    ``observe(seconds)`` is fed every upstream call's latency; the p50 is over the last
    ``window`` calls (a median, so a few very slow calls do not inflate it). Before the
    first call has answered, the age of the oldest call still out (``begin()`` marks one,
    ``abandon()`` forgets it when it failed) is a lower bound of the upstream latency, capped
    at ``max_unknown_s``: a lookup waiting then for an upstream that has taken 0.8 s so far
    may wait ``fraction`` of that. (With the floor alone, the first second of a load against
    a 1 s upstream was priced at 20 ms and shed the lookups of every first question.) With
    no call out and none answered, the budget is the floor.
    """

    def __init__(
        self,
        *,
        fraction: float,
        window: int = 256,
        max_unknown_s: float = 10.0,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.fraction = fraction
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
        self._latencies.append(seconds)
        self._since += 1
        self._first_out = None
        if self._p50 is None or self._since >= 16:  # a median of 256 every 16 calls
            self._p50 = statistics.median(self._latencies)
            self._since = 0

    @property
    def upstream_p50_s(self) -> float | None:
        return self._p50

    def seconds(self, *, floor_s: float) -> float:
        p50 = self._p50
        if p50 is None and self._first_out is not None:
            p50 = min(self._clock() - self._first_out, self._max_unknown_s)
        return floor_s if p50 is None else max(floor_s, self.fraction * p50)


class LoopLag:
    """How late the running event loop wakes a sleeper (seconds, moving average).

    A task sleeps ``interval_s`` at a time and records how much later than asked it woke:
    on an idle process that is well under a millisecond; when CPU-bound work (LiteLLM's
    response parsing, an embedder stealing cores, other processes) saturates the machine,
    it grows with the backlog. Started on first use on the loop that uses it; ``stop()``
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
            self.lag_s += ALPHA * 2 * (sample - self.lag_s)
