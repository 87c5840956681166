"""OpenAPI request schemas of ``POST /v1/responses`` and ``POST /v1/messages``.

Each schema says exactly what the adapters' checks (:mod:`semcache.protocols`) accept, field
by field, so a body the schema calls valid is answered and one it calls invalid gets a 400:
schemathesis fuzzes both ways. Fields the checks do not look inside (``reasoning``,
``thinking``, a tool's other fields, a non-text block) are open objects here too. Optional
fields may also be ``null`` (unset); :mod:`semcache.server.openapi` adds that.
The stateful Responses fields (``previous_response_id``, ``conversation``, ``store``,
``background``) are described too: a request with them is sent to the provider past the cache.
"""

from __future__ import annotations

from typing import Any

from semcache.protocols.base import MAX_SAFE_INTEGER

_STRING = {"type": "string"}
_NON_BLANK = {"type": "string", "pattern": r"\S"}
_OBJECT = {"type": "object"}
_STRINGS = {"type": "array", "items": _STRING}
_TYPED = {"type": "object", "required": ["type"], "properties": {"type": _STRING}}
_NON_EMPTY = {"type": "string", "minLength": 1}


def _integer(minimum: int, maximum: int = MAX_SAFE_INTEGER) -> dict[str, Any]:
    return {"type": "integer", "minimum": minimum, "maximum": maximum}


def _number(maximum: float) -> dict[str, Any]:
    return {"type": "number", "minimum": 0, "maximum": maximum}


def _other(kind: str) -> dict[str, Any]:
    """An object whose string ``type`` is not ``kind`` (its other fields are not checked)."""
    return {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string", "not": {"const": kind}}},
    }


def _shape(kind: str, **fields: Any) -> dict[str, Any]:
    """An object of type ``kind`` whose ``fields`` are required."""
    return {
        "type": "object",
        "required": ["type", *fields],
        "properties": {"type": {"const": kind}, **fields},
    }


#: A Responses input item: a message (``type`` may be left out) or a function call or its
#: output (:data:`semcache.protocols.responses.ITEMS`).
_RESPONSES_ITEM = {
    "anyOf": [
        {
            "type": "object",
            "required": ["role", "content"],
            "properties": {
                "type": {"const": "message"},
                "role": {"enum": ["user", "assistant", "system", "developer"]},
                "content": {"anyOf": [_STRING, {"type": "array", "items": _TYPED}]},
            },
        },
        _shape("function_call", call_id=_NON_EMPTY, name=_STRING, arguments=_STRING),
        _shape("function_call_output", call_id=_NON_EMPTY, output={"type": ["string", "array"]}),
    ]
}

#: JSON Schema of a Responses request body (the subset the routes are fuzzed with).
RESPONSES_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {"type": "string", "pattern": r"\S"},
        "input": {
            "anyOf": [_NON_BLANK, {"type": "array", "minItems": 1, "items": _RESPONSES_ITEM}]
        },
        "instructions": _STRING,
        "tools": {
            "type": "array",
            "items": {
                "anyOf": [
                    {
                        "type": "object",
                        "required": ["type", "name"],
                        "properties": {"type": {"const": "function"}, "name": _STRING},
                    },
                    _other("function"),
                ]
            },
        },
        "tool_choice": {"anyOf": [{"enum": ["none", "auto", "required"]}, _TYPED]},
        "text": {
            "type": "object",
            "properties": {
                "format": {
                    "anyOf": [
                        {"type": "null"},
                        {
                            "type": "object",
                            "required": ["type"],
                            "properties": {
                                "type": {"enum": ["text", "json_object", "json_schema"]}
                            },
                        },
                    ]
                }
            },
        },
        "reasoning": _OBJECT,
        "temperature": _number(2),
        "top_p": _number(1),
        "top_logprobs": _integer(0, 20),
        "max_output_tokens": _integer(1),
        "max_tool_calls": _integer(1),
        "parallel_tool_calls": {"type": "boolean"},
        "metadata": {"type": "object", "additionalProperties": _STRING},
        "user": _STRING,
        "safety_identifier": _STRING,
        "prompt_cache_key": _STRING,
        "service_tier": _STRING,
        "truncation": _STRING,
        "include": _STRINGS,
        "stream_options": _OBJECT,
        "store": {"type": "boolean"},
        "background": {"type": "boolean"},
        "previous_response_id": _NON_EMPTY,
        "conversation": {
            "anyOf": [
                _NON_EMPTY,
                {"type": "object", "required": ["id"], "properties": {"id": _NON_EMPTY}},
            ]
        },
        "stream": {"type": "boolean"},
    },
    "additionalProperties": False,
}

