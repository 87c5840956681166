"""What may be shared, and the per-request cache controls.

Pure logic: given a request's parameters and controls, decide whether the cache may look it
up, store it and coalesce it. Sampling requests (an explicit temperature above the limit, or
``n > 1``) asked for variety, so by default they bypass every tier.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from semcache.errors import InvalidRequest, InvalidRequestType

DEFAULT_TENANT = "default"
DEFAULT_NAMESPACE = "default"


class CacheControl(BaseModel):
    """Per-request controls; the dict form uses LiteLLM's names (``no-cache``, ``no-store``,
    ``ttl``, ``s-maxage``, ``namespace``) plus ``share-sampled`` to opt a sampling request into
    sharing."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    # strict: true or false, and seconds as numbers (lax parsing would read "no" as false
    # and false as 0 seconds)
    no_cache: bool = Field(
        False, alias="no-cache", strict=True, description="Skip every lookup (fresh answer)."
    )
    no_store: bool = Field(
        False, alias="no-store", strict=True, description="Do not store the answer."
    )
    ttl: float | None = Field(
        None,
        ge=0,
        allow_inf_nan=False,
        strict=True,
        description="Lifetime of the stored answer, seconds.",
    )
    max_age: float | None = Field(
        None,
        ge=0,
        strict=True,
        alias="s-maxage",
        description="Oldest stored answer this caller accepts, seconds since it was stored "
        "(LiteLLM's s-maxage); an older entry is a miss and the fresh answer replaces it.",
    )
    namespace: str = Field(
        DEFAULT_NAMESPACE, min_length=1, description="Partition inside a tenant."
    )
    share_sampled: bool = Field(
        False,
        alias="share-sampled",
        strict=True,
        description="Share a sampling request (temperature above the limit, or n > 1) anyway.",
    )
    compress: Literal["off", "rules", "model", "chain"] | None = Field(
        None,
        description="Prompt compression for this request's upstream call (None: the "
        "namespace's setting).",
    )
    privacy: Literal["off", "no-store", "redact"] | None = Field(
        None,
        description="Private-data policy for this request (None: the namespace's setting); it "
        "may tighten the setting, and loosen it only where settings allow.",
    )

    @classmethod
    def parse(cls, value: Any) -> CacheControl:
        """Accept None, a CacheControl or a dict with LiteLLM's names; raise InvalidRequest."""
        if value is None:
            return _DEFAULT_CONTROL
        if isinstance(value, CacheControl):
            return value
        if not isinstance(value, Mapping):
            raise InvalidRequestType(
                "cache", f"expected a dict or CacheControl, got {type(value).__name__}"
            )
        data = dict(value)
        if "s-max-age" in data:  # LiteLLM accepts both spellings
            data.setdefault("s-maxage", data.pop("s-max-age"))
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise InvalidRequest(f"cache.{where}", error["msg"]) from None

    def accepts(self, created_at: float, now: float) -> bool:
        """True when an entry stored at ``created_at`` is young enough for this caller."""
        return self.max_age is None or now - created_at <= self.max_age


_DEFAULT_CONTROL = CacheControl()


@dataclass(frozen=True, slots=True)
class Decision:
    """What the tiers may do with one request. ``reason`` says why sharing is off."""

    lookup: bool
    store: bool
    coalesce: bool
    reason: str | None = None
    semantic: bool = True
    """False: answered and stored by the exact tier only (private data, for instance)."""

    @property
    def bypass(self) -> bool:
        return not (self.lookup or self.store or self.coalesce)


def sampling_reason(params: Mapping[str, Any], max_shared_temperature: float) -> str | None:
    """Why this request asked for variety, or None."""
    temperature = params.get("temperature")
    if temperature is not None and float(temperature) > max_shared_temperature:
        return f"temperature {temperature} > {max_shared_temperature}"
    n = params.get("n")
    if n is not None and int(n) > 1:
        return f"n = {n} > 1"
    return None


def offers_tools(params: Mapping[str, Any]) -> bool:
    """True when the model may answer by asking the client to run a tool: tools (or legacy
    functions) are offered and ``tool_choice`` does not forbid them."""
    offered = params.get("tools") or params.get("functions")
    choice = params.get("tool_choice", params.get("function_call"))
    return bool(offered) and choice != "none"


def decide(
    params: Mapping[str, Any],
    control: CacheControl,
    max_shared_temperature: float,
    *,
    tools_semantic: bool = False,
) -> Decision:
    """What the tiers may do with a request. A request that :func:`offers_tools` is exact-only
    unless ``tools_semantic``: its answer may be a tool call, which only the identical request
    (same history, same tools, same question) may be given."""
    decision = _decide(params, control, max_shared_temperature)
    if not tools_semantic and decision.semantic and offers_tools(params):
        return replace(decision, semantic=False)
    return decision


def _decide(
    params: Mapping[str, Any], control: CacheControl, max_shared_temperature: float
) -> Decision:
    reason = sampling_reason(params, max_shared_temperature)
    if reason is not None and not control.share_sampled:
        return Decision(lookup=False, store=False, coalesce=False, reason=reason)
    store = not control.no_store and (control.ttl is None or control.ttl > 0)
    if control.no_cache:
        # A fresh answer was asked for: never served from a tier, nor from someone's flight.
        return Decision(lookup=False, store=store, coalesce=False, reason="no-cache")
    return Decision(lookup=True, store=store, coalesce=True)


def validate_tenant(tenant: Any) -> str:
    if tenant is None:
        return DEFAULT_TENANT
    if not isinstance(tenant, str) or not tenant:
        raise InvalidRequestType("tenant", f"expected a non-empty string, got {tenant!r}")
    return validate_text("tenant", tenant)


def validate_text(field: str, value: str) -> str:
    """``value`` if it is valid Unicode text: every key and digest hashes its UTF-8 bytes, so
    a lone surrogate (which has none) must fail here, naming ``field``, before any I/O."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidRequest(field, f"not valid Unicode text ({exc.reason})") from None
    return value


def validate_sampling(params: Mapping[str, Any]) -> None:
    """Type-check the parameters the policy reads, so a bad value fails before any I/O."""
    for name in ("temperature", "top_p"):
        value = params.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise InvalidRequestType(name, f"expected a number, got {value!r}")
    n = params.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise InvalidRequest("n", f"expected a positive integer, got {n!r}")
