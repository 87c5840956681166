"""Turning an HTTP chat request into arguments for ``SemanticCache.acompletion``.

Only OpenAI's documented chat-completion fields pass through. Everything else is refused
by name, which is what keeps a client from steering the proxy: ``tenant`` (the key decides
it), and LiteLLM call options such as ``api_base``/``api_key``/``mock_response`` (an
``api_base`` from a client would send the provider key to the client's server).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.server.validate import validate_chat_params

#: OpenAI chat-completion body fields forwarded upstream (``model`` is mapped separately).
OPENAI_CHAT_FIELDS: frozenset[str] = frozenset(
    {
        "messages", "audio", "frequency_penalty", "function_call", "functions", "logit_bias",
        "logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities", "n",
        "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key",
        "reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier",
        "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools",
        "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
    }
)  # fmt: skip

#: Request headers that carry per-request cache controls, and their LiteLLM names.
CONTROL_HEADERS: dict[str, str] = {
    "x-semcache-no-cache": "no-cache",
    "x-semcache-no-store": "no-store",
    "x-semcache-ttl": "ttl",
    "x-semcache-namespace": "namespace",
}

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """A validated request: public model name, forwarded params, stream flag, cache controls."""

    model: str
    params: dict[str, Any]
    stream: bool
    cache: dict[str, Any] | None


def _header_value(header: str, name: str, raw: str) -> Any:
    if name in {"no-cache", "no-store"}:
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise InvalidRequest(header, f"expected true or false, got {raw!r}")
    if name == "ttl":
        try:
            seconds = float(raw)
        except ValueError:
            raise InvalidRequest(header, f"expected seconds as a number, got {raw!r}") from None
        if not (math.isfinite(seconds) and seconds >= 0):
            raise InvalidRequest(header, f"expected finite, non-negative seconds, got {raw!r}")
        return seconds
    return raw


def cache_controls(headers: Mapping[str, str], body_cache: Any) -> dict[str, Any] | None:
    """Header controls overlaid by the body's ``cache`` object (the body wins per field).

    Values are passed on with LiteLLM's names; the facade validates them (so a bad
    ``cache.ttl`` in the body is reported by the same code as one from a library caller).
    """
    if body_cache is not None and not isinstance(body_cache, Mapping):
        raise InvalidRequestType("cache", f"expected an object, got {type(body_cache).__name__}")
    controls: dict[str, Any] = {}
    for header, name in CONTROL_HEADERS.items():
        raw = headers.get(header)
        if raw is not None:
            controls[name] = _header_value(header, name, raw)
    if body_cache is not None:
        controls.update(body_cache)
    return controls or None


def parse_chat_request(body: Any, headers: Mapping[str, str]) -> ChatRequest:
    """Validate a chat body (shape, OpenAI's ranges and message shapes, cache controls);
    raise :class:`InvalidRequest` naming the field."""
    if not isinstance(body, Mapping):
        raise InvalidRequestType("body", "expected a JSON object")
    if "tenant" in body:
        raise InvalidRequest("tenant", "the tenant is set by the API key and cannot be chosen")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequestType("model", f"expected a model name, got {model!r}")
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise InvalidRequestType("stream", f"expected true or false, got {stream!r}")
    params: dict[str, Any] = {}
    for name, value in body.items():
        if name in {"model", "stream", "cache"}:
            continue
        if name not in OPENAI_CHAT_FIELDS:
            raise InvalidRequest(name, "unrecognized request argument")
        params[name] = value
    if "messages" not in params:
        raise InvalidRequest("messages", "is required")
    validate_chat_params(params)
    return ChatRequest(
        model=model, params=params, stream=stream, cache=cache_controls(headers, body.get("cache"))
    )