_OPTIONAL_STRING = {"type": ["string", "null"]}
#: An image's or document's source: base64 data or a URL.
_SOURCE = {
    "anyOf": [
        {
            "type": "object",
            "required": ["type", "data"],
            "properties": {
                "type": {"const": "base64"},
                "data": _NON_EMPTY,
                "media_type": _OPTIONAL_STRING,
            },
        },
        {
            "type": "object",
            "required": ["type", "url"],
            "properties": {"type": {"const": "url"}, "url": _NON_EMPTY},
        },
    ]
}
#: Each block type (:data:`semcache.protocols.messages.BLOCKS` says where each may appear).
_BLOCKS = {
    "text": _shape("text", text=_STRING),
    "image": _shape("image", source=_SOURCE),
    "document": _shape("document", source=_SOURCE),
    "tool_result": {
        **_shape("tool_result", tool_use_id=_STRING),
        "properties": {
            "type": {"const": "tool_result"},
            "tool_use_id": _STRING,
            "content": {"type": ["string", "array", "null"]},
        },
    },
    "tool_use": _shape("tool_use", id=_STRING, name=_STRING, input=_OBJECT),
    "thinking": {
        **_shape("thinking", thinking=_STRING),
        "properties": {
            "type": {"const": "thinking"},
            "thinking": _STRING,
            "signature": _OPTIONAL_STRING,
        },
    },
    "redacted_thinking": _shape("redacted_thinking", data=_STRING),
}


def _content(first: dict[str, Any], *kinds: str) -> dict[str, Any]:
    """Message content or ``system``: a ``first`` string or a non-empty list of blocks."""
    blocks = {"anyOf": [_BLOCKS[kind] for kind in kinds]}
    return {"anyOf": [first, {"type": "array", "minItems": 1, "items": blocks}]}


def _message(role: str, content: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["role", "content"],
        "properties": {"role": {"const": role}, "content": content},
    }


#: JSON Schema of an Anthropic Messages request body.
MESSAGES_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "max_tokens", "messages"],
    "properties": {
        "model": {"type": "string", "pattern": r"\S"},
        "max_tokens": _integer(1),
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "anyOf": [
                    _message(
                        "user", _content(_NON_EMPTY, "text", "image", "document", "tool_result")
                    ),
                    _message(
                        "assistant",
                        _content(_STRING, "text", "tool_use", "thinking", "redacted_thinking"),
                    ),
                ]
            },
        },
        "system": _content(_STRING, "text"),
        "tools": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"type": "object", "required": ["type"], "properties": {"type": _STRING}},
                    {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"name": _STRING, "type": _STRING},
                    },
                ]
            },
        },
        "tool_choice": {
            "type": "object",
            "required": ["type"],
            "properties": {"type": {"enum": ["auto", "any", "tool", "none"]}},
        },
        "thinking": _OBJECT,
        "temperature": _number(1),
        "top_p": _number(1),
        "top_k": _integer(0),
        "stop_sequences": _STRINGS,
        "metadata": {"type": "object", "properties": {"user_id": _STRING}},
        "service_tier": _STRING,
        "stream": {"type": "boolean"},
    },
    "additionalProperties": False,
}
