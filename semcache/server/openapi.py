"""The proxy's OpenAPI document, served at ``/openapi.json``.

Written by hand rather than generated, because the chat route reads its body itself (to
limit its size and depth before parsing, see :mod:`semcache.server.openai_routes`), so
FastAPI cannot see its shape. It describes the request body the proxy accepts, which is
OpenAI's chat-completion body restricted to what :mod:`semcache.server.validate` checks,
plus semcache's ``cache`` object and ``x-semcache-*`` headers. The reliability suite
generates requests from it (hypothesis-jsonschema) and checks that no client-side error
ever gets a 5xx.
"""

from __future__ import annotations

from typing import Any

_TEXT_PART = {
    "type": "object",
    "required": ["type", "text"],
    "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
    "additionalProperties": False,
}
_IMAGE_PART = {
    "type": "object",
    "required": ["type", "image_url"],
    "properties": {
        "type": {"const": "image_url"},
        "image_url": {
            "type": "object",
            "required": ["url"],
            "properties": {
                "url": {"type": "string"},
                "detail": {"enum": ["auto", "low", "high"]},
            },
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}


def _message(role: str, content: dict[str, Any], **extra: Any) -> dict[str, Any]:
    required = ["role", "content", *extra]
    return {
        "type": "object",
        "required": required,
        "properties": {
            "role": {"const": role},
            "content": content,
            "name": {"type": "string"},
            **extra,
        },
        "additionalProperties": False,
    }


_STRING = {"type": "string"}
_TEXT_CONTENT = {"anyOf": [_STRING, {"type": "array", "minItems": 1, "items": _TEXT_PART}]}

#: JSON Schema of ``POST /v1/chat/completions`` request bodies.
CHAT_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "messages"],
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "anyOf": [
                    _message("system", _TEXT_CONTENT),
                    _message("developer", _TEXT_CONTENT),
                    _message(
                        "user",
                        {
                            "anyOf": [
                                _STRING,
                                {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {"anyOf": [_TEXT_PART, _IMAGE_PART]},
                                },
                            ]
                        },
                    ),
                    _message("assistant", {"anyOf": [_STRING, {"type": "null"}]}),
                    _message("tool", _TEXT_CONTENT, tool_call_id=_STRING),
                ]
            },
        },
        "temperature": {"type": "number", "minimum": 0, "maximum": 2},
        "top_p": {"type": "number", "minimum": 0, "maximum": 1},
        "n": {"type": "integer", "minimum": 1, "maximum": 128},
        "max_tokens": {"type": "integer", "minimum": 1},
        "max_completion_tokens": {"type": "integer", "minimum": 1},
        "presence_penalty": {"type": "number", "minimum": -2, "maximum": 2},
        "frequency_penalty": {"type": "number", "minimum": -2, "maximum": 2},
        "top_logprobs": {"type": "integer", "minimum": 0, "maximum": 20},
        "logprobs": {"type": "boolean"},
        "seed": {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1},
        "stop": {
            "anyOf": [_STRING, {"type": "array", "maxItems": 4, "items": _STRING}, {"type": "null"}]
        },
        "stream": {"type": "boolean"},
        "user": _STRING,
        "cache": {
            "type": "object",
            "properties": {
                "no-cache": {"type": "boolean"},
                "no-store": {"type": "boolean"},
                "ttl": {"type": "number", "minimum": 0},
                "namespace": {"type": "string", "minLength": 1},
            },
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the proxy's chat route."""
    header = {"in": "header", "required": False}
    return {
        "openapi": "3.1.0",
        "info": {"title": "semcache proxy", "version": "1"},
        "paths": {
            "/v1/chat/completions": {
                "post": {
                    "security": [{"bearer": []}],
                    "parameters": [
                        {**header, "name": "x-semcache-no-cache", "schema": {"type": "boolean"}},
                        {**header, "name": "x-semcache-no-store", "schema": {"type": "boolean"}},
                        {**header, "name": "x-semcache-ttl", "schema": {"type": "number"}},
                        {**header, "name": "x-semcache-namespace", "schema": _STRING},
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": CHAT_REQUEST}},
                    },
                    "responses": {
                        "200": {"description": "A chat completion (or an SSE stream)."},
                        "400": {"description": "Invalid request; error.param names the field."},
                        "401": {"description": "Missing or unknown key."},
                        "404": {"description": "Unknown model."},
                        "413": {"description": "Body larger than server.max_body_bytes."},
                    },
                }
            }
        },
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }
