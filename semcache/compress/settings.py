"""Compression configuration, mounted by the facade's settings as ``CacheSettings.compression``,
and the parser of the per-request control ``cache={"compress": ...}``.

Only the composition root reads these; ``build_compressor`` turns them into a ``Compressor``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field, model_validator

from semcache.config.check import SettingsSection
from semcache.errors import ConfigError, InvalidRequest, InvalidRequestType

from .base import Compressor
from .compressor import DEFAULT_ROLES, ChainCompressor, ModelCompressor, RuleCompressor
from .rules import BUILTIN_RULE_SETS, RuleSet

Mode = Literal["off", "rules", "model", "chain"]
MODES: tuple[str, ...] = get_args(Mode)
CONTROL_KEY = "compress"


class CompressionSettings(SettingsSection):
    """Prompt compression on a cache miss (opt-in; the cache key stays the caller's request)."""

    mode: Mode = Field(
        "off",
        description="Default for every namespace: 'off', 'rules' (filler and repeats removed, "
        "free), 'model' (a rewrite model, costs a call), 'chain' (rules, then the model).",
    )
    namespace_modes: dict[str, Mode] = Field(
        default_factory=dict, description="Per-namespace overrides of 'mode'."
    )
    min_tokens: int = Field(
        200,
        ge=0,
        description="A message is compressed only if it has at least this many tokens "
        "(the answering model's tokenizer); shorter ones are sent as they are.",
    )
    model: str | None = Field(
        None,
        description="LiteLLM model id of the rewrite model; needed for 'model' and 'chain'.",
    )
    target_ratio: float = Field(
        0.5,
        gt=0,
        lt=1,
        description="Token budget of a model rewrite as a share of its input (0.5: half).",
    )
    timeout_s: float = Field(10.0, gt=0, description="Seconds one rewrite call may take.")
    rule_sets: list[str] = Field(
        default_factory=lambda: list(BUILTIN_RULE_SETS),
        description="Built-in rule sets to run, in order ('en', 'zh').",
    )
    rule_files: list[Path] = Field(
        default_factory=list,
        description="Extra rule-set JSON files (shaped like the built-in ones), run after them.",
    )
    roles: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ROLES),
        description="Message roles whose text may be compressed.",
    )

    @model_validator(mode="after")
    def _model_when_needed(self) -> CompressionSettings:
        needs = {self.mode, *self.namespace_modes.values()} & {"model", "chain"}
        if needs and (self.model is None or not self.model.strip()):
            raise ValueError(f"compression.model must be set for mode(s) {sorted(needs)}")
        unknown = sorted(set(self.rule_sets) - set(BUILTIN_RULE_SETS))
        if unknown:
            raise ValueError(
                f"compression.rule_sets: unknown {unknown}; built in: {list(BUILTIN_RULE_SETS)}"
            )
        return self

    def mode_for(self, namespace: str | None, requested: Mode | None = None) -> Mode:
        """The mode for one request: its own control, else its namespace's, else ``mode``."""
        if requested is not None:
            return requested
        if namespace is not None and namespace in self.namespace_modes:
            return self.namespace_modes[namespace]
        return self.mode


def parse_compress_control(cache: Mapping[str, Any] | None) -> Mode | None:
    """The ``"compress"`` entry of a request's ``cache={...}`` controls, validated.

    None when absent. Raises ``InvalidRequest`` naming ``cache.compress`` for a value that is
    not one of ``MODES`` (nothing is stored and no upstream call is made for such a request).
    """
    if cache is None or CONTROL_KEY not in cache:
        return None
    value = cache[CONTROL_KEY]
    if not isinstance(value, str):
        raise InvalidRequestType(f"cache.{CONTROL_KEY}", f"must be a string, one of {list(MODES)}")
    if value not in MODES:
        raise InvalidRequest(f"cache.{CONTROL_KEY}", f"{value!r} is not one of {list(MODES)}")
    return value  # type: ignore[return-value]


def build_compressor(
    settings: CompressionSettings,
    mode: Mode,
    *,
    completion_kwargs: Mapping[str, Any] | None = None,
) -> Compressor | None:
    """The compressor for ``mode`` (None for 'off'); ``completion_kwargs`` go to the rewrite
    model's calls. ``ConfigError`` when a rewrite model is needed and none is configured, or a
    rule file cannot be read. Rule sets compile here: build once per mode.
    """
    if mode == "off":
        return None
    if mode not in MODES:
        raise ConfigError(f"compression mode {mode!r} is not one of {list(MODES)}")
    sets = [RuleSet.builtin(name) for name in settings.rule_sets]
    sets += [RuleSet.from_file(path) for path in settings.rule_files]
    common: dict[str, Any] = {"min_tokens": settings.min_tokens, "roles": settings.roles}
    if mode == "rules":
        return RuleCompressor(sets, **common)
    if settings.model is None:
        raise ConfigError(f"compression mode {mode!r} needs compression.model (a LiteLLM id)")
    model_options = {
        "target_ratio": settings.target_ratio,
        "timeout_s": settings.timeout_s,
        "completion_kwargs": dict(completion_kwargs or {}),
    }
    if mode == "model":
        return ModelCompressor(settings.model, model_options=model_options, **common)
    return ChainCompressor(settings.model, rule_sets=sets, model_options=model_options, **common)
