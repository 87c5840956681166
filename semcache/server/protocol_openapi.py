"""OpenAPI request schemas of ``POST /v1/responses`` and ``POST /v1/messages``.

The shapes the adapters check (:mod:`semcache.protocols`), written as JSON Schema so the
served document describes them and schemathesis can fuzz the routes. The stateful Responses
fields (``previous_response_id``, ``conversation``, ``store``, ``background``) are described
too: a request with them is sent to the provider past the cache (refused for a model whose
provider keeps no Responses state).
"""

from __future__ import annotations

from typing import Any

_TEXT = {"type": "string", "minLength": 1, "maxLength": 2000}
_TEXT_PART = {
    "type": "object",
    "required": ["type", "text"],
    "properties": {"type": {"const": "text"}, "text": _TEXT},
}

#: JSON Schema of a Responses request body (the subset the routes are fuzzed with).
RESPONSES_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "input": {
            "anyOf": [
                _TEXT,
                {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 4,
                    "items": {
                        "type": "object",
                        "required": ["role", "content"],
                        "properties": {
                            "role": {"enum": ["user", "assistant", "system", "developer"]},
                            "content": _TEXT,
                        },
                    },
                },
            ]
        },
        "instructions": _TEXT,
        "temperature": {"type": "number", "minimum": 0, "maximum": 2},
        "top_p": {"type": "number", "minimum": 0, "maximum": 1},
        "max_output_tokens": {"type": "integer", "minimum": 1, "maximum": 100_000},
        "tool_choice": {"enum": ["none", "auto", "required"]},
        "text": {
            "type": "object",
            "properties": {
                "format": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"enum": ["text", "json_object"]}},
                }
            },
        },
        "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
        "user": _TEXT,
        "store": {"type": "boolean"},
        "background": {"type": "boolean"},
        "previous_response_id": {"type": "string", "minLength": 1, "maxLength": 200},
        "conversation": {
            "anyOf": [
                {"type": "string", "minLength": 1, "maxLength": 200},
                {
                    "type": "object",
                    "required": ["id"],
                    "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 200}},
                },
            ]
        },
        "stream": {"type": "boolean"},
    },
    "additionalProperties": False,
}

#: JSON Schema of an Anthropic Messages request body.
MESSAGES_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "max_tokens", "messages"],
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "max_tokens": {"type": "integer", "minimum": 1, "maximum": 100_000},
        "messages": {
            "type": "array",
            "minItems": 1,
            "maxItems": 4,
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {
                    "role": {"enum": ["user", "assistant"]},
                    "content": {
                        "anyOf": [_TEXT, {"type": "array", "minItems": 1, "items": _TEXT_PART}]
                    },
                },
            },
        },
        "system": {"anyOf": [_TEXT, {"type": "array", "minItems": 1, "items": _TEXT_PART}]},
        "temperature": {"type": "number", "minimum": 0, "maximum": 1},
        "top_p": {"type": "number", "minimum": 0, "maximum": 1},
        "top_k": {"type": "integer", "minimum": 0, "maximum": 500},
        "stop_sequences": {"type": "array", "maxItems": 4, "items": _TEXT},
        "metadata": {"type": "object", "properties": {"user_id": _TEXT}},
        "stream": {"type": "boolean"},
    },
    "additionalProperties": False,
}


def protocol_paths(
    post: Any, with_models: Any, controls: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The two routes' path items, built with the document's own ``post`` and
    ``with_models`` helpers and the ``x-semcache-*`` control headers."""
    return {
        "/v1/responses": {"post": post(with_models(RESPONSES_REQUEST), parameters=controls)},
        "/v1/messages": {"post": post(with_models(MESSAGES_REQUEST), parameters=controls)},
    }
