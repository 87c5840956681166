"""``/v1/embeddings``, ``/v1/completions`` and un-prefixed routes, with the OpenAI client."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import openai
import pytest
from proxy_harness import CLIENT_KEYS, Proxy

from semcache.testing import FakeOpenAIServer

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def test_embeddings_are_cached_per_tenant(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    proxy = start_proxy()
    client = proxy.client()
    first = client.embeddings.with_raw_response.create(model="fast", input="hello world")
    second = client.embeddings.with_raw_response.create(model="fast", input="hello world")
    assert first.headers["x-semcache-tier"] == "miss"
    assert second.headers["x-semcache-tier"] == "exact"
    assert second.parse().data[0].embedding == first.parse().data[0].embedding
    assert second.parse().model == "fast"
    proxy.client(CLIENT_KEYS["team-b"]).embeddings.create(model="fast", input="hello world")
    assert upstream.calls["embeddings"] == 2


def test_legacy_completions_use_the_cache(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    client = start_proxy().client()
    first = client.completions.with_raw_response.create(model="fast", prompt="Capital of France?")
    second = client.completions.with_raw_response.create(model="fast", prompt="Capital of France?")
    assert first.parse().object == "text_completion"
    assert second.parse().choices[0].text == first.parse().choices[0].text
    assert second.headers["x-semcache-tier"] == "exact"
    assert upstream.chat_calls == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": "fast"}, "input"),
        ({"model": "fast", "input": "x", "tenant": "team-b"}, "tenant"),
        ({"model": "fast", "input": "x", "bogus": 1}, "bogus"),
        ({"model": "fast", "input": "x", "stream": True}, "stream"),
    ],
)
def test_bad_embedding_requests_name_the_field(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer, body: dict, field: str
) -> None:
    proxy = start_proxy()
    response = httpx.post(
        f"{proxy.base_url}/v1/embeddings",
        json=body,
        headers={"authorization": f"Bearer {CLIENT_KEYS['team-a']}"},
    )
    assert response.status_code == 400
    assert field in response.json()["error"]["message"]
    assert upstream.calls["embeddings"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": "fast"}, "prompt"),
        ({"model": "fast", "prompt": ""}, "prompt"),
        ({"model": "fast", "prompt": ["a", "b"]}, "prompt"),
        ({"model": "fast", "prompt": "x", "tenant": "team-b"}, "tenant"),
        ({"model": "fast", "prompt": "x", "messages": []}, "messages"),
        ({"model": "fast", "prompt": "x", "stream": True}, "stream"),
        ({"model": "fast", "prompt": "x", "cache": "no"}, "cache"),
        ({"model": "fast", "prompt": "x", "temperature": -5}, "temperature"),
        ({"model": "fast", "prompt": "x", "max_tokens": 0}, "max_tokens"),
        ({"model": "fast", "prompt": "x", "stop": [1]}, "stop[0]"),
        ({"model": "fast", "prompt": "x", "logit_bias": {"a": 1}}, "logit_bias.a"),
    ],
)
def test_bad_completion_requests_name_the_field(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer, body: dict, field: str
) -> None:
    proxy = start_proxy()
    response = httpx.post(
        f"{proxy.base_url}/v1/completions",
        json=body,
        headers={"authorization": f"Bearer {CLIENT_KEYS['team-a']}"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["param"] == field
    assert upstream.chat_calls == 0


def test_unknown_model_and_bad_key(start_proxy: Callable[..., Proxy]) -> None:
    proxy = start_proxy()
    with pytest.raises(openai.NotFoundError):
        proxy.client().embeddings.create(model="nope", input="x")
    with pytest.raises(openai.AuthenticationError):
        proxy.client("wrong").completions.create(model="fast", prompt="x")


def test_routes_answer_without_the_v1_prefix(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    proxy = start_proxy()
    client = openai.OpenAI(base_url=proxy.base_url, api_key=CLIENT_KEYS["team-a"], max_retries=0)
    proxy.clients.append(client)
    client.chat.completions.create(model="fast", messages=QUESTION)
    response = client.chat.completions.with_raw_response.create(model="fast", messages=QUESTION)
    assert response.headers["x-semcache-tier"] == "exact"
    assert [m.id for m in client.models.list()] == ["fast"]
    client.embeddings.create(model="fast", input="x")
    assert upstream.chat_calls == 1 and upstream.calls["embeddings"] == 1
