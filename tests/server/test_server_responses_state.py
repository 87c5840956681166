"""Responses requests that ask the provider to hold state, through the proxy with the official
``openai`` client: forwarded to the provider's Responses API (the fake OpenAI server's
``/v1/responses``) past every tier, never stored or coalesced, counted as bypasses."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from protocol_harness import TENANT_KEYS, ask_responses, openai_client, protocol_config
from proxy_harness import ENVIRON, LiveServer

from semcache.cache import SemanticCache
from semcache.server.app import create_app
from semcache.testing import FakeAnthropicServer, FakeOpenAIServer

QUESTION = "What is the capital of France?"
FOLLOW_UP = "And of Germany?"


class Running:
    def __init__(self, server: LiveServer, cache: SemanticCache) -> None:
        self.server, self.cache = server, cache
        self.base_url = server.base_url


@pytest.fixture
def serve(upstream: FakeOpenAIServer) -> Iterator[Callable[[], Running]]:
    started: list[Running] = []
    with FakeAnthropicServer() as claude:

        def start() -> Running:
            config = protocol_config(upstream.api_base, claude.api_base)
            cache = SemanticCache(config.cache)
            app = create_app(config, cache, environ=ENVIRON)
            running = Running(LiveServer(app).start(), cache)
            started.append(running)
            return running

        yield start
        for running in started:
            running.server.stop()
            running.cache.close()


def _create(client: Any, **kwargs: Any) -> tuple[dict[str, str], Any]:
    """``(headers, response)`` of ``client.responses.create`` (the completed response of a
    stream)."""
    raw = client.responses.with_raw_response.create(model="fast", **kwargs)
    if not kwargs.get("stream"):
        return dict(raw.headers), raw.parse()
    events = list(raw.parse())
    assert events[0].type == "response.created", events[0]
    assert events[-1].type == "response.completed", events[-1]
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == events[-1].response.output_text
    return dict(raw.headers), events[-1].response


def _bypassed(headers: dict[str, str]) -> bool:
    return (
        headers["x-semcache-tier"] == "bypass"
        and headers["x-semcache-miss-reason"] == "stateful"
        and "x-semcache-key" not in headers
    )


@pytest.mark.parametrize("stream", [False, True])
def test_previous_response_id_goes_to_the_provider_each_time_and_nothing_is_stored(
    serve: Callable[[], Running], upstream: FakeOpenAIServer, stream: bool
) -> None:
    proxy = serve()
    client = openai_client(proxy.base_url)
    headers, first = _create(client, input=QUESTION, store=True, stream=stream)
    assert _bypassed(headers) and first.output_text.endswith(QUESTION)
    assert upstream.requests[-1]["store"] is True
    for _ in range(2):  # identical follow-ups: two upstream calls, the field intact
        headers, answer = _create(
            client, input=FOLLOW_UP, previous_response_id=first.id, stream=stream
        )
        assert _bypassed(headers) and answer.output_text.endswith(FOLLOW_UP)
        # the provider gets the id it issued (LiteLLM maps the id it handed the client back)
        assert upstream.requests[-1]["previous_response_id"] == upstream.response_ids[0]
        assert upstream.requests[-1]["input"] == FOLLOW_UP
    assert upstream.responses_calls == 3 and upstream.chat_calls == 0
    stats = proxy.cache.stats()
    assert stats.tiers["bypass"] == 3 and stats.counts["stateful_bypasses"] == 3
    assert stats.memory_entries == 0 and stats.stored == 0
    # the same question without the field was never stored: a miss of its own
    assert ask_responses(client, FOLLOW_UP, stream=stream)[0] == "miss"
    assert upstream.chat_calls == 1 and upstream.responses_calls == 3


def test_stateful_bypasses_are_in_the_metrics(
    serve: Callable[[], Running], upstream: FakeOpenAIServer
) -> None:
    proxy = serve()
    client = openai_client(proxy.base_url)
    for _ in range(2):
        _create(client, input=QUESTION, previous_response_id="resp_given_by_client")
    metrics = httpx.get(f"{proxy.base_url}/metrics").text
    assert 'semcache_requests_total{tenant="team-a",tier="bypass"} 2.0' in metrics
    assert 'semcache_cache_events_total{kind="stateful_bypasses"} 2.0' in metrics
    assert 'semcache_upstream_calls_total{model="fast"} 2.0' in metrics


def test_stateful_requests_are_never_coalesced(
    serve: Callable[[], Running], upstream: FakeOpenAIServer
) -> None:
    proxy = serve()
    upstream.delay_s = 0.3  # the calls overlap: identical cacheable requests would share one
    tiers: list[str] = []

    def ask() -> None:
        client = openai_client(proxy.base_url)
        headers, _ = _create(client, input=QUESTION, previous_response_id="resp_1")
        tiers.append(headers["x-semcache-tier"])

    threads = [threading.Thread(target=ask) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tiers == ["bypass"] * 5
    assert upstream.responses_calls == 5
    assert all(r["previous_response_id"] == "resp_1" for r in upstream.requests)


@pytest.mark.parametrize(
    ("field", "value"),
    [("conversation", "conv_1"), ("conversation", {"id": "conv_1"}), ("background", True)],
)
def test_other_stateful_fields_reach_the_provider_intact(
    serve: Callable[[], Running], upstream: FakeOpenAIServer, field: str, value: Any
) -> None:
    proxy = serve()
    headers, answer = _create(openai_client(proxy.base_url), input=QUESTION, **{field: value})
    assert _bypassed(headers) and answer.output_text.endswith(QUESTION)
    assert upstream.requests[-1][field] == value and upstream.chat_calls == 0


@pytest.mark.parametrize("store", [None, False])
def test_an_omitted_or_false_store_is_cached(
    serve: Callable[[], Running], upstream: FakeOpenAIServer, store: bool | None
) -> None:
    """OpenAI stores by default, but an unset ``store`` asks for nothing: the cache answers."""
    proxy = serve()
    client = openai_client(proxy.base_url)
    extra = {} if store is None else {"store": store}
    assert ask_responses(client, QUESTION, **extra)[0] == "miss"
    assert ask_responses(client, QUESTION, **extra)[0] == "exact"
    assert upstream.chat_calls == 1 and upstream.responses_calls == 0


def test_stateful_request_to_a_provider_without_responses_state_is_400(
    serve: Callable[[], Running], upstream: FakeOpenAIServer
) -> None:
    proxy = serve()
    for stream in (False, True):
        response = httpx.post(
            f"{proxy.base_url}/v1/responses",
            json={"model": "claude", "input": "hi", "previous_response_id": "r", "stream": stream},
            headers={"authorization": f"Bearer {TENANT_KEYS['team-a']}"},
        )
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["param"] == "previous_response_id" and "keeps no state" in error["message"]
    assert upstream.responses_calls == 0 and upstream.chat_calls == 0
