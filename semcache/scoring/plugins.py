"""Plug-in scorers named in a scorer file: what to build, and the calibrated rule around it.

A cross-encoder (``cross-encoder:NAME_OR_PATH``) or an LLM judge (``llm-judge:MODEL``):
``semcache calibrate --plugin`` certifies its threshold and saves a :class:`SavedPlugin`,
which :func:`build_plugin` builds. A judge's API key is named by its environment variable,
never stored, since a scorer file gets copied and committed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from semcache.errors import ConfigError

from .band import ScoreBand
from .base import HitScorer
from .judge import CostSink

PluginKind = Literal["cross-encoder", "llm-judge"]
CROSS_ENCODER: PluginKind = "cross-encoder"
LLM_JUDGE: PluginKind = "llm-judge"
KINDS: tuple[PluginKind, ...] = (CROSS_ENCODER, LLM_JUDGE)
DEFAULT_JUDGE_TIMEOUT_S = 10.0
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class PluginScorer(HitScorer, Protocol):
    """A plug-in scores many pairs at once when calibrating (one per lookup in the cache)."""

    def score_many(self, pairs: list[tuple[str, str]]) -> list[float]: ...


@dataclass(frozen=True)
class PluginSpec:
    """Which plug-in: ``kind``, ``model`` (hub name or local path for a cross-encoder, any
    LiteLLM model for a judge) and, for a judge only, ``api_base``, ``api_key_env`` (the
    name of the variable holding its key) and ``timeout_s`` (seconds per call; None: 10 s,
    never LiteLLM's 10-minute default on the request path)."""

    kind: PluginKind
    model: str
    api_base: str | None = None
    api_key_env: str | None = None
    timeout_s: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"plug-in kind {self.kind!r}: expected one of {', '.join(KINDS)}")
        if not self.model.strip():
            raise ConfigError(f"plug-in {self.kind}: the model name is empty")
        judge_only = {
            "api_base": self.api_base,
            "api_key_env": self.api_key_env,
            "timeout_s": self.timeout_s,
        }
        given = [k for k, v in judge_only.items() if v is not None]
        if self.kind != LLM_JUDGE and given:
            raise ConfigError(f"plug-in {self.kind}: {', '.join(given)} apply to llm-judge only")
        if self.api_key_env is not None and not _ENV_NAME.fullmatch(self.api_key_env):
            raise ConfigError(
                f"plug-in api_key_env {self.api_key_env!r} is not an environment variable name"
                " (give the variable that holds the key, never the key)"
            )
        if self.timeout_s is not None and not (
            self.timeout_s > 0 and math.isfinite(self.timeout_s)
        ):
            raise ConfigError(f"plug-in timeout_s must be > 0 seconds, got {self.timeout_s}")

    @classmethod
    def parse(
        cls,
        text: str,
        *,
        api_base: str | None = None,
        api_key_env: str | None = None,
        timeout_s: float | None = None,
    ) -> PluginSpec:
        """``cross-encoder:NAME_OR_PATH`` or ``llm-judge:MODEL`` (split at the first colon),
        with a judge's options; a judge's ``timeout_s`` defaults to 10 s."""
        kind, sep, model = text.partition(":")
        if not sep or kind not in KINDS:
            raise ConfigError(
                f"--plugin {text!r}: expected cross-encoder:NAME_OR_PATH or llm-judge:MODEL"
            )
        if kind == LLM_JUDGE and timeout_s is None:
            timeout_s = DEFAULT_JUDGE_TIMEOUT_S
        plugin_kind: PluginKind = CROSS_ENCODER if kind == CROSS_ENCODER else LLM_JUDGE
        return cls(plugin_kind, model, api_base, api_key_env, timeout_s)

    @property
    def name(self) -> str:
        """``kind:model``, the plug-in's name in calibrate's report."""
        return f"{self.kind}:{self.model}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "model": self.model}
        if self.kind == LLM_JUDGE:
            data |= {
                "api_base": self.api_base,
                "api_key_env": self.api_key_env,
                "timeout_s": self.timeout_s,
            }
        return data

    @classmethod
    def from_json(cls, data: Any) -> PluginSpec:
        if not isinstance(data, dict):
            raise ConfigError("'plugin' must be an object")
        unknown = set(data) - {"kind", "model", "api_base", "api_key_env", "timeout_s"}
        if unknown:
            raise ConfigError(f"'plugin' has unknown fields {sorted(unknown)}")
        timeout = data.get("timeout_s")
        return cls(
            kind=data["kind"],
            model=str(data["model"]),
            api_base=None if data.get("api_base") is None else str(data["api_base"]),
            api_key_env=None if data.get("api_key_env") is None else str(data["api_key_env"]),
            timeout_s=None if timeout is None else float(timeout),
        )


@dataclass(frozen=True)
class SavedPlugin:
    """A plug-in with the threshold and band calibrated for it: serve when the primary
    embedder's cosine is ≥ ``band.lo`` and either ≥ ``band.hi`` or the plug-in's score is
    ≥ ``threshold`` (on the plug-in's own scale)."""

    plugin: PluginSpec
    primary: str
    threshold: float
    band: ScoreBand
    calibration: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not math.isfinite(self.threshold):
            raise ConfigError(f"plug-in threshold must be a finite number, got {self.threshold}")
        if not self.primary:
            raise ConfigError("plug-in scorer file: 'primary' embedder is empty")


def build_plugin(
    spec: PluginSpec,
    *,
    device: str = "cpu",
    api_key: str | None = None,
    sink: CostSink | None = None,
) -> PluginScorer:
    """The plug-in ``spec`` names (a cross-encoder is loaded now: call off the event loop).
    ``api_key``: the judge's key, read by the caller from ``spec.api_key_env``; ``sink``:
    where each judge call's tokens and price are also counted."""
    if spec.kind == CROSS_ENCODER:
        from .cross_encoder import CrossEncoderScorer

        scorer = CrossEncoderScorer(spec.model, device=device)
        scorer.load()
        return scorer
    from .judge import LLMJudgeScorer

    timeout = DEFAULT_JUDGE_TIMEOUT_S if spec.timeout_s is None else spec.timeout_s
    kwargs: dict[str, Any] = {"timeout": timeout}
    if spec.api_base is not None:
        kwargs["api_base"] = spec.api_base
    if api_key is not None:
        kwargs["api_key"] = api_key
    return LLMJudgeScorer(spec.model, completion_kwargs=kwargs, sink=sink)
