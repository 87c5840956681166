"""The one place where a cache failure becomes a miss, and where degradation is counted.

Every store and embedder call on the request path goes through ``FailOpen.call``: an error
or a timeout is counted by kind and the caller gets the fallback value and goes upstream.
Work skipped by admission control (:mod:`semcache.runtime.admission`) is counted here too, as
``shed`` by kind. Both are exported as Prometheus series by the proxy.

Warnings are rate-limited per kind: the first failure of a kind is logged at once, later
ones at most once per ``warn_interval_s`` with the number suppressed meanwhile. (Logging
only once per process hid a store that stayed broken for hours; logging every failure
floods the log when a store is down under load.)

For :func:`semcache.facade.health` the last failure and the last success of each kind are kept:
a kind whose last call failed is *down*; one that failed or shed within the health window
is *degraded*. A timeout is kept apart (``last_timeout``): it is counted as an error like any
failure, but it says the cache was slow, not broken, so it grades like a shed (degraded for
the short shed window, never down), because the last write of a load often times out and,
graded as a failure, would keep /readyz at 503 for the whole health window after the load
stopped. A store or embedder that hangs for good is caught by the readiness probe, which
times out too and makes the cache not ready. A failure that is a ``ConnectionError`` (a
server that did not answer, such as :class:`~semcache.errors.StoreUnreachable`) is marked
``unreachable``: health grades it degraded, never down (an outage of a dependency every
replica shares).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from semcache.runtime.loop import interpreter_exiting
from semcache.stats import Stats

T = TypeVar("T")
log = logging.getLogger("semcache")


@dataclass(slots=True)
class _Warned:
    at: float
    suppressed: int = 0


@dataclass(frozen=True, slots=True)
class KindState:
    """What FailOpen last saw of one kind (monotonic seconds; None: never)."""

    last_failure: float | None
    last_success: float | None
    last_shed: float | None
    last_reason: str | None
    last_timeout: float | None = None
    unreachable: bool = False  #: the last failure was a dependency that did not answer

    @property
    def down(self) -> bool:
        """The kind's most recent call failed (no success since)."""
        return self.last_failure is not None and (
            self.last_success is None or self.last_success < self.last_failure
        )


def failure_reason(exc: BaseException, timeout_s: float | None = None) -> str:
    """How a failure is named in logs and reports: ``"timed out"`` (with the bound, when
    known) for a call that ran past its timeout, else the exception's type and message."""
    if isinstance(exc, TimeoutError):
        return "timed out" if timeout_s is None else f"timed out after {timeout_s:g} s"
    return f"{type(exc).__name__}: {exc}"


class FailOpen:
    def __init__(
        self,
        stats: Stats,
        *,
        timeout_s: float,
        warn_interval_s: float = 60.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stats = stats
        self._timeout_s = timeout_s
        self._warn_interval_s = warn_interval_s
        self._monotonic = monotonic
        self._warned: dict[str, _Warned] = {}
        self._failure: dict[str, tuple[float, str, bool]] = {}
        self._success: dict[str, float] = {}
        self._shed: dict[str, float] = {}
        self._timeout: dict[str, float] = {}

    async def call(
        self,
        kind: str,
        fn: Callable[[], Awaitable[T]],
        fallback: T,
        *,
        timeout_s: float | None = None,
    ) -> T:
        try:
            result = await asyncio.wait_for(
                fn(), timeout_s if timeout_s is not None else self._timeout_s
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.record(kind, exc)
            return fallback
        self._success[kind] = self._monotonic()
        return result

    def record(self, kind: str, exc: BaseException) -> None:
        """Count a failure of ``kind`` served as a miss, and warn (rate-limited)."""
        self._stats.error(kind)
        timed_out = isinstance(exc, TimeoutError)
        reason = failure_reason(exc)
        if timed_out:
            self._timeout[kind] = self._monotonic()
        else:
            unreachable = isinstance(exc, ConnectionError)
            self._failure[kind] = (self._monotonic(), reason, unreachable)
        message = f"semcache {kind} failed ({reason}); serving as a cache miss"
        if interpreter_exiting():  # an unclosed cache's last work, refused by the exit
            log.debug(message)  # still counted; a warning here would only alarm
            return
        self._warn(kind, message)

    def shed(self, kind: str) -> None:
        """Count work of ``kind`` skipped by admission control (the request goes on without it)."""
        self._stats.shed(kind)
        self._shed[kind] = self._monotonic()
        self._warn(
            f"shed:{kind}",
            f"semcache is overloaded: {kind} skipped (admission control); serving without it",
        )

    def last_reason(self, kind: str) -> str | None:
        """Why the most recent failure of ``kind`` failed (None: it never failed; timeouts
        are not failures here, see ``KindState.last_timeout``)."""
        failure = self._failure.get(kind)
        return failure[1] if failure is not None else None

    def state(self) -> Mapping[str, KindState]:
        """Last failure, success and shed of every kind seen so far."""
        kinds = set(self._failure) | set(self._success) | set(self._shed) | set(self._timeout)
        out = {}
        for kind in sorted(kinds):
            failure = self._failure.get(kind)
            out[kind] = KindState(
                last_failure=failure[0] if failure is not None else None,
                last_success=self._success.get(kind),
                last_shed=self._shed.get(kind),
                last_reason=failure[1] if failure is not None else None,
                last_timeout=self._timeout.get(kind),
                unreachable=failure[2] if failure is not None else False,
            )
        return out

    def now(self) -> float:
        return self._monotonic()

    @property
    def timeout_s(self) -> float:
        """Seconds a call may take before it counts as failed (``store.timeout_s``)."""
        return self._timeout_s

    def _warn(self, kind: str, message: str) -> None:
        now = self._monotonic()
        warned = self._warned.get(kind)
        if warned is not None and now - warned.at < self._warn_interval_s:
            warned.suppressed += 1
            log.debug(message)
            return
        suppressed = warned.suppressed if warned is not None else 0
        self._warned[kind] = _Warned(at=now)
        if suppressed:
            message += f" ({suppressed} more like it in the last {self._warn_interval_s:g} s)"
        log.warning(message)
