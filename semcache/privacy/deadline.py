"""The deadline of the scan running in this context: long scans check it and stop.

A scan runs in a worker thread that nobody can interrupt, so it must stop itself: whoever
starts it sets a deadline with :func:`scan_deadline`, and the gate (between texts) and the
phone detector (between libphonenumber calls) call :func:`check_deadline`, which raises
:class:`~semcache.errors.ScanTimedOut` once it has passed. A context variable carries it, so
the detector protocol stays ``detect(text)``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from semcache.errors import ScanTimedOut

_DEADLINE: ContextVar[float | None] = ContextVar("semcache_scan_deadline", default=None)


@contextmanager
def scan_deadline(at: float | None) -> Iterator[None]:
    """Scans in this context stop at ``at`` (``time.monotonic()`` seconds; None: never)."""
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_deadline() -> None:
    """Raise :class:`ScanTimedOut` when this context's scan deadline has passed."""
    at = _DEADLINE.get()
    if at is not None and time.monotonic() > at:
        raise ScanTimedOut("private-data scan passed its deadline")
