"""Property-based fuzzing of the proxy from its own OpenAPI document.

Valid bodies are generated from the document's request schema (``schema_strategy``) and
must be answered (200). Invalid ones are valid bodies with one part replaced by arbitrary
JSON, a required field dropped, an unknown field added, or bytes that are not JSON; they
must never get a 5xx, and a 4xx must not have called upstream. Seeded (derandomized), so a
failure reproduces.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schema_strategy import from_schema
from starlette.testclient import TestClient

from semcache import CacheSettings, SemanticCache
from semcache.server.app import create_app
from semcache.server.config import parse_config
from semcache.testing import FakeUpstream

KEY = "fuzz-key"
AUTH = {"authorization": f"Bearer {KEY}"}
VALID_EXAMPLES = 250
INVALID_EXAMPLES = 500
CASES = {"valid": 0, "invalid": 0}


@pytest.fixture(scope="module")
def proxy() -> Iterator[tuple[TestClient, FakeUpstream, dict[str, Any]]]:
    config = parse_config(
        {
            "model_list": [
                {"model_name": "fast", "litellm_params": {"model": "openai/gpt-4o-mini"}}
            ],
            "clients": [{"key": KEY, "tenant": "fuzz"}],
            "cache": {"store": {"backend": "none"}},
        }
    )
    upstream = FakeUpstream()
    cache = SemanticCache(CacheSettings(store={"backend": "none"}), upstream=upstream)
    with TestClient(create_app(config, cache, environ={})) as client:
        schema = client.get("/openapi.json").json()
        body = schema["paths"]["/v1/chat/completions"]["post"]["requestBody"]
        yield client, upstream, body["content"]["application/json"]["schema"]
    cache.close()
    print(f"\nfuzz cases: {CASES}")


def _schema() -> dict[str, Any]:
    from semcache.server.openapi import CHAT_REQUEST

    # The proxy knows one model; everything else about a valid body is the document's.
    return {
        **CHAT_REQUEST,
        "properties": {**CHAT_REQUEST["properties"], "model": {"const": "fast"}},
    }


def test_the_served_document_is_the_one_fuzzed(proxy) -> None:
    from semcache.server.openapi import CHAT_REQUEST

    served_models = {"model": {"enum": ["fast"]}}  # the document names the served models
    properties = {**CHAT_REQUEST["properties"], **served_models}
    assert proxy[2] == {**CHAT_REQUEST, "properties": properties}


ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = [*sorted(_schema()["properties"]), "tenant", "api_base", "mock_response", "functions"]


@st.composite
def broken(draw: st.DrawFn) -> bytes:
    body = draw(from_schema(_schema()))
    how = draw(st.sampled_from(["field", "message", "content", "role", "drop", "extra", "raw"]))
    messages = body["messages"]
    i = draw(st.integers(0, len(messages) - 1))
    if how == "field":
        body[draw(st.sampled_from(FIELDS))] = draw(ANY_JSON)
    elif how == "message":
        messages[i] = draw(ANY_JSON)
    elif how == "content":
        messages[i]["content"] = draw(ANY_JSON)
    elif how == "role":
        messages[i]["role"] = draw(ANY_JSON)
    elif how == "drop":
        body.pop(draw(st.sampled_from(["model", "messages"])))
    elif how == "extra":
        body[draw(st.text(min_size=1, max_size=12))] = draw(ANY_JSON)
    else:
        return draw(st.binary(max_size=64))
    return json.dumps(body, allow_nan=True).encode()


FUZZ = settings(
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(FUZZ, max_examples=VALID_EXAMPLES)
@given(body=from_schema(_schema()))
def test_valid_bodies_are_answered(proxy, body: dict[str, Any]) -> None:
    client, _upstream, _ = proxy
    response = client.post("/v1/chat/completions", json=body, headers=AUTH)
    CASES["valid"] += 1
    assert response.status_code == 200, (body, response.text)


@settings(FUZZ, max_examples=INVALID_EXAMPLES)
@given(raw=broken())
def test_client_errors_are_never_5xx_and_never_reach_upstream(proxy, raw: bytes) -> None:
    client, upstream, _ = proxy
    before = upstream.call_count
    response = client.post(
        "/v1/chat/completions",
        content=raw,
        headers={**AUTH, "content-type": "application/json"},
    )
    CASES["invalid"] += 1
    assert response.status_code < 500, (raw, response.text)
    if response.status_code >= 400:
        assert upstream.call_count == before, raw
        error = response.json()["error"]
        assert error["message"]
        if response.status_code == 400:
            assert error["param"], (raw, error)


@pytest.mark.parametrize(
    ("headers", "field"),
    [
        ({"x-semcache-ttl": "inf"}, "x-semcache-ttl"),
        ({"x-semcache-ttl": "nan"}, "x-semcache-ttl"),
        ({"x-semcache-ttl": "-1"}, "x-semcache-ttl"),
    ],
)
def test_bad_ttl_headers_are_400(proxy, headers: dict[str, str], field: str) -> None:
    client, upstream, _ = proxy
    before = upstream.call_count
    body = {"model": "fast", "messages": [{"role": "user", "content": "hi ttl"}]}
    response = client.post("/v1/chat/completions", json=body, headers={**AUTH, **headers})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == field
    assert upstream.call_count == before
