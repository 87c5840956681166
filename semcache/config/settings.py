"""All configuration in one declared class.

Read from the environment (``SEMCACHE_``, nested fields with ``__``), a ``.env`` file, or
passed explicitly; only the composition root reads settings. Nothing is silently ignored,
since a cache that quietly keeps its default threshold after a typo is a correctness problem:
an unknown argument or nested key is a :class:`~semcache.errors.SettingsError` naming the
nearest valid name; an unknown ``SEMCACHE_*`` variable or ``.env`` key is an
:class:`~semcache.errors.UnknownSettingWarning` (an error when ``strict``); an invalid value
names where it came from, the value and what was expected.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Collection
from typing import Any

import pydantic_settings
from pydantic import Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from semcache.compress.settings import CompressionSettings
from semcache.config.check import (
    SettingProblem,
    read_dotenv,
    undecodable_variables,
    unknown_settings_variables,
    validation_problems,
)
from semcache.config.names import is_settings_variable
from semcache.config.sections import (
    AdmissionSettings,
    CoalesceSettings,
    ExactSettings,
    HealthSettings,
    PolicySettings,
    PromptCacheSettings,
    SemanticSettings,
    StoreSettings,
)
from semcache.errors import SettingsError, UnknownSettingWarning
from semcache.observe.settings import TelemetrySettings
from semcache.privacy.settings import PrivacySettings
from semcache.replicas.settings import RedisSettings
from semcache.tuning.settings import TuningSettings, VerifySettings

__all__ = [
    "OTHER_VARIABLES",
    "AdmissionSettings",
    "CacheSettings",
    "CoalesceSettings",
    "ExactSettings",
    "HealthSettings",
    "PolicySettings",
    "PromptCacheSettings",
    "SemanticSettings",
    "StoreSettings",
]

#: ``SEMCACHE_*`` variables semcache reads or documents that are not deployment settings,
#: so they are not reported as unknown: ``SEMCACHE_ONNX_CACHE`` is where exported ONNX
#: models are kept (``semcache.embedders.onnx_runtime``); ``SEMCACHE_ADMIN_KEY`` is the
#: proxy's admin key as the README's ``semcache.toml`` and ``semcache calibrate
#: --admin-key-env`` name it.
#: A test scans README.md, docs/ and the code for ``SEMCACHE_*`` names and fails on one the
#: check would call unknown.
OTHER_VARIABLES: frozenset[str] = frozenset({"SEMCACHE_ONNX_CACHE", "SEMCACHE_ADMIN_KEY"})


class CacheSettings(BaseSettings):
    """Every setting of a semcache deployment.

    ``CacheSettings(...)`` raises :class:`~semcache.errors.SettingsError` (a ``ConfigError``
    and ``ValueError``) for unknown or invalid settings from any source, and warns with
    :class:`~semcache.errors.UnknownSettingWarning` for each unknown ``SEMCACHE_*``
    environment variable or ``.env`` key (an error when ``strict``).
    """

    model_config = SettingsConfigDict(
        env_prefix="SEMCACHE_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="forbid",
    )

    policy: PolicySettings = Field(default_factory=PolicySettings)
    exact: ExactSettings = Field(default_factory=ExactSettings)
    coalesce: CoalesceSettings = Field(default_factory=CoalesceSettings)
    semantic: SemanticSettings = Field(default_factory=SemanticSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    compression: CompressionSettings = Field(default_factory=CompressionSettings)
    prompt_cache: PromptCacheSettings = Field(default_factory=PromptCacheSettings)
    admission: AdmissionSettings = Field(default_factory=AdmissionSettings)
    health: HealthSettings = Field(default_factory=HealthSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    verify: VerifySettings = Field(default_factory=VerifySettings)
    tuning: TuningSettings = Field(default_factory=TuningSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)
    strict: bool = Field(
        False,
        description="Unknown SEMCACHE_* environment variables and .env keys are errors, not "
        "warnings (they are only warnings by default because other tools may share the prefix).",
    )

    def __init__(self, *, _other_variables: Collection[str] = (), **values: Any) -> None:
        """Read arguments, then ``SEMCACHE_*`` variables, then ``.env`` (first wins).
        ``_other_variables``: ``SEMCACHE_*`` variables the caller reads for another purpose, not
        reported as unknown.
        """
        model = type(self)
        environ = dict(os.environ)
        dotenv = read_dotenv(
            values.get("_env_file", self.model_config.get("env_file")),
            values.get("_env_file_encoding", self.model_config.get("env_file_encoding")),
        )
        arguments = {key: value for key, value in values.items() if not key.startswith("_")}
        other = OTHER_VARIABLES | set(_other_variables)
        unknown = unknown_settings_variables(model, environ, dotenv, other=other)
        try:
            super().__init__(**values)
        except ValidationError as exc:
            problems = validation_problems(
                model, exc, arguments=arguments, environ=environ, dotenv=dotenv
            )
            _warn(unknown)
            raise SettingsError(problems) from None
        except pydantic_settings.SettingsError:
            # a variable that must hold JSON does not; pydantic-settings names only the field
            problems = undecodable_variables(model, environ, dotenv)
            _warn(unknown)
            if not problems:
                raise
            raise SettingsError(problems) from None
        if unknown and self.strict:
            raise SettingsError(unknown)
        _warn(unknown)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The usual sources, each seeing only ``SEMCACHE_*`` names of real settings: unknown
        names are reported by ``__init__``, instead of failing a section that forbids extras or
        refusing another tool's ``.env`` key.
        """
        for source in (env_settings, dotenv_settings):
            if isinstance(source, EnvSettingsSource):
                source.env_vars = {
                    name: value
                    for name, value in source.env_vars.items()
                    if is_settings_variable(settings_cls, name)
                }
        return init_settings, env_settings, dotenv_settings, file_secret_settings


def _warn(problems: list[SettingProblem]) -> None:
    for problem in problems:
        # stacklevel 3: the code that constructed CacheSettings
        warnings.warn(problem.line(), UnknownSettingWarning, stacklevel=3)
