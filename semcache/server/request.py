"""Turning an OpenAI request body into arguments for the cache, for every OpenAI route.

Each route's body is checked by one parser (:func:`parse_request`) against the route's
:class:`BodyShape`: the fields it forwards, the one it requires, whether it streams. Only
OpenAI's documented fields pass through. Everything else is refused by name, which is what
keeps a client from steering the proxy: ``tenant`` (the key decides it), and LiteLLM call
options such as ``api_base``/``api_key``/``mock_response`` (an ``api_base`` from a client
would send the provider key to the client's server). Cache controls come from the
``x-semcache-*`` headers and the body's ``cache`` object, the same on every route.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.server.validate import EMBEDDING_TYPES, check_types, validate_chat_params

#: OpenAI chat-completion body fields forwarded upstream (``model`` is mapped separately).
OPENAI_CHAT_FIELDS: frozenset[str] = frozenset(
    {
        "messages",
        "audio",
        "frequency_penalty",
        "function_call",
        "functions",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "metadata",
        "modalities",
        "n",
        "parallel_tool_calls",
        "prediction",
        "presence_penalty",
        "prompt_cache_key",
        "reasoning_effort",
        "response_format",
        "safety_identifier",
        "seed",
        "service_tier",
        "stop",
        "store",
        "stream",
        "stream_options",
        "temperature",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "user",
        "verbosity",
        "web_search_options",
    }
)

#: Fields of OpenAI's embeddings request passed on to LiteLLM.
EMBEDDING_FIELDS: frozenset[str] = frozenset({"input", "dimensions", "encoding_format", "user"})

#: Fields of OpenAI's legacy completions request that have a chat equivalent.
COMPLETION_FIELDS: frozenset[str] = frozenset(
    {
        "prompt",
        "max_tokens",
        "temperature",
        "top_p",
        "n",
        "stop",
        "presence_penalty",
        "frequency_penalty",
        "seed",
        "user",
        "logit_bias",
    }
)

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
class BodyShape:
    """What one route's body may hold besides ``model``, ``stream`` and ``cache``: the
    ``fields`` forwarded, the one field ``required``, and whether ``stream: true`` is served."""

    fields: frozenset[str]
    required: str
    streams: bool


CHAT = BodyShape(OPENAI_CHAT_FIELDS, required="messages", streams=True)
EMBEDDINGS = BodyShape(EMBEDDING_FIELDS, required="input", streams=False)
COMPLETIONS = BodyShape(COMPLETION_FIELDS, required="prompt", streams=False)


@dataclass(frozen=True, slots=True)
class ParsedRequest:
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
    if not raw:  # refused even when the body's cache.namespace overrides it: invalid input
        raise InvalidRequest(header, "expected a namespace name, got an empty value")
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


def parse_request(body: Any, headers: Mapping[str, str], shape: BodyShape) -> ParsedRequest:
    """Check what every route checks (a JSON object, no ``tenant``, a model name, a boolean
    ``stream`` the route serves, only ``shape``'s fields, its required one, the cache
    controls); raise :class:`InvalidRequest` naming the field."""
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
    if stream and not shape.streams:
        raise InvalidRequest("stream", "not supported on this route; use /v1/chat/completions")
    params: dict[str, Any] = {}
    for name, value in body.items():
        if name in {"model", "stream", "cache"}:
            continue
        if name not in shape.fields:
            raise InvalidRequest(name, "unrecognized request argument")
        params[name] = value
    if shape.required not in params:
        raise InvalidRequest(shape.required, "is required")
    return ParsedRequest(
        model=model, params=params, stream=stream, cache=cache_controls(headers, body.get("cache"))
    )


def parse_chat_request(body: Any, headers: Mapping[str, str]) -> ParsedRequest:
    """A chat body, also checked against OpenAI's ranges and message shapes."""
    request = parse_request(body, headers, CHAT)
    validate_chat_params(request.params)
    return request


def parse_embedding_request(body: Any, headers: Mapping[str, str]) -> ParsedRequest:
    """An embeddings body, its fields checked against OpenAI's types."""
    request = parse_request(body, headers, EMBEDDINGS)
    check_types(request.params, EMBEDDING_TYPES)
    return request


def parse_completion_request(body: Any, headers: Mapping[str, str]) -> ParsedRequest:
    """A legacy completions body as chat params: the prompt becomes one user message, and
    the result is checked as a chat body is (it is answered by a chat call)."""
    request = parse_request(body, headers, COMPLETIONS)
    params = dict(request.params)
    params["messages"] = [{"role": "user", "content": _prompt(params.pop("prompt"))}]
    validate_chat_params(params)
    return replace(request, params=params)


def _prompt(prompt: Any) -> str:
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str) or not prompt:
        raise InvalidRequestType("prompt", "expected one non-empty string")
    return prompt
