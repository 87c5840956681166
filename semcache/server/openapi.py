"""The proxy's OpenAPI document, served at ``/openapi.json``.

Written by hand rather than generated, because the routes read their bodies themselves (to
limit its size and depth before parsing, see :mod:`semcache.server.openai_routes`), so
FastAPI cannot see its shape. It describes every route: the request bodies the proxy accepts
(OpenAI's bodies restricted to what :mod:`semcache.server.validate` checks, plus semcache's
``cache`` object and ``x-semcache-*`` headers), the admin, tuning and dashboard routes and the
operations routes (each GET route also answers HEAD). The reliability suite
generates requests from it (hypothesis-jsonschema) and checks that no client-side error
ever gets a 5xx.
"""

from __future__ import annotations

from typing import Any

from semcache.protocols.base import MAX_SAFE_INTEGER
from semcache.server.protocol_openapi import MESSAGES_REQUEST, RESPONSES_REQUEST

#: Message parts and messages may carry more fields than these (a provider's ``cache_control``,
#: what an SDK echoes back from a reply): they are passed on, and are part of the cache key.
_TEXT_PART = {
    "type": "object",
    "required": ["type", "text"],
    "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
    "additionalProperties": True,
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
                "detail": {"enum": ["auto", "low", "high", None]},
            },
            "additionalProperties": True,
        },
    },
    "additionalProperties": True,
}


def _message(role: str, content: dict[str, Any], **extra: Any) -> dict[str, Any]:
    required = ["role", "content", *extra]
    return {
        "type": "object",
        "required": required,
        "properties": {
            "role": {"const": role},
            "content": content,
            "name": {"type": ["string", "null"]},
            **extra,
        },
        "additionalProperties": True,
    }


_STRING = {"type": "string"}
#: A count with no upper bound of its own: as large as a JSON number stays exact (I-JSON).
_COUNT = {"type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER}
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
        "max_tokens": _COUNT,
        "max_completion_tokens": _COUNT,
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
        "cache": {  # null: no controls of the request's own
            "type": ["object", "null"],
            "properties": {
                "no-cache": {"type": "boolean"},
                "no-store": {"type": "boolean"},
                # null: no TTL of the request's own (the configured one applies)
                "ttl": {"type": ["number", "null"], "minimum": 0},
                "namespace": {"type": "string", "minLength": 1},
            },
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}


_CACHE = CHAT_REQUEST["properties"]["cache"]
_TOKEN_ID = {"type": "integer", "minimum": 0, "maximum": MAX_SAFE_INTEGER}
_INTEGER_TOKENS = {"type": "array", "minItems": 1, "items": _TOKEN_ID}

#: JSON Schema of ``POST /v1/embeddings`` request bodies (:data:`validate.EMBEDDING_TYPES`).
EMBEDDING_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "input": {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
                _INTEGER_TOKENS,
                {"type": "array", "minItems": 1, "items": _INTEGER_TOKENS},
            ]
        },
        "dimensions": _COUNT,
        "encoding_format": {"enum": ["float", "base64"]},
        "user": _STRING,
        "cache": _CACHE,
    },
    "additionalProperties": False,
}

_COMPLETION_FIELDS = (
    "max_tokens",
    "temperature",
    "top_p",
    "n",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "user",
)

#: JSON Schema of ``POST /v1/completions`` request bodies (one prompt, answered by chat).
COMPLETION_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "prompt"],
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "prompt": {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 1,
                    "items": {"type": "string", "minLength": 1},
                },
            ]
        },
        **{name: CHAT_REQUEST["properties"][name] for name in _COMPLETION_FIELDS},
        "cache": _CACHE,
    },
    "additionalProperties": False,
}


def _with_cache(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "properties": {**body["properties"], "cache": _CACHE}}


#: ``POST /v1/responses`` and ``POST /v1/messages`` (:mod:`.protocol_openapi`), with the
#: ``cache`` object every model route reads.
RESPONSES_BODY = _with_cache(RESPONSES_REQUEST)
MESSAGES_BODY = _with_cache(MESSAGES_REQUEST)


def _unset_is_null(schema: dict[str, Any]) -> None:
    """Every optional field of a request body may be ``null``: OpenAI's "unset", which the
    proxy reads so too (``validate.py``, and the protocol adapters)."""
    required = schema.get("required", [])
    for name, prop in schema["properties"].items():
        allows_null = (
            prop.get("type") == "null"
            or "null" in (prop.get("type") or [])
            or any(option.get("type") == "null" for option in prop.get("anyOf", []))
        )
        if name not in required and not allows_null:
            schema["properties"][name] = {"anyOf": [prop, {"type": "null"}]}


for _body in (CHAT_REQUEST, EMBEDDING_REQUEST, COMPLETION_REQUEST, RESPONSES_BODY, MESSAGES_BODY):
    _unset_is_null(_body)
_unset_is_null(MESSAGES_BODY["properties"]["metadata"]["anyOf"][0])  # metadata.user_id

_NAME = {"type": "string", "minLength": 1}
_FILTER = {"tenant": _NAME, "namespace": _NAME, "model": _NAME}

