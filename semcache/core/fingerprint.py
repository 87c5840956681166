"""Request identity: a canonical, complete key over everything that changes the answer.

SHA-256 over canonical JSON of a versioned structure, so requests never collide through
concatenation. Every parameter counts unless listed in ``EXCLUDED`` (credentials, identity,
transport), because a missed hit costs one call and a false hit a wrong answer; the model
goes through LiteLLM's resolution; text is NFC-normalised and stripped, nothing else.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import orjson

from semcache.errors import InvalidRequest, InvalidRequestType

FINGERPRINT_VERSION = "semcache-fp-v3"

#: Parameters that never change the answer: credentials, identity, transport, delivery.
EXCLUDED: frozenset[str] = frozenset(
    {
        # credentials
        "api_key",
        "azure_ad_token",
        "azure_ad_token_provider",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "vertex_credentials",
        "organization",
        # identity and bookkeeping
        "metadata",
        "user",
        "request_id",
        "litellm_call_id",
        "litellm_trace_id",
        "litellm_logging_obj",
        "litellm_metadata",
        "proxy_server_request",
        "logger_fn",
        "tags",
        "trace_id",
        "session_id",
        # transport and retries
        "timeout",
        "request_timeout",
        "stream_timeout",
        "num_retries",
        "max_retries",
        "retry_strategy",
        "extra_headers",
        "headers",
        "client",
        "acompletion",
        # delivery, not content
        "stream",
        "stream_options",
        # semcache's own controls and LiteLLM's cache controls
        "cache",
        "caching",
        "tenant",
    }
)

#: Numeric parameters compared as floats, so ``temperature=1`` and ``temperature=1.0`` agree.
FLOAT_PARAMS: frozenset[str] = frozenset(
    {"temperature", "top_p", "presence_penalty", "frequency_penalty", "repetition_penalty", "min_p"}
)

ROLES: frozenset[str] = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


@dataclass(frozen=True, slots=True)
class RequestKeys:
    """The keys of one request inside one tenant and namespace: ``exact`` (the whole request),
    ``scope`` (all but the last user message; None when it cannot be answered semantically),
    ``prompt`` (the last user message's text, embedded) and ``model`` (resolved).
    """

    exact: str
    scope: str | None
    prompt: str | None
    model: str


def canonical_json(value: Any) -> bytes:
    """Deterministic compact JSON as UTF-8 (orjson, sorted keys); values are validated by
    ``_plain`` first, and what orjson still refuses (integers beyond 64 bits) is a bad request.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as exc:
        raise InvalidRequestType("request", f"cannot be serialised: {exc}") from None


@lru_cache(maxsize=4096)
def resolve_model(model: str, custom_llm_provider: str | None = None) -> str:
    """``provider/model`` as LiteLLM routes it; the raw string when LiteLLM cannot resolve it."""
    from litellm import get_llm_provider  # lazy: importing litellm costs seconds

    from semcache.core.llm_reply import quiet_litellm

    try:
        with quiet_litellm():
            name, provider, _, _ = get_llm_provider(model, custom_llm_provider=custom_llm_provider)
    except Exception:
        return f"unresolved/{model}"
    return f"{provider}/{name}"


def normalise_text(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def _plain(value: Any, field: str) -> Any:
    """Convert to JSON-able plain data, or raise a typed error naming the field."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidRequest(field, f"expected a finite number, got {value!r}")
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidRequestType(field, f"expected string keys, got {type(k).__name__}")
            out[k] = _plain(v, f"{field}.{k}")
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{field}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, type) and hasattr(value, "model_json_schema"):
        # LiteLLM accepts a pydantic class as response_format: its schema is its identity.
        return {"pydantic_schema": _plain(value.model_json_schema(), field)}
    if hasattr(value, "model_dump"):
        return _plain(value.model_dump(exclude_none=True), field)
    raise InvalidRequestType(field, f"expected JSON-serialisable data, got {type(value).__name__}")


def _content(value: Any, field: str) -> Any:
    """Canonical content: text NFC-normalised and stripped, every part kept."""
    if isinstance(value, str):
        return normalise_text(value)
    if isinstance(value, list):
        parts = []
        for i, part in enumerate(value):
            part = _plain(part, f"{field}[{i}]")
            if isinstance(part, dict) and "text" in part:
                if not isinstance(part["text"], str):
                    raise InvalidRequestType(
                        f"{field}[{i}].text",
                        f"expected a string, got {type(part['text']).__name__}",
                    )
                part = {**part, "text": normalise_text(part["text"])}
            parts.append(part)
        return parts
    if value is None:
        return None
    raise InvalidRequestType(
        field, f"expected a string, a list of parts or null, got {type(value).__name__}"
    )


_MISSING = object()


def _message(message: Any, index: int) -> Mapping[str, Any]:
    """A validated message mapping (field names are built only when raising: hot path)."""
    if type(message) is not dict:
        if hasattr(message, "model_dump") and not isinstance(message, Mapping):
            message = message.model_dump(exclude_none=True)
        if not isinstance(message, Mapping):
            raise InvalidRequestType(
                f"messages[{index}]",
                f"expected an object with role and content, got {type(message).__name__}",
            )
    if message.get("role") not in ROLES:
        raise InvalidRequest(
            f"messages[{index}].role",
            f"expected one of {sorted(ROLES)}, got {message.get('role')!r}",
        )
    if (
        message.get("content", _MISSING) is _MISSING
        and not message.get("tool_calls")
        and not message.get("function_call")
    ):
        raise InvalidRequest(
            f"messages[{index}].content", "missing (required unless the message has tool_calls)"
        )
    return cast(Mapping[str, Any], message)


def canonical_messages(messages: Any) -> list[dict[str, Any]]:
    """Validate messages; return their canonical form (every field kept)."""
    if not isinstance(messages, (list, tuple)):
        raise InvalidRequestType(
            "messages", f"expected a list of messages, got {type(messages).__name__}"
        )
    if not messages:
        raise InvalidRequest("messages", "expected at least one message")
    out = []
    for i, raw in enumerate(messages):
        message = _message(raw, i)
        canonical: dict[str, Any] = {}
        for k, v in message.items():
            if v is None or k == "content":
                continue
            canonical[k] = v if type(v) is str else _plain(v, f"messages[{i}].{k}")
        content = message.get("content")
        canonical["content"] = (
            normalise_text(content)
            if type(content) is str
            else _content(content, f"messages[{i}].content")
        )
        out.append(canonical)
    return out


def _params(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name, value in kwargs.items():
        if name in EXCLUDED or name in ("model", "messages") or value is None:
            continue
        if name in FLOAT_PARAMS and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = float(value)
        elif name == "stop" and isinstance(value, str):
            value = [value]
        elif name == "api_base" and isinstance(value, str):
            value = value.rstrip("/")
        params[name] = _plain(value, name)
    return params


def last_user_prompt(messages: Sequence[Any]) -> str | None:
    """Normalised text of the final message when it is a user message of text only, else None."""
    last = _message(messages[-1], len(messages) - 1)
    if last.get("role") != "user" or {k for k, v in last.items() if v is not None} - {
        "role",
        "content",
    }:
        return None
    content = last.get("content")
    if isinstance(content, str):
        return normalise_text(content) or None
    if isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") == "text" for p in content
    ):
        return normalise_text("\n".join(p.get("text", "") for p in content)) or None
    return None


def _resolved_model(kwargs: Mapping[str, Any]) -> str:
    model = kwargs.get("model")
    if model is None:
        raise InvalidRequest("model", "missing")
    if not isinstance(model, str) or not model.strip():
        raise InvalidRequestType("model", f"expected a non-empty string, got {model!r}")
    provider = kwargs.get("custom_llm_provider")
    return resolve_model(model, provider if isinstance(provider, str) else None)


def request_keys(kwargs: Mapping[str, Any], *, tenant: str, namespace: str) -> RequestKeys:
    """Validate a LiteLLM-style request and compute its keys. Never mutates ``kwargs``."""
    resolved = _resolved_model(kwargs)
    messages = canonical_messages(kwargs.get("messages"))
    params = _params(kwargs)
    # One serialisation of everything but the last message serves both keys:
    #   scope = H(["v", "scope", inner])      exact = H(["v", "exact", inner, last])
    # Both payloads are canonical JSON arrays, so distinct requests give distinct payloads.
    inner = canonical_json(
        {
            "tenant": tenant,
            "namespace": namespace,
            "model": resolved,
            "params": params,
            "context": messages[:-1],
        }
    )
    head = canonical_json(FINGERPRINT_VERSION)
    exact = hashlib.sha256(
        b"[" + head + b',"exact",' + inner + b"," + canonical_json(messages[-1]) + b"]"
    ).hexdigest()
    prompt = last_user_prompt(kwargs["messages"])
    scope = None
    if prompt is not None:
        scope = hashlib.sha256(b"[" + head + b',"scope",' + inner + b"]").hexdigest()
    return RequestKeys(exact=exact, scope=scope, prompt=prompt, model=resolved)


EMBEDDING_VERSION = "semcache-emb-v1"


def embedding_key(kwargs: Mapping[str, Any], *, tenant: str, namespace: str) -> tuple[str, str]:
    """Key and resolved model of a LiteLLM ``embedding`` request (own version prefix; ``input`` kept
    as given, other parameters as in :func:`request_keys`). Never mutates ``kwargs``.
    """
    resolved = _resolved_model(kwargs)
    text = kwargs.get("input")
    if isinstance(text, str):
        if not text:
            raise InvalidRequest("input", "expected a non-empty string")
    elif not isinstance(text, (list, tuple)) or not text:
        raise InvalidRequestType(
            "input", f"expected a string or a non-empty list, got {type(text).__name__}"
        )
    payload = {
        "tenant": tenant,
        "namespace": namespace,
        "model": resolved,
        "params": _params({k: v for k, v in kwargs.items() if k != "input"}),
        "input": _plain(text, "input"),
    }
    body = canonical_json([EMBEDDING_VERSION, payload])
    return hashlib.sha256(body).hexdigest(), resolved
