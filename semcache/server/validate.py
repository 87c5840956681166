"""Checks of a chat body against OpenAI's documented shapes and ranges, before any work.

Each problem is an :class:`~semcache.errors.InvalidRequest` naming the field by its path
(``messages[2].content[0].image_url.url``), so the client gets a 400 saying what to fix;
nothing is looked up, stored or sent upstream. Without these checks a bad value reached
LiteLLM or the provider: a content part that is not an object came back as a 502 from
inside LiteLLM, ``temperature: -5`` and ``max_tokens: -1`` were accepted and forwarded,
and ``tools`` nested 900 deep ended in a RecursionError (500).

Ranges are OpenAI's (Chat Completions API reference): ``temperature`` 0..2, ``top_p`` 0..1,
``presence_penalty``/``frequency_penalty`` -2..2, ``n`` 1..128, ``max_tokens`` and
``max_completion_tokens`` >= 1 (and, as every unbounded integer, at most ``2**53 - 1``,
I-JSON's exact range), ``top_logprobs`` 0..20, ``logit_bias`` values -100..100,
``stop`` a string or up to 4 strings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.protocols.base import MAX_SAFE_INTEGER

_NUMBER_RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "presence_penalty": (-2.0, 2.0),
    "frequency_penalty": (-2.0, 2.0),
}
_INTEGER_RANGES: dict[str, tuple[int, int | None]] = {
    "n": (1, 128),
    "max_tokens": (1, MAX_SAFE_INTEGER),
    "max_completion_tokens": (1, MAX_SAFE_INTEGER),
    "top_logprobs": (0, 20),
}
_BOOLEANS = ("logprobs", "parallel_tool_calls", "store")
ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
#: Content part types each role may send (OpenAI's message shapes).
_PART_TYPES: dict[str, frozenset[str]] = {
    "system": frozenset({"text"}),
    "developer": frozenset({"text"}),
    "tool": frozenset({"text"}),
    "assistant": frozenset({"text", "refusal"}),
    "user": frozenset({"text", "image_url", "input_audio", "file"}),
}
_RESPONSE_FORMATS = frozenset({"text", "json_object", "json_schema"})
_ENCODING_FORMATS = frozenset({"float", "base64"})
_IMAGE_DETAIL = frozenset({"auto", "low", "high"})
_AUDIO_FORMATS = frozenset({"wav", "mp3"})


def check_depth(value: Any, max_depth: int) -> None:
    """Refuse objects and arrays nested deeper than ``max_depth`` (iteratively: no recursion)."""
    stack: list[tuple[Any, str, int]] = [(value, "body", 1)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, Mapping):
            children = [(v, f"{path}.{k}" if path != "body" else str(k)) for k, v in node.items()]
        elif isinstance(node, list):
            children = [(v, f"{path}[{i}]") for i, v in enumerate(node)]
        else:
            continue
        if depth > max_depth:
            raise InvalidRequest(path, f"nested deeper than {max_depth} levels")
        stack.extend((child, where, depth + 1) for child, where in children)


#: Whole-number floats up to this size are exact integers in a double.
_EXACT_INTEGER = 2**53


def whole_numbers(value: Any) -> Any:
    """``value`` with every whole-number float (``16.0``) as an int: JSON has one number type,
    so a client may write an integer field as ``16.0`` and must get what ``16`` gets, the
    same key included. Call after :func:`check_depth` (the recursion is bounded by it)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) <= _EXACT_INTEGER else value
    if isinstance(value, dict):
        return {key: whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_numbers(item) for item in value]
    return value


def validate_chat_params(params: Mapping[str, Any]) -> None:
    """Check OpenAI's documented ranges and message shapes of forwarded chat params."""
    for name, (low, high) in _NUMBER_RANGES.items():
        value = params.get(name)
        if value is not None:
            _number(name, value, low, high)
    for name, (ilow, ihigh) in _INTEGER_RANGES.items():
        value = params.get(name)
        if value is not None:
            _integer(name, value, ilow, ihigh)
    for name in _BOOLEANS:
        value = params.get(name)
        if value is not None and not isinstance(value, bool):
            raise InvalidRequestType(name, f"expected true or false, got {value!r}")
    seed = params.get("seed")
    if seed is not None:
        _integer("seed", seed, -(2**63), 2**63 - 1)  # OpenAI's int64
    _stop(params.get("stop"))
    _logit_bias(params.get("logit_bias"))
    _messages(params.get("messages"))
    _tools(params.get("tools"))
    check_types(params, CHAT_TYPES)


