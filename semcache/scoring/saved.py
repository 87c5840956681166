"""A scorer file: exactly what ``semcache calibrate`` chose, for the cache to run unchanged.

Versioned JSON (``format``/``version``): ``kind`` is ``learned`` (a model semcache fit, with
its ``embedders``, ``primary``, ``features``, ``model``, ``threshold``, ``band`` and
``calibration``; version 1 files have no ``kind``, version 3 adds ``"veto": "details"``) or a
plug-in, ``cross-encoder`` / ``llm-judge`` (:mod:`semcache.scoring.plugins`; a judge's key
is named by its environment variable, never stored). A threshold, a band and a model only
mean something together and with these embedders, so they load together or not at all.
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
from .plugins import KINDS as PLUGIN_KINDS
from .plugins import PluginSpec, SavedPlugin

FORMAT = "semcache-scorer"
VERSION = 2
VETO_VERSION = 3
"""A learned file with a guard veto is version 3: a semcache that reads only 1 and 2 would
drop the veto and serve pairs the calibration never let hit, so it must refuse the file."""
READS = (1, 2, 3)
LEARNED = "learned"


@dataclass(frozen=True)
class SavedScorer:
    """A fitted model with the embedders, threshold and band it was calibrated with."""

    model: HitModel
    embedders: tuple[str, ...]
    primary: str
    threshold: float
    band: ScoreBand
    calibration: dict[str, Any] = field(default_factory=dict)
    veto: str | None = None
    """A guard (``SemanticSettings.verifier`` name) whose rejection is a miss whatever the
    model says: calibrated as ``learned+guard``, so the guarantee covers the veto."""

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
        veto = {} if self.veto is None else {"veto": self.veto}
        return {
            "format": FORMAT,
            "version": VERSION if self.veto is None else VETO_VERSION,
            "kind": LEARNED,
            "feature_version": FEATURE_VERSION,
            "embedders": list(self.embedders),
            "primary": self.primary,
            "features": list(self.features),
            "model": self.model.to_json(),
            "threshold": self.threshold,
            "band": {"lo": self.band.lo, "hi": self.band.hi},
            "calibration": self.calibration,
        } | veto

    def save(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def from_json(cls, data: Any, source: str = "scorer") -> SavedScorer:
        if _kind(data, source) != LEARNED:
            raise ConfigError(f"{source}: a {data.get('kind')} plug-in file, not a learned scorer")
        if data.get("feature_version") != FEATURE_VERSION:
            raise ConfigError(
                f"{source}: scorer file version {data.get('version')}/features "
                f"{data.get('feature_version')}; this semcache reads {READS}/{FEATURE_VERSION}:"
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
                veto=_veto(data, source),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"{source}: malformed scorer file: {exc!r}") from exc

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SavedScorer:
        """Read a learned scorer file; a missing or malformed file is a :class:`ConfigError`."""
        return cls.from_json(_read(path), str(path))


def _veto(data: dict[str, Any], source: str) -> str | None:
    """The file's guard veto: only version 3 has one, and there it must name a guard."""
    veto = data.get("veto")
    if data.get("version") != VETO_VERSION:
        if veto is not None:
            raise ConfigError(f"{source}: veto needs scorer file version {VETO_VERSION}")
        return None
    if not isinstance(veto, str) or not veto:
        raise ConfigError(f"{source}: version {VETO_VERSION} needs veto: a guard's name")
    return veto


def _read(path: str | os.PathLike[str]) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read scorer file {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"scorer file {path} is not JSON: {exc}") from exc


def _kind(data: Any, source: str) -> str:
    """The file's kind after checking format and version (version 1: always learned)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{source}: not a semcache scorer file (format != {FORMAT!r})")
    version = data.get("version")
    if version not in READS:
        raise ConfigError(
            f"{source}: scorer file version {version}; this semcache reads versions "
            f"{', '.join(map(str, READS))}: run semcache calibrate again"
        )
    if version == 1:
        return LEARNED
    kind = data.get("kind")
    if kind != LEARNED and kind not in PLUGIN_KINDS:
        raise ConfigError(
            f"{source}: unknown scorer kind {kind!r}; expected {LEARNED}, {', '.join(PLUGIN_KINDS)}"
        )
    if version == VETO_VERSION and kind != LEARNED:
        raise ConfigError(
            f"{source}: version {VETO_VERSION} is a learned scorer with a veto, not a {kind} file"
        )
    return str(kind)


def plugin_to_json(saved: SavedPlugin) -> dict[str, Any]:
    """A plug-in scorer file's JSON (version 2)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": saved.plugin.kind,
        "plugin": saved.plugin.to_json(),
        "primary": saved.primary,
        "threshold": saved.threshold,
        "band": {"lo": saved.band.lo, "hi": saved.band.hi},
        "calibration": saved.calibration,
    }


def save_plugin(saved: SavedPlugin, path: str | os.PathLike[str]) -> None:
    Path(path).write_text(json.dumps(plugin_to_json(saved), indent=1) + "\n", encoding="utf-8")


def plugin_from_json(data: Any, source: str = "scorer") -> SavedPlugin:
    kind = _kind(data, source)
    if kind == LEARNED:
        raise ConfigError(f"{source}: a learned scorer file, not a plug-in")
    try:
        spec = PluginSpec.from_json(data["plugin"])
        if spec.kind != kind:
            raise ConfigError(f"file kind {kind!r} but plugin kind {spec.kind!r}")
        return SavedPlugin(
            plugin=spec,
            primary=str(data["primary"]),
            threshold=float(data["threshold"]),
            band=ScoreBand(float(data["band"]["lo"]), float(data["band"]["hi"])),
            calibration=dict(data.get("calibration") or {}),
        )
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{source}: malformed plug-in scorer file: {exc!r}") from exc


def load_scorer_file(path: str | os.PathLike[str]) -> SavedScorer | SavedPlugin:
    """Whatever scorer ``path`` holds: a learned model (version 1 or 2) or a plug-in."""
    data = _read(path)
    if _kind(data, str(path)) == LEARNED:
        return SavedScorer.from_json(data, str(path))
    return plugin_from_json(data, str(path))
