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

Pure bookkeeping on one event loop (not thread-safe); the clock is injected.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: Weight of the newest cost sample in the moving average.
ALPHA = 0.1


class Ticket:
    """Admission of one piece of work; ``leave()`` it when the work ends (idempotent)."""

    __slots__ = ("_gate", "_left")

    def __init__(self, gate: Admission) -> None:
        self._gate = gate
        self._left = False

    def leave(self) -> None:
        if not self._left:
            self._left = True
            self._gate._leave()


class Admission:
    """A gate bounded by expected wait (see the module docstring)."""

    def __init__(
        self,
        *,
        wait_budget_s: float,
        max_in_flight: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.wait_budget_s = wait_budget_s
        self.max_in_flight = max_in_flight
        self._clock = clock
        self._in_flight = 0
        self._cost_s = 0.0
        self._busy_since = 0.0  # start of the current busy stretch's unaccounted time
        self._completed = 0
        self.admitted = 0
        self.shed = 0

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def cost_s(self) -> float:
        """Observed seconds of busy time per completed item (moving average)."""
        return self._cost_s

    def expected_wait_s(self) -> float:
        """Seconds a piece of work entering now is expected to wait before it starts."""
        return self._in_flight * self._cost_s

    def enter(self) -> Ticket | None:
        """A ticket, or None when the work should be skipped (counted in ``shed``)."""
        full = self.max_in_flight is not None and self._in_flight >= self.max_in_flight
        cold = self._completed == 0
        if self._in_flight and (full or cold or self.expected_wait_s() > self.wait_budget_s):
            self.shed += 1
            return None
        if self._in_flight == 0:
            self._busy_since = self._clock()
        self._in_flight += 1
        self.admitted += 1
        return Ticket(self)

    def _leave(self) -> None:
        now = self._clock()
        sample = max(0.0, now - self._busy_since)
        self._busy_since = now
        first = self._completed == 0
        self._cost_s = sample if first else self._cost_s + ALPHA * (sample - self._cost_s)
        self._completed += 1
        self._in_flight -= 1
