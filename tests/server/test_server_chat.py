"""Chat completions through the proxy with the official OpenAI client, on loopback."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable

import httpx
import openai
import pytest
from proxy_harness import (
    ADMIN_KEY,
    CLIENT_KEYS,
    UPSTREAM_KEY,
    Proxy,
    proxy_config,
    wait_until,
)

from semcache.testing import FakeOpenAIServer, InMemoryStore, echo_responder

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
PARAPHRASE = [{"role": "user", "content": "What's the capital city of France?"}]


class AcceptAll:
    """Verifier that accepts every candidate above the threshold (isolates the proxy)."""

    name = "accept-all"

    def verify(self, query: str, candidate: str) -> bool:
        return True


def ask(client: openai.OpenAI, messages: list[dict], **kwargs: object):
    return client.chat.completions.with_raw_response.create(
        model="fast", messages=messages, **kwargs
    )


def _sse_events(text: str) -> list[str]:
    assert text.endswith("\n\n")
    events = text.split("\n\n")[:-1]
    assert all(e.startswith("data: ") for e in events), events
    return [e[len("data: ") :] for e in events]


# -- exact, streaming, coalesced, semantic --------------------------------------------------
def test_miss_then_exact_hit_in_headers(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    client = start_proxy().client()
    first, second = ask(client, QUESTION), ask(client, QUESTION)
    assert first.headers["x-semcache-tier"] == "miss"
    assert second.headers["x-semcache-tier"] == "exact"
    assert first.headers["x-semcache-key"] == second.headers["x-semcache-key"]
    assert "x-semcache-similarity" not in second.headers
    answer = second.parse().choices[0].message.content
    assert answer == first.parse().choices[0].message.content
    assert answer == "[gpt-4o-mini] answer to: What is the capital of France?"
    assert upstream.chat_calls == 1
    assert upstream.headers[0]["authorization"] == f"Bearer {UPSTREAM_KEY}"


def test_stream_is_openai_sse_and_replays_from_cache(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    proxy = start_proxy()
    body = {"model": "fast", "messages": QUESTION, "stream": True}
    headers = {"authorization": f"Bearer {CLIENT_KEYS['team-a']}"}
    response = httpx.post(f"{proxy.base_url}/v1/chat/completions", json=body, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-semcache-tier"] == "miss"
    events = _sse_events(response.text)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    for chunk in chunks:
        assert chunk["object"] == "chat.completion.chunk"
        assert set(chunk) >= {"id", "created", "model", "choices"}
        assert set(chunk["choices"][0]) == {"index", "delta", "logprobs", "finish_reason"}
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert text == "[gpt-4o-mini] answer to: What is the capital of France?"

    raw = ask(proxy.client(), QUESTION, stream=True)
    assert raw.headers["x-semcache-tier"] == "exact"
    replayed = "".join(c.choices[0].delta.content or "" for c in raw.parse() if c.choices)
    assert replayed == text
    hit = httpx.post(f"{proxy.base_url}/v1/chat/completions", json=body, headers=headers)
    assert hit.headers["x-semcache-tier"] == "exact"
    assert hit.headers["content-type"].startswith("text/event-stream")
    assert hit.headers["cache-control"] == "no-cache" and hit.headers["x-accel-buffering"] == "no"
    hit_events = _sse_events(hit.text)
    assert hit_events[-1] == "[DONE]"
    hit_chunks = [json.loads(e) for e in hit_events[:-1]]
    assert [c["choices"] for c in hit_chunks][-1][0]["finish_reason"] == "stop"
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in hit_chunks) == text
    assert upstream.chat_calls == 1


def test_concurrent_identical_requests_coalesce(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    proxy = start_proxy()
    release = threading.Event()  # the upstream answers once every request joined the flight
    upstream.responder = lambda body: release.wait(30) and echo_responder(body)
    tiers: list[str] = []
    origins: list[str | None] = []
    answers: list[str | None] = []

    def one(stream: bool) -> None:
        client = proxy.client()
        raw = ask(client, QUESTION, stream=stream)
        tiers.append(raw.headers["x-semcache-tier"])
        origins.append(raw.headers.get("x-semcache-origin"))
        if stream:
            answers.append("".join(c.choices[0].delta.content or "" for c in raw.parse()))
        else:
            answers.append(raw.parse().choices[0].message.content)

    threads = [threading.Thread(target=one, args=(i % 2 == 0,)) for i in range(6)]
    for thread in threads:
        thread.start()
    coalescer = proxy.cache._parts.coalescer
    try:
        wait_until(lambda: coalescer.waiting() == 6, timeout_s=30)
    finally:
        release.set()
    for thread in threads:
        thread.join(timeout=30)
    assert upstream.chat_calls == 1
    assert Counter(tiers) == {"miss": 1, "coalesced": 5}
    assert Counter(origins) == {None: 1, "miss": 5}  # the shared answer was the leader's miss
    assert len(set(answers)) == 1


def test_semantic_hit_with_minilm(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer, minilm: object
) -> None:
    from semcache.cache import SemanticCache

    config = proxy_config(upstream.api_base, semantic={"threshold": 0.8})
    store = InMemoryStore()
    cache = SemanticCache(config.cache, embedder=minilm, store=store, verifier=AcceptAll())
    proxy = start_proxy(cache=cache, config=config)
    assert ask(proxy.client(), QUESTION).headers["x-semcache-tier"] == "miss"
    wait_until(lambda: store.count() == 1)  # the store write happens behind the response
    hit = ask(proxy.client(), PARAPHRASE)
    assert hit.headers["x-semcache-tier"] == "semantic"
    assert 0.8 <= float(hit.headers["x-semcache-similarity"]) <= 1.0
    assert hit.parse().choices[0].message.content.endswith("capital of France?")
    other_tenant = ask(proxy.client(CLIENT_KEYS["team-b"]), PARAPHRASE)
    assert other_tenant.headers["x-semcache-tier"] == "miss"
    assert upstream.chat_calls == 2


# -- auth and tenants -----------------------------------------------------------------------
@pytest.mark.parametrize("key", ["wrong-key", ADMIN_KEY])
def test_bad_key_is_401_in_openai_format(start_proxy: Callable[..., Proxy], key: str) -> None:
    proxy = start_proxy()
    with pytest.raises(openai.AuthenticationError) as caught:
        ask(proxy.client(key), QUESTION)
    assert caught.value.status_code == 401
    assert caught.value.body["code"] == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        proxy.client(key).models.list()
    missing = httpx.post(f"{proxy.base_url}/v1/chat/completions", json={"model": "fast"})
    assert missing.status_code == 401
    assert missing.json()["error"]["type"] == "invalid_request_error"


def test_models_lists_public_names(start_proxy: Callable[..., Proxy]) -> None:
    assert [m.id for m in start_proxy().client().models.list()] == ["fast"]


def test_tenants_never_share_entries(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    proxy = start_proxy()
    a, b = proxy.client(CLIENT_KEYS["team-a"]), proxy.client(CLIENT_KEYS["team-b"])
    from_b = ask(b, QUESTION)
    from_a = ask(a, QUESTION)
    assert from_b.headers["x-semcache-tier"] == "miss"
    assert from_a.headers["x-semcache-tier"] == "miss"
    assert from_a.headers["x-semcache-key"] != from_b.headers["x-semcache-key"]
    assert ask(a, QUESTION).headers["x-semcache-tier"] == "exact"
    assert upstream.chat_calls == 2
    with pytest.raises(openai.BadRequestError) as caught:
        ask(a, QUESTION, extra_body={"tenant": "team-b"})
    assert caught.value.body["param"] == "tenant"
    assert upstream.chat_calls == 2


# -- cache controls -------------------------------------------------------------------------
def test_cache_controls_from_headers_and_body(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    client = start_proxy().client()
    ask(client, QUESTION)
    fresh = ask(client, QUESTION, extra_headers={"x-semcache-no-cache": "true"})
    assert fresh.headers["x-semcache-tier"] == "miss"
    assert upstream.chat_calls == 2
    other_ns = ask(client, QUESTION, extra_headers={"x-semcache-namespace": "docs"})
    assert other_ns.headers["x-semcache-tier"] == "miss"
    same_ns = ask(client, QUESTION, extra_body={"cache": {"namespace": "docs"}})
    assert same_ns.headers["x-semcache-tier"] == "exact"
    ask(client, PARAPHRASE, extra_headers={"x-semcache-no-store": "1"})
    again = ask(client, PARAPHRASE)
    assert again.headers["x-semcache-tier"] == "miss"
    assert upstream.chat_calls == 5


# -- bad requests and upstream errors -------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"messages": [{"role": "wizard", "content": "hi"}]}, "messages[0].role"),
        ({"messages": QUESTION, "extra_body": {"api_base": "http://evil"}}, "api_base"),
        ({"messages": QUESTION, "extra_body": {"cache": {"ttl": -1}}}, "cache.ttl"),
        ({"messages": QUESTION, "extra_headers": {"x-semcache-ttl": "soon"}}, "x-semcache-ttl"),
        ({"messages": QUESTION, "temperature": "hot"}, "temperature"),
    ],
)
def test_bad_request_is_400_naming_the_field(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer, kwargs: dict, param: str
) -> None:
    client = start_proxy().client()
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="fast", **kwargs)
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == param
    assert caught.value.body["type"] == "invalid_request_error"
    assert upstream.chat_calls == 0


def test_unknown_model_and_bad_json(start_proxy: Callable[..., Proxy]) -> None:
    proxy = start_proxy()
    with pytest.raises(openai.NotFoundError) as caught:
        proxy.client().chat.completions.create(model="nope", messages=QUESTION)
    assert caught.value.body["code"] == "model_not_found"
    bad = httpx.post(
        f"{proxy.base_url}/v1/chat/completions",
        content=b"{not json",
        headers={"authorization": f"Bearer {CLIENT_KEYS['team-a']}"},
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["param"] == "body"
    unknown_route = httpx.get(f"{proxy.base_url}/v1/nothing")
    assert unknown_route.status_code == 404
    assert "error" in unknown_route.json()


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_upstream_errors_keep_status(
    start_proxy: Callable[..., Proxy],
    upstream: FakeOpenAIServer,
    status: int,
    error: type[openai.APIStatusError],
    stream: bool,
) -> None:
    client = start_proxy().client()
    upstream.fail_next = [status]
    with pytest.raises(error) as caught:
        client.chat.completions.create(model="fast", messages=QUESTION, stream=stream)
    assert caught.value.status_code == status
    assert UPSTREAM_KEY not in str(caught.value.body)
    assert upstream.chat_calls == 1
    # nothing was stored: the next call goes upstream and succeeds
    assert ask(client, QUESTION).headers["x-semcache-tier"] == "miss"


def test_client_leaving_a_stream_does_not_break_the_proxy(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    proxy = start_proxy()
    upstream.chunks = 8
    upstream.chunk_delay_s = 0.1
    body = {"model": "fast", "messages": QUESTION, "stream": True}
    headers = {"authorization": f"Bearer {CLIENT_KEYS['team-a']}"}
    with httpx.stream(
        "POST", f"{proxy.base_url}/v1/chat/completions", json=body, headers=headers
    ) as response:
        first = next(response.iter_lines())
        assert first.startswith("data: ")
    upstream.chunk_delay_s = 0.0
    later = ask(proxy.client(), PARAPHRASE)
    assert later.headers["x-semcache-tier"] == "miss"


def test_upstream_dropping_mid_stream_ends_with_an_error_event(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    proxy = start_proxy()
    upstream.chunks = 6
    upstream.abort_stream_after = 2
    response = httpx.post(
        f"{proxy.base_url}/v1/chat/completions",
        json={"model": "fast", "messages": QUESTION, "stream": True},
        headers={"authorization": f"Bearer {CLIENT_KEYS['team-a']}"},
    )
    assert response.status_code == 200  # the headers were out before the upstream failed
    events = _sse_events(response.text)
    assert "[DONE]" not in events
    assert "error" in json.loads(events[-1])
    assert UPSTREAM_KEY not in response.text
    upstream.abort_stream_after = None
    # the cut-off answer was not stored
    assert ask(proxy.client(), QUESTION).headers["x-semcache-tier"] == "miss"


# -- JSON numbers ----------------------------------------------------------------------------
def test_a_whole_number_float_is_the_integer_it_writes(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    """``"max_tokens": 16.0`` is the integer 16 (JSON has one number type): accepted, and the
    same key as ``16``, so the second ask is an exact hit; a fraction is still refused."""
    proxy = start_proxy()
    headers = {"Authorization": f"Bearer {CLIENT_KEYS['team-a']}"}
    url = f"{proxy.base_url}/v1/chat/completions"
    body = '{"model": "fast", "messages": [{"role": "user", "content": "hi"}], "max_tokens": %s}'
    with httpx.Client(timeout=30) as http:
        first = http.post(url, content=body % "16.0", headers=headers)
        second = http.post(url, content=body % "16", headers=headers)
        fraction = http.post(url, content=body % "16.5", headers=headers)
    assert first.status_code == 200, first.text
    assert first.headers["x-semcache-tier"] == "miss"
    assert second.headers["x-semcache-tier"] == "exact"
    assert first.headers["x-semcache-key"] == second.headers["x-semcache-key"]
    assert fraction.status_code == 400
    assert fraction.json()["error"]["param"] == "max_tokens"
    assert upstream.calls["chat"] == 1
