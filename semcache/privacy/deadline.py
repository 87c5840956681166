"""The deadline of the scan running in this context: long scans check it and stop.

A scan runs in a worker thread nobody can interrupt, so the gate (between texts) and the
phone detector call :func:`check_deadline`, which raises :class:`~semcache.errors.ScanTimedOut`
past the deadline set by :func:`scan_deadline` or once its ``stop`` event is set. A context
variable carries it, so detectors keep ``detect(text)``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from threading import Event

from semcache.errors import ScanTimedOut

_DEADLINE: ContextVar[tuple[float | None, Event | None]] = ContextVar(
    "semcache_scan_deadline", default=(None, None)
)


@contextmanager
def scan_deadline(at: float | None, stop: Event | None = None) -> Iterator[None]:
    """Scans in this context stop at ``at`` (``time.monotonic()`` seconds; None: never), or
    as soon as ``stop`` is set."""
    token = _DEADLINE.set((at, stop))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_deadline() -> None:
    """Raise :class:`ScanTimedOut` when this context's scan deadline has passed or its stop
    event is set."""
    at, stop = _DEADLINE.get()
    if (stop is not None and stop.is_set()) or (at is not None and time.monotonic() > at):
        raise ScanTimedOut("private-data scan passed its deadline")
