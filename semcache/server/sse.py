"""OpenAI's wire format for chat responses and server-sent event streams.

A stream is ``data: {chat.completion.chunk}\\n\\n`` events ending with ``data: [DONE]\\n\\n``
(framed by sse-starlette's ``EventSourceResponse``, this module giving each event's data; a
memory hit's replay, all here at once, framed here as one body: :func:`whole_stream`).
Chunks are rebuilt field by field in OpenAI's shape (``finish_reason`` and ``logprobs``
present, null when unset; no LiteLLM-only fields) because strict clients parse them. An
error after the headers went out is sent as ``data: {"error": {...}}`` without ``[DONE]``,
which is what OpenAI does and what its clients raise on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import orjson

DONE = "[DONE]"

#: Headers sse-starlette's streamed responses also send (a proxy must not buffer the stream).
EVENT_STREAM_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}

_TOP_FIELDS = ("id", "object", "created", "model", "system_fingerprint")
_OPTIONAL_TOP_FIELDS = ("service_tier",)
_LITELLM_ONLY = frozenset({"provider_specific_fields"})


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _without_none(v)
            for k, v in value.items()
            if v is not None and k not in _LITELLM_ONLY
        }
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def _choice(choice: dict[str, Any]) -> dict[str, Any]:
    return {
        "index": choice.get("index", 0),
        "delta": _without_none(choice.get("delta") or {}),
        "logprobs": choice.get("logprobs"),
        "finish_reason": choice.get("finish_reason"),
    }


def chunk_payload(chunk: Any) -> dict[str, Any]:
    """A LiteLLM ``ModelResponseStream`` as OpenAI's ``chat.completion.chunk`` object."""
    raw = chunk.model_dump()
    payload: dict[str, Any] = {name: raw.get(name) for name in _TOP_FIELDS}
    payload["object"] = "chat.completion.chunk"
    for name in _OPTIONAL_TOP_FIELDS:
        if raw.get(name) is not None:
            payload[name] = raw[name]
    payload["choices"] = [_choice(c) for c in raw.get("choices") or []]
    usage = raw.get("usage")
    if usage is not None:
        payload["usage"] = _without_none(usage)
    return payload


def data(payload: dict[str, Any]) -> str:
    """The data of one server-sent event carrying ``payload`` as JSON (one line)."""
    return orjson.dumps(payload).decode()


def response_body(response: Any) -> bytes:
    """A LiteLLM ``ModelResponse`` as OpenAI's ``chat.completion`` JSON body."""
    return cast(str, response.model_dump_json()).encode()


def whole_stream(chunks: Iterable[Any]) -> bytes:
    """Every chunk of a stream and the closing ``[DONE]``, framed as one body."""
    events = [data(chunk_payload(chunk)) for chunk in chunks]
    return "".join(f"data: {event}\n\n" for event in [*events, DONE]).encode()