def check_types(
    params: Mapping[str, Any], types: Mapping[str, Callable[[str, Any], object]]
) -> None:
    """Run each present field's type check (``None`` is OpenAI's "unset")."""
    for name, check in types.items():
        value = params.get(name)
        if value is not None:
            check(name, value)


def _metadata(field: str, value: Any) -> None:
    for key, item in _object(field, value).items():
        _string(f"{field}.{key}", item)


def _response_format(field: str, value: Any) -> None:
    kind = _object(field, value).get("type")
    if not _one_of(kind, _RESPONSE_FORMATS):
        raise InvalidRequest(f"{field}.type", f"expected one of {sorted(_RESPONSE_FORMATS)}")


def _string_or_object(field: str, value: Any) -> None:
    if not isinstance(value, str | Mapping):
        raise InvalidRequestType(field, f"expected a string or an object, got {value!r}")


def _list_of(item: Callable[[str, Any], Any]) -> Callable[[str, Any], None]:
    def check(field: str, value: Any) -> None:
        if not isinstance(value, list):
            raise InvalidRequestType(field, f"expected a list, got {type(value).__name__}")
        for i, element in enumerate(value):
            item(f"{field}[{i}]", element)

    return check


def _positive_integer(field: str, value: Any) -> None:
    _integer(field, value, 1, MAX_SAFE_INTEGER)


def _embedding_input(field: str, value: Any) -> None:
    """A string, a list of strings, a list of token ids or a list of token-id lists."""
    if isinstance(value, str):
        if not value:
            raise InvalidRequest(field, "expected a non-empty string")
        return
    if not isinstance(value, list) or not value:
        raise InvalidRequestType(field, "expected a string or a non-empty list")
    if all(isinstance(item, str) and item for item in value):
        return
    if _tokens(value) or all(isinstance(item, list) and _tokens(item) for item in value):
        return
    raise InvalidRequestType(
        field, "expected non-empty strings, token ids, or lists of token ids (not mixed)"
    )


def _tokens(value: list[Any]) -> bool:
    return bool(value) and all(
        isinstance(t, int) and not isinstance(t, bool) and 0 <= t <= MAX_SAFE_INTEGER for t in value
    )


def _encoding_format(field: str, value: Any) -> None:
    if not _one_of(value, _ENCODING_FORMATS):
        raise InvalidRequest(field, f"expected one of {sorted(_ENCODING_FORMATS)}, got {value!r}")


