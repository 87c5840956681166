"""The proxy's configuration file: cache settings, upstream models, client keys, admin key.

TOML or YAML; ``model_list`` has LiteLLM's proxy shape so a LiteLLM config can be copied::

    [[model_list]]
    model_name = "gpt-4o-mini"                    # the public name clients send
    litellm_params.model = "openai/gpt-4o-mini"    # LiteLLM provider model
    litellm_params.api_base = "https://api.openai.com/v1"
    litellm_params.api_key = "os.environ/OPENAI_API_KEY"

    [[clients]]
    key = "os.environ/TEAM_A_KEY"                  # or a literal key
    tenant = "team-a"

    [server]
    admin_key = "os.environ/SEMCACHE_ADMIN_KEY"

    [cache.semantic]                               # any CacheSettings field
    threshold = 0.93

Secrets are never literal where they would leak furthest: an upstream ``api_key`` and the
admin key name an environment variable, read once by :func:`resolve_secret` when the app is
built. ``[cache]`` wins over ``SEMCACHE_*``, which wins over ``.env``; an unknown key or a
bad value is an error naming it.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from semcache.config.settings import CacheSettings
from semcache.errors import ConfigError, SettingsError

#: LiteLLM's spelling of "read this value from the environment variable NAME".
ENV_PREFIX = "os.environ/"


def _env_name(reference: str) -> str | None:
    """The variable name of an ``os.environ/NAME`` reference, else None."""
    if reference.startswith(ENV_PREFIX):
        return reference[len(ENV_PREFIX) :]
    return None


def _require_env_reference(value: str | None) -> str | None:
    if value is not None and not _env_name(value):
        raise ValueError(
            f"must name an environment variable as '{ENV_PREFIX}NAME'; "
            "literal secrets do not belong in a config file"
        )
    return value


def resolve_secret(
    reference: str, *, field: str, environ: Mapping[str, str] | None = None
) -> SecretStr:
    """The secret behind ``reference``: an ``os.environ/NAME`` variable's value or the literal.

    Raises :class:`ConfigError` naming ``field`` and the variable (never a value) when the
    variable is unset or empty.
    """
    environ = os.environ if environ is None else environ
    name = _env_name(reference)
    if name is None:
        return SecretStr(reference)
    value = environ.get(name)
    if not value:
        raise ConfigError(f"{field}: environment variable {name!r} is not set")
    return SecretStr(value)


class LiteLLMParams(BaseModel):
    """Where one public model is sent (LiteLLM's ``litellm_params``)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, description="LiteLLM provider model, e.g. 'openai/gpt-4o'.")
    api_base: str | None = Field(None, description="Provider base URL; None uses LiteLLM's.")
    api_key: str | None = Field(
        None, description="'os.environ/NAME'; None sends no key (local upstreams)."
    )
    timeout: float | None = Field(None, gt=0, description="Seconds per upstream call.")
    max_retries: int | None = Field(
        None, ge=0, description="Upstream retries on 429/5xx/connection errors (LiteLLM's)."
    )

    _env_only = field_validator("api_key")(_require_env_reference)


class ModelRoute(BaseModel):
    """One entry of ``model_list``: a public name clients use and its upstream."""

    model_config = ConfigDict(extra="forbid")

    model_name: str = Field(min_length=1, description="Public model name clients send.")
    litellm_params: LiteLLMParams


class ClientKey(BaseModel):
    """A client API key and the tenant (cache partition) every request with it belongs to."""

    model_config = ConfigDict(extra="forbid")

    key: SecretStr = Field(description="Literal key or 'os.environ/NAME'.")
    tenant: str = Field(min_length=1)


class ServerOptions(BaseModel):
    """How the HTTP server behaves."""

    model_config = ConfigDict(extra="forbid")

    admin_key: str | None = Field(
        None, description="'os.environ/NAME' of the admin API key; None disables /admin."
    )
    log_content: bool = Field(
        False, description="Log message and answer text in the request log (debugging only)."
    )
    graceful_shutdown_s: int = Field(
        30, ge=0, description="Seconds in-flight requests may take on shutdown (then 503)."
    )
    keep_alive_s: int = Field(
        75,
        ge=1,
        description="Seconds an idle client connection is kept open. Longer than clients' own "
        "idle expiry (httpx: 5 s), so a client never reuses a connection the server is closing.",
    )

    max_body_bytes: int = Field(
        8 * 1024 * 1024,
        ge=1024,
        description="Largest request body accepted, in bytes; a larger one is refused with 413 "
        "before it is read whole (by its Content-Length, or while it streams in).",
    )
    body_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Seconds a client may take to send a request body, from the first byte the "
        "route reads; a slower one is answered 408 and its connection closed. Lower frees "
        "connections held by slow or stalled uploads sooner; higher tolerates slower links.",
    )
    max_json_depth: int = Field(
        32,
        ge=4,
        le=500,
        description="Deepest nesting of objects and arrays accepted in a request body; deeper "
        "is a 400 naming the field (OpenAI's own shapes need fewer than 10 levels; a JSON "
        "schema in 'tools' or 'response_format' rarely needs 20).",
    )
    metrics_key: str | None = Field(
        None,
        description="'os.environ/NAME' of a bearer key /metrics requires; None serves /metrics "
        "without auth (bind the proxy to a private interface then).",
    )
    metrics_tenant_labels: bool = Field(
        True,
        description="Label per-tenant series (requests, saved tokens and cost) with the tenant; "
        "False drops the label, so /metrics says nothing about which tenants exist.",
    )
    gc_freeze: bool = Field(
        True,
        description="Move everything allocated at start-up (LiteLLM, FastAPI, the config) out "
        "of the garbage collector's sight before serving (gc.freeze()): otherwise every full "
        "collection walks ~800k long-lived objects, a pause of ~0.4 s for every request in "
        "flight on this project's 2-core test machine.",
    )

    http_telemetry: bool = Field(
        False,
        description="FastAPI's own OpenTelemetry of the proxy's HTTP layer (a server span per "
        "request with spans for dependency resolution, the endpoint and serialization; HTTP "
        "request metrics) when a tracer or meter provider is configured. Off: the cache's "
        "spans and metrics only (cache.telemetry.otel), a request's traceparent header still "
        "joining them to the caller's trace. On adds FastAPI's spans to every request's cost.",
    )

    _env_only = field_validator("admin_key", "metrics_key")(_require_env_reference)


