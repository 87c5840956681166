"""Noticing that a provider moved a model name to a new snapshot, and what that withdraws.

Each stored answer keeps the upstream's own ``response.model`` and ``system_fingerprint``
(the snapshot). A fresh answer reporting another snapshot than the last seen for its model
name sets a watermark: answers of that name stored before it are no longer served (one dict
lookup, nothing deleted). With a shared Redis the change is decided there for every replica.
Thread-safe.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from semcache.stats import Stats
from semcache.stores.base import Entry

log = logging.getLogger("semcache")


def snapshot_of(response: Any) -> str | None:
    """``model`` and ``system_fingerprint`` as reported on a response; None if no model."""
    model = getattr(response, "model", None)
    if not model:
        return None
    fingerprint = getattr(response, "system_fingerprint", None)
    return f"{model}|{fingerprint or ''}"


class ModelWatch:
    """Last snapshot seen per model name, and the watermark each change set.

    ``invalidate`` False is the ``keep`` policy: changes are still noticed and counted (an
    operator wants to know) but nothing stops being served.
    """

    def __init__(self, stats: Stats, *, invalidate: bool) -> None:
        self.invalidate = invalidate
        self._stats = stats
        self._lock = threading.Lock()
        self._snapshots: dict[str, str] = {}
        self._watermarks: dict[str, float] = {}

    def observe(self, model: str, snapshot: str | None, created_at: float) -> bool:
        """Record a fresh answer's snapshot; True when it differs from the last one seen."""
        if snapshot is None:
            return False
        with self._lock:
            previous = self._snapshots.get(model)
            self._snapshots[model] = snapshot
        if previous is None or previous == snapshot:
            return False
        self._stats.count("model_changes")
        log.warning(
            "semcache: %s now answers as %r (was %r); %s",
            model,
            snapshot,
            previous,
            "older answers are no longer served" if self.invalidate else "older answers kept",
        )
        self.mark(model, created_at)
        return True

    def mark(self, model: str, before: float) -> None:
        """Answers of ``model`` created before ``before`` are stale (under ``invalidate``)."""
        if not self.invalidate:
            return
        with self._lock:
            if before > self._watermarks.get(model, float("-inf")):
                self._watermarks[model] = before

    def fresh(self, entry: Entry) -> bool:
        """May ``entry`` be served? (No lock: a dict read is atomic.)"""
        watermark = self._watermarks.get(entry.model)
        return watermark is None or entry.created_at >= watermark
