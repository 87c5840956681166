"""Thresholds applied at runtime (``POST /admin/threshold``, the dashboard's "apply",
``calibrate --apply --reload-url``), kept in ``tuning.thresholds_path`` so a restart serves them.

The file records what was applied and the configuration it was applied over. At start (and
on ``POST /admin/reload``) the applied thresholds are served while the configured ones are
still those they were applied over; once the configuration itself changes (an operator
edited the threshold, ``calibrate --save`` wrote a new one), the configuration wins, so a
stale file never silently overrides a deliberate edit. Writes replace the file atomically.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semcache.errors import ConfigError


@dataclass(frozen=True)
class Thresholds:
    """A default threshold and the namespace overrides (cosines, a hit when >=)."""

    threshold: float
    namespaces: Mapping[str, float] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "namespace_thresholds": dict(self.namespaces)}


def _cosine(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{where}: expected a number, got {value!r}")
    if not -1.0 <= value <= 1.0:
        raise ValueError(f"{where}: expected a cosine in [-1, 1], got {value!r}")
    return float(value)


def _thresholds(raw: Any, where: str) -> Thresholds:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected an object")
    namespaces = raw.get("namespace_thresholds", {})
    if not isinstance(namespaces, dict):
        raise ValueError(f"{where}.namespace_thresholds: expected an object")
    return Thresholds(
        _cosine(raw.get("threshold"), f"{where}.threshold"),
        {
            str(k): _cosine(v, f"{where}.namespace_thresholds.{k}")
            for k, v in sorted(namespaces.items())
        },
    )


class AppliedThresholds:
    """The file at ``path`` (see the module doc); ``configured``: the thresholds the
    settings give now."""

    def __init__(self, path: str | os.PathLike[str], configured: Thresholds) -> None:
        self.path = Path(path)
        self.configured = configured

    def read(self) -> tuple[Thresholds, Thresholds] | None:
        """(applied, configured when applied), or None when nothing was applied. A file
        that cannot be read as one is a :class:`ConfigError` naming it (never ignored)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ConfigError(f"tuning.thresholds_path {str(self.path)!r}: {exc}") from exc
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise ValueError("expected a JSON object")
            return _thresholds(raw.get("applied"), "applied"), _thresholds(
                raw.get("configured"), "configured"
            )
        except ValueError as exc:
            raise ConfigError(
                f"tuning.thresholds_path {str(self.path)!r} is not an applied-thresholds "
                f"file: {exc} (delete it to serve the configured thresholds)"
            ) from exc

    def served(self) -> Thresholds:
        """What to serve: the applied thresholds while the configuration is the one they
        were applied over, else the configured ones."""
        found = self.read()
        if found is None or found[1] != self.configured:
            return self.configured
        return found[0]

    def save(self, applied: Thresholds) -> None:
        """Keep ``applied`` (over the configuration now), replacing the file atomically."""
        body = {
            "applied": applied.row(),
            "configured": self.configured.row(),
            "applied_at": time.time(),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".thresholds-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(body, out, indent=2, sort_keys=True)
                out.write("\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