def _number(name: str, value: Any, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidRequestType(name, f"expected a number, got {value!r}")
    if not (math.isfinite(value) and low <= value <= high):
        raise InvalidRequest(name, f"expected a number from {low:g} to {high:g}, got {value!r}")


def _integer(name: str, value: Any, low: int | None, high: int | None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequestType(name, f"expected an integer, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"from {low} to {high}"
        raise InvalidRequest(name, f"expected an integer {bounds}, got {value!r}")


def _stop(value: Any) -> None:
    if value is None or isinstance(value, str):
        return
    if not isinstance(value, list) or len(value) > 4:
        raise InvalidRequest("stop", "expected a string or a list of up to 4 strings")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InvalidRequestType(f"stop[{i}]", f"expected a string, got {item!r}")


def _logit_bias(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise InvalidRequestType("logit_bias", "expected an object of token ids to numbers")
    for token, bias in value.items():
        if not str(token).isdigit():
            raise InvalidRequest(f"logit_bias.{token}", "expected a token id (an integer)")
        _number(f"logit_bias.{token}", bias, -100.0, 100.0)


def _one_of(value: Any, allowed: frozenset[str]) -> bool:
    """``value in allowed`` for any JSON value (a list or an object is not hashable)."""
    return isinstance(value, str) and value in allowed


def _object(field: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidRequestType(field, f"expected an object, got {type(value).__name__}")
    return value


def _string(field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidRequestType(field, f"expected a string, got {type(value).__name__}")
    return value


def _messages(value: Any) -> None:
    if not isinstance(value, list) or not value:
        raise InvalidRequest("messages", "expected a non-empty list of messages")
    for i, raw in enumerate(value):
        where = f"messages[{i}]"
        message = _object(where, raw)
        role = message.get("role")
        if not _one_of(role, ROLES):
            raise InvalidRequest(f"{where}.role", f"expected one of {sorted(ROLES)}, got {role!r}")
        content = message.get("content")
        may_be_empty = role in {"assistant", "function"}
        if content is None and not may_be_empty:
            raise InvalidRequest(f"{where}.content", "is required")
        if isinstance(content, list) and role != "function":
            _parts(f"{where}.content", content, _PART_TYPES[str(role)])
        elif content is not None and not isinstance(content, str):
            raise InvalidRequestType(
                f"{where}.content", "expected a string or a list of content parts"
            )
        if role == "tool":
            _string(f"{where}.tool_call_id", message.get("tool_call_id"))
        name = message.get("name")
        if name is not None:
            _string(f"{where}.name", name)


def _parts(where: str, parts: list[Any], allowed: frozenset[str]) -> None:
    if not parts:
        raise InvalidRequest(where, "expected at least one content part")
    for j, raw in enumerate(parts):
        field = f"{where}[{j}]"
        part = _object(field, raw)
        kind = part.get("type")
        if not _one_of(kind, allowed):
            raise InvalidRequest(
                f"{field}.type", f"expected one of {sorted(allowed)}, got {kind!r}"
            )
        if kind in {"text", "refusal"}:
            _string(f"{field}.{kind}", part.get(kind))
        elif kind == "image_url":
            image = _object(f"{field}.image_url", part.get("image_url"))
            _string(f"{field}.image_url.url", image.get("url"))
            detail = image.get("detail")
            if detail is not None and not _one_of(detail, _IMAGE_DETAIL):
                raise InvalidRequest(
                    f"{field}.image_url.detail", f"expected one of {sorted(_IMAGE_DETAIL)}"
                )
        elif kind == "input_audio":
            audio = _object(f"{field}.input_audio", part.get("input_audio"))
            _string(f"{field}.input_audio.data", audio.get("data"))
            if not _one_of(audio.get("format"), _AUDIO_FORMATS):
                raise InvalidRequest(
                    f"{field}.input_audio.format", f"expected one of {sorted(_AUDIO_FORMATS)}"
                )
        elif kind == "file":
            file = _object(f"{field}.file", part.get("file"))
            for key in ("file_data", "file_id", "filename"):
                if file.get(key) is not None:
                    _string(f"{field}.file.{key}", file.get(key))


def _tools(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        raise InvalidRequestType("tools", "expected a list of tools")
    for i, raw in enumerate(value):
        where = f"tools[{i}]"
        tool = _object(where, raw)
        kind = tool.get("type")
        if not _one_of(kind, frozenset({"function", "custom"})):
            raise InvalidRequest(f"{where}.type", f"expected 'function' or 'custom', got {kind!r}")
        spec = _object(f"{where}.{kind}", tool.get(str(kind)))
        _string(f"{where}.{kind}.name", spec.get("name"))
        if kind == "function" and spec.get("parameters") is not None:
            _object(f"{where}.function.parameters", spec.get("parameters"))


#: Type checks of the chat fields not covered by the ranges and message checks above.
CHAT_TYPES: dict[str, Callable[[str, Any], object]] = {
    "metadata": _metadata,
    "response_format": _response_format,
    "audio": _object,
    "prediction": _object,
    "stream_options": _object,
    "web_search_options": _object,
    "function_call": _string_or_object,
    "tool_choice": _string_or_object,
    "functions": _list_of(_object),
    "modalities": _list_of(_string),
    "prompt_cache_key": _string,
    "reasoning_effort": _string,
    "safety_identifier": _string,
    "service_tier": _string,
    "user": _string,
    "verbosity": _string,
}

#: Type checks of OpenAI's embeddings request body.
EMBEDDING_TYPES: dict[str, Callable[[str, Any], object]] = {
    "input": _embedding_input,
    "dimensions": _positive_integer,
    "encoding_format": _encoding_format,
    "user": _string,
}