#: ``POST /admin/purge``: at least one filter, or ``all: true``.
PURGE_REQUEST: dict[str, Any] = {
    "type": "object",
    "properties": {**_FILTER, "all": {"type": "boolean"}},
    "anyOf": [{"required": [name]} for name in _FILTER]
    + [{"required": ["all"], "properties": {"all": {"const": True}}}],
    "additionalProperties": False,
}

#: ``POST /v1/feedback``.
FEEDBACK_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["id", "correct"],
    "properties": {
        "id": {"type": "string", "minLength": 1, "maxLength": 200},
        "correct": {"type": "boolean"},
    },
    "additionalProperties": False,
}

#: ``POST /admin/threshold``: the cosine to serve, as the default or one namespace's.
THRESHOLD_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["threshold"],
    "properties": {
        "threshold": {"type": "number", "minimum": 0, "maximum": 1},
        "namespace": {
            "anyOf": [{"type": "string", "minLength": 1, "maxLength": 200}, {"type": "null"}]
        },
    },
    "additionalProperties": False,
}

_CLIENT: list[dict[str, list[str]]] = [{"bearer": []}]
_HEADER = {"in": "header", "required": False}
_CONTROLS = [
    {**_HEADER, "name": "x-semcache-no-cache", "schema": {"type": "boolean"}},
    {**_HEADER, "name": "x-semcache-no-store", "schema": {"type": "boolean"}},
    {**_HEADER, "name": "x-semcache-ttl", "schema": {"type": "number", "minimum": 0}},
    {**_HEADER, "name": "x-semcache-namespace", "schema": _NAME},
]
_ERRORS = {
    "400": {"description": "Invalid request; error.param names the field."},
    "401": {"description": "Missing or unknown key."},
    "403": {"description": "The admin API is disabled (no server.admin_key)."},
    "404": {"description": "Unknown model or serve id."},
    "408": {"description": "Body not received within server.body_timeout_s."},
    "413": {"description": "Body larger than server.max_body_bytes."},
    "503": {"description": "The cache is unavailable (admin operations do not fail open)."},
}
_OK = {"200": {"description": "OK."}}


def _json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _query(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"in": "query", "name": name, "required": False, "schema": schema}


def _post(body: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "security": _CLIENT,
        "requestBody": _json_body(body),
        "responses": {**_OK, **_ERRORS},
        **extra,
    }


def _read(*params: dict[str, Any], secured: bool = True, optional: bool = False) -> dict[str, Any]:
    """A GET/HEAD operation; ``optional``: a key is asked for only when one is configured
    (``server.metrics_key``), so a request without one may succeed (``{}``: no security)."""
    operation: dict[str, Any] = {"responses": {**_OK, **_ERRORS}, "parameters": list(params)}
    if secured:
        operation["security"] = [*_CLIENT, {}] if optional else _CLIENT
    return {"get": operation, "head": operation}


def _with_models(schema: dict[str, Any], models: list[str] | None) -> dict[str, Any]:
    if not models:
        return schema
    properties = {**schema["properties"], "model": {"enum": models}}
    return {**schema, "properties": properties}


def openapi_document(models: list[str] | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every route; ``models``: the public model names served."""
    tenant = _query("tenant", _NAME)
    paths: dict[str, Any] = {
        "/v1/chat/completions": {
            "post": _post(_with_models(CHAT_REQUEST, models), parameters=_CONTROLS)
        },
        "/v1/completions": {
            "post": _post(_with_models(COMPLETION_REQUEST, models), parameters=_CONTROLS)
        },
        "/v1/embeddings": {
            "post": _post(_with_models(EMBEDDING_REQUEST, models), parameters=_CONTROLS)
        },
        "/v1/responses": {
            "post": _post(_with_models(RESPONSES_BODY, models), parameters=_CONTROLS)
        },
        "/v1/messages": {"post": _post(_with_models(MESSAGES_BODY, models), parameters=_CONTROLS)},
        "/v1/models": _read(),
        "/v1/feedback": {"post": _post(FEEDBACK_REQUEST)},
        "/admin/purge": {"post": _post(PURGE_REQUEST)},
        "/admin/entries": _read(
            tenant, _query("limit", {"type": "integer", "minimum": 1, "maximum": 1000})
        ),
        "/admin/stats": _read(),
        "/admin/misses": _read(
            tenant, _query("min_count", {"type": "integer", "minimum": 1, "maximum": 1_000_000})
        ),
        "/admin/labels": _read(),
        "/admin/reload": {"post": {"security": _CLIENT, "responses": {**_OK, **_ERRORS}}},
        "/admin/threshold": {**_read(), "post": _post(THRESHOLD_REQUEST)},
        "/admin/dashboard": _read(
            tenant, _query("buckets", {"type": "integer", "minimum": 1, "maximum": 100_000})
        ),
        "/admin/dashboard/labels": {"post": _post(FEEDBACK_REQUEST)},
        "/ui": {"get": {"responses": {"200": {"description": "The dashboard page (HTML)."}}}},
        "/healthz": _read(secured=False),
        "/readyz": _read(secured=False),
        "/metrics": _read(optional=True),
        "/openapi.json": _read(secured=False),
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "semcache proxy", "version": "1"},
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }
