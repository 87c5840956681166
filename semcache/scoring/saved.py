"""A scorer file: exactly what ``semcache calibrate`` chose, for the cache to run unchanged.

JSON, versioned (``format``/``version``; the feature layout has its own
:data:`~semcache.scoring.features.FEATURE_VERSION`)::

    {"format": "semcache-scorer", "version": 1, "feature_version": 1,
     "embedders": ["e5-small-4bit", "minilm"],   # cosine features, in row order
     "primary": "e5-small-4bit",                 # the cache's search embedder
     "features": [...names...], "model": {"kind": "logistic", ...},
     "threshold": 0.83,                          # probability; a hit when score >= threshold
     "band": {"lo": 0.91, "hi": Infinity},       # cosine of the primary embedder
     "calibration": {...what was measured: delta, confidence, pairs, bound...}}

A threshold, a band and a model only mean something together and with these embedders, so
they travel in one file and are loaded together or not at all.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semcache.errors import ConfigError

from .band import ScoreBand
from .features import FEATURE_VERSION, feature_names
from .model import HitModel, model_from_json

FORMAT = "semcache-scorer"
VERSION = 1


@dataclass(frozen=True)
class SavedScorer:
    """A fitted model with the embedders, threshold and band it was calibrated with."""

    model: HitModel
    embedders: tuple[str, ...]
    primary: str
    threshold: float
    band: ScoreBand
    calibration: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.primary not in self.embedders:
            raise ConfigError(
                f"scorer primary embedder {self.primary!r} is not among {self.embedders}"
            )
        if not 0.0 <= self.threshold <= 1.0 or math.isnan(self.threshold):
            raise ConfigError(f"scorer threshold {self.threshold} is not a probability")

    @property
    def features(self) -> tuple[str, ...]:
        return feature_names(self.embedders)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "feature_version": FEATURE_VERSION,
            "embedders": list(self.embedders),
            "primary": self.primary,
            "features": list(self.features),
            "model": self.model.to_json(),
            "threshold": self.threshold,
            "band": {"lo": self.band.lo, "hi": self.band.hi},
            "calibration": self.calibration,
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def from_json(cls, data: Any, source: str = "scorer") -> SavedScorer:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigError(f"{source}: not a semcache scorer file (format != {FORMAT!r})")
        if data.get("version") != VERSION or data.get("feature_version") != FEATURE_VERSION:
            raise ConfigError(
                f"{source}: scorer file version {data.get('version')}/features "
                f"{data.get('feature_version')}; this semcache reads {VERSION}/{FEATURE_VERSION}:"
                " run semcache calibrate again"
            )
        try:
            embedders = tuple(str(e) for e in data["embedders"])
            names = feature_names(embedders)
            if tuple(data["features"]) != names:
                raise ConfigError(
                    f"{source}: feature list does not match version {FEATURE_VERSION}"
                )
            return cls(
                model=model_from_json(data["model"], len(names)),
                embedders=embedders,
                primary=str(data["primary"]),
                threshold=float(data["threshold"]),
                band=ScoreBand(float(data["band"]["lo"]), float(data["band"]["hi"])),
                calibration=dict(data.get("calibration") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"{source}: malformed scorer file: {exc!r}") from exc

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SavedScorer:
        """Read a scorer file; a missing or malformed file is a :class:`ConfigError`."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read scorer file {path}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise ConfigError(f"scorer file {path} is not JSON: {exc}") from exc
        return cls.from_json(data, str(path))