class ProxyConfig(BaseModel):
    """Everything ``semcache serve`` reads from its config file."""

    model_config = ConfigDict(extra="forbid")

    model_list: list[ModelRoute] = Field(min_length=1)
    clients: list[ClientKey] = Field(min_length=1)
    server: ServerOptions = Field(default_factory=ServerOptions)
    # last, so its validator sees which variables the sections above reference
    cache: CacheSettings = Field(default_factory=dict, validate_default=True)

    @field_validator("cache", mode="before")
    @classmethod
    def _cache_settings(cls, value: Any, info: ValidationInfo) -> Any:
        """The file's ``[cache]`` over ``SEMCACHE_*`` variables over ``.env``, as in the library.

        Unknown keys and bad values (from the file or the environment) are a
        :class:`SettingsError` naming each; variables the config references
        (``os.environ/SEMCACHE_ADMIN_KEY``) are not reported as unknown settings.
        """
        if isinstance(value, CacheSettings) or not isinstance(value, Mapping):
            return value
        try:
            return CacheSettings(**value, _other_variables=_referenced_variables(info.data))
        except SettingsError as exc:
            raise SettingsError([problem.under("cache.") for problem in exc.problems]) from None

    @field_validator("model_list")
    @classmethod
    def _unique_names(cls, routes: list[ModelRoute]) -> list[ModelRoute]:
        names = [route.model_name for route in routes]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate model_name(s): {', '.join(duplicates)}")
        return routes

    @field_validator("clients")
    @classmethod
    def _unique_keys(cls, clients: list[ClientKey]) -> list[ClientKey]:
        keys = [client.key.get_secret_value() for client in clients]
        if len(set(keys)) != len(keys):
            raise ValueError("the same client key is listed twice")
        return clients


def _referenced_variables(sections: Mapping[str, Any]) -> set[str]:
    """Names of the environment variables the validated sections read (``os.environ/NAME``)."""
    references: list[str | None] = []
    for route in sections.get("model_list", []):
        references.append(route.litellm_params.api_key)
    for client in sections.get("clients", []):
        references.append(client.key.get_secret_value())
    server = sections.get("server")
    if server is not None:
        references += [server.admin_key, server.metrics_key]
    return {name for ref in references if ref is not None and (name := _env_name(ref))}


def _format_validation_error(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors(include_url=False, include_input=False):
        nested = (error.get("ctx") or {}).get("error")
        if isinstance(nested, SettingsError):
            lines += [f"  {problem.line()}" for problem in nested.problems]
            continue
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        lines.append(f"  {where}: {error['msg']}")
    return "invalid proxy config:\n" + "\n".join(lines)


def parse_config(data: Mapping[str, Any]) -> ProxyConfig:
    """Validate a config mapping; raise :class:`ConfigError` listing every bad field."""
    try:
        return ProxyConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc)) from None


def _decode(text: str, suffix: str, where: str) -> Any:
    if suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {where}: invalid TOML: {exc}") from exc
    if suffix in {".yaml", ".yml"}:
        import yaml  # type: ignore[import-untyped]  # lazy: only YAML configs need it (PyYAML is a LiteLLM dependency)

        try:
            return yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {where}: invalid YAML: {exc}") from exc
    raise ConfigError(f"config file {where}: expected a .toml, .yaml or .yml file")


def load_config(path: str | Path) -> ProxyConfig:
    """Read and validate a TOML or YAML config file; raise :class:`ConfigError` if bad."""
    path = Path(path)
    where = repr(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {where}: {exc.strerror}") from exc
    data = _decode(text, path.suffix.lower(), where)
    if not isinstance(data, Mapping):
        raise ConfigError(f"config file {where}: expected a mapping at the top level")
    return parse_config(data)
