"""Client errors are 400s naming the field, with no upstream call (issue 24, item 6).

Each case was a 5xx, a silent coercion or an upstream call before: ``response_format`` or
embeddings ``encoding_format`` of the wrong type came back 502 from inside LiteLLM,
``input: [1, "a"]`` 500 after three upstream calls, ``{"all": "yes"}`` wiped every entry.
The app runs in-process against the loopback fake upstream, which counts every call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from semcache import SemanticCache
from semcache.server.app import create_app
from semcache.server.config import parse_config
from semcache.testing import FakeOpenAIServer

ENV = {"UPSTREAM_KEY": "sk-test", "ADMIN_KEY": "admin-k"}
CLIENT = {"authorization": "Bearer client-k"}
ADMIN = {"authorization": "Bearer admin-k"}
MESSAGES = [{"role": "user", "content": "hi"}]


def _route(name: str, model: str, **params: Any) -> dict[str, Any]:
    litellm_params = {"model": model, "api_key": "os.environ/UPSTREAM_KEY", **params}
    return {"model_name": name, "litellm_params": litellm_params}


@pytest.fixture(scope="module")
def app() -> Iterator[tuple[TestClient, FakeOpenAIServer]]:
    with FakeOpenAIServer() as upstream:
        base = {"api_base": upstream.api_base, "max_retries": 0}
        config = parse_config(
            {
                "model_list": [
                    _route("fast", "openai/gpt-4o-mini", **base),
                    _route("emb", "openai/text-embedding-3-small", **base),
                ],
                "clients": [{"key": "client-k", "tenant": "t"}],
                "server": {"admin_key": "os.environ/ADMIN_KEY"},
                "cache": {"store": {"backend": "none"}},
            }
        )
        cache = SemanticCache(config.cache)
        with TestClient(create_app(config, cache, environ=ENV)) as client:
            yield client, upstream
        cache.close()


def chat(**extra: Any) -> dict[str, Any]:
    return {"model": "fast", "messages": MESSAGES, **extra}


def emb(**extra: Any) -> dict[str, Any]:
    return {"model": "emb", "input": "hi", **extra}


def comp(**extra: Any) -> dict[str, Any]:
    return {"model": "fast", "prompt": "hi", **extra}


CHAT, EMB, COMP = "/v1/chat/completions", "/v1/embeddings", "/v1/completions"

#: (path, body, field named in the 400). Before: the status each got on main.
BAD: list[tuple[str, dict[str, Any], str]] = [
    (CHAT, chat(metadata=1), "metadata"),  # 200, forwarded
    (CHAT, chat(metadata={"a": 1}), "metadata.a"),  # 200, forwarded
    (CHAT, chat(response_format=1), "response_format"),  # 502
    (CHAT, chat(response_format="json"), "response_format"),  # 502
    (CHAT, chat(response_format={"type": "yaml"}), "response_format.type"),  # 200
    (CHAT, chat(user=1), "user"),  # 200, forwarded
    (CHAT, chat(tool_choice=1), "tool_choice"),  # 200, forwarded
    (CHAT, chat(function_call=[1]), "function_call"),  # 200, forwarded
    (CHAT, chat(functions={"a": 1}), "functions"),  # 200, forwarded
    (CHAT, chat(functions=[1]), "functions[0]"),  # 200, forwarded
    (CHAT, chat(modalities="text"), "modalities"),  # 200, forwarded
    (CHAT, chat(modalities=[1]), "modalities[0]"),  # 200, forwarded
    (CHAT, chat(stream_options=True), "stream_options"),  # 200, forwarded
    (CHAT, chat(audio="x"), "audio"),  # 200, forwarded
    (CHAT, chat(prediction=[1]), "prediction"),  # 200, forwarded
    (CHAT, chat(web_search_options=1.5), "web_search_options"),  # 200, forwarded
    (CHAT, chat(reasoning_effort=1), "reasoning_effort"),  # 200, forwarded
    (CHAT, chat(service_tier=True), "service_tier"),  # 200, forwarded
    (CHAT, chat(verbosity=[1]), "verbosity"),  # 200, forwarded
    (CHAT, chat(prompt_cache_key=1), "prompt_cache_key"),  # 200, forwarded
    (CHAT, chat(safety_identifier={}), "safety_identifier"),  # 200, forwarded
    (EMB, emb(input=[1, "a"]), "input"),  # 500 after 3 upstream calls
    (EMB, emb(input=[[1], "a"]), "input"),  # 500 after 3 upstream calls
    (EMB, emb(input=["a", ""]), "input"),  # 200, forwarded
    (EMB, emb(input=[True]), "input"),  # 500 after 3 upstream calls
    (EMB, emb(encoding_format=1), "encoding_format"),  # 502
    (EMB, emb(encoding_format="hex"), "encoding_format"),  # 502
    (EMB, emb(dimensions="8"), "dimensions"),  # 200, forwarded
    (EMB, emb(dimensions=0), "dimensions"),  # 200, forwarded
    (EMB, emb(user=1), "user"),  # 200, forwarded
    # past I-JSON's exact integers (2**53 - 1), as the OpenAPI document says
    (CHAT, chat(max_tokens=2**53), "max_tokens"),  # 200, forwarded
    (EMB, emb(input=[2**53]), "input"),  # 200, forwarded
    (EMB, emb(input=[[1], [2**64]]), "input"),  # 200, forwarded (a float)
    (EMB, emb(dimensions=2**53), "dimensions"),  # 200, forwarded
    (COMP, comp(user=[1]), "user"),  # 200, forwarded
    (COMP, comp(prompt=[1, 2]), "prompt"),  # 400 (kept)
    ("/admin/purge", {"all": "yes"}, "all"),  # 200: every entry deleted
    ("/admin/purge", {"all": 1}, "all"),  # 200: every entry deleted
    ("/admin/purge", {"all": "true", "tenant": "t"}, "all"),  # 200
    ("/v1/feedback", {"id": "x", "correct": "yes"}, "correct"),  # 400 (kept)
]


@pytest.mark.parametrize(("path", "body", "field"), BAD, ids=[f"{p}:{f}" for p, _, f in BAD])
def test_bad_input_is_a_400_naming_the_field_with_no_upstream_call(
    app: tuple[TestClient, FakeOpenAIServer], path: str, body: dict[str, Any], field: str
) -> None:
    client, upstream = app
    upstream.reset()
    headers = ADMIN if path.startswith("/admin") else CLIENT
    response = client.post(path, json=body, headers=headers)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == field
    assert sum(upstream.calls.values()) == 0


@pytest.mark.parametrize(
    "body",
    [emb(input="hi"), emb(input=["a", "b"]), emb(input=[1, 2]), emb(input=[[1], [2, 3]])],
)
def test_every_documented_embedding_input_is_served(
    app: tuple[TestClient, FakeOpenAIServer], body: dict[str, Any]
) -> None:
    client, upstream = app
    upstream.reset()
    response = client.post(EMB, json={**body, "cache": {"no-cache": True}}, headers=CLIENT)
    assert response.status_code == 200, response.text
    assert upstream.calls["embeddings"] == 1


@pytest.mark.parametrize("path", [CHAT, EMB])
def test_max_retries_zero_means_one_upstream_call(
    app: tuple[TestClient, FakeOpenAIServer], path: str
) -> None:
    client, upstream = app
    upstream.reset()
    upstream.fail_next = [500, 500, 500]
    body = chat(cache={"no-cache": True}) if path == CHAT else emb(cache={"no-cache": True})
    response = client.post(path, json=body, headers=CLIENT)
    assert response.status_code == 500
    assert sum(upstream.calls.values()) == 1  # LiteLLM alone made 3 on embeddings
    upstream.reset()


def test_purge_all_true_still_purges(app: tuple[TestClient, FakeOpenAIServer]) -> None:
    client, _ = app
    response = client.post("/admin/purge", json={"all": True}, headers=ADMIN)
    assert response.status_code == 200 and "deleted" in response.json()


@pytest.mark.parametrize("path", ["/healthz", "/openapi.json", "/v1/models", "/admin/stats"])
def test_read_routes_answer_head_and_405s_say_allow(
    app: tuple[TestClient, FakeOpenAIServer], path: str
) -> None:
    client, _ = app
    headers = ADMIN if path.startswith("/admin") else CLIENT
    assert client.head(path, headers=headers).status_code == 200
    refused = client.put(path, headers=headers)
    assert refused.status_code == 405
    assert set(refused.headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD"}


@pytest.mark.parametrize("path", ["/admin/entries", "/admin/misses", "/admin/dashboard"])
def test_an_empty_tenant_filter_is_refused_not_read_as_every_tenant(
    app: tuple[TestClient, FakeOpenAIServer], path: str
) -> None:
    client, _ = app
    response = client.get(path, params={"tenant": ""}, headers=ADMIN)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "tenant"
    assert client.get(path, params={"tenant": "team-a"}, headers=ADMIN).status_code == 200
    assert client.get(path, headers=ADMIN).status_code == 200  # no filter: every tenant
