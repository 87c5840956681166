"""``cache.responses`` / ``aresponses`` and ``cache.messages`` / ``amessages``: the library
side of the Responses and Messages adapters, against the loopback fakes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from semcache import CacheSettings, SemanticCache
from semcache.errors import InvalidRequest
from semcache.testing import FakeAnthropicServer, FakeOpenAIServer

QUESTION = "What is the capital of France?"


@pytest.fixture
def claude() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def cache() -> Iterator[SemanticCache]:
    with SemanticCache(CacheSettings(store={"backend": "none"})) as built:
        yield built


def responses_kwargs(upstream: FakeOpenAIServer, **extra: Any) -> dict[str, Any]:
    base = {"model": "openai/gpt-4o-mini", "api_base": upstream.api_base, "api_key": "k"}
    return {**base, "input": QUESTION, "instructions": "Be brief.", **extra}


def messages_kwargs(claude: FakeAnthropicServer, **extra: Any) -> dict[str, Any]:
    base = {"model": "anthropic/claude-3-5-haiku-latest", "api_base": claude.api_base}
    return {
        **base,
        "api_key": "k",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": QUESTION}],
        **extra,
    }


def test_responses_sync_and_async_share_the_cache(
    cache: SemanticCache, upstream: FakeOpenAIServer
) -> None:
    first = cache.responses(**responses_kwargs(upstream))
    assert first.cache_info.tier == "miss" and first["object"] == "response"
    assert first["output"][0]["content"][0]["text"].endswith(QUESTION)
    assert first["instructions"] == "Be brief."  # echoed from this request
    again = asyncio.run(cache.aresponses(**responses_kwargs(upstream)))
    assert again.cache_info.tier == "exact" and again["output"] == first["output"]
    assert again["usage"]["semcache"] == {"tier": "exact", "billed": False}
    events = list(cache.responses(**responses_kwargs(upstream), stream=True))
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert upstream.chat_calls == 1
    # a response id, the same on every replay of the answer, streamed or not
    assert first["id"].startswith("resp_") and again["id"] == first["id"]
    assert events[0]["response"]["id"] == events[-1]["response"]["id"] == first["id"]


def test_a_streamed_responses_miss_names_one_response_id(
    cache: SemanticCache, upstream: FakeOpenAIServer
) -> None:
    events = list(cache.responses(**responses_kwargs(upstream), stream=True))
    ids = {e["response"]["id"] for e in events if "response" in e}
    assert len(ids) == 1 and ids.pop().startswith("resp_"), ids
    items = {e["item_id"] for e in events if "item_id" in e}
    completed = events[-1]["response"]["output"]
    assert items == {item["id"] for item in completed}


def test_messages_sync_async_and_streamed(
    cache: SemanticCache, claude: FakeAnthropicServer
) -> None:
    first = cache.messages(**messages_kwargs(claude))
    assert first.cache_info.tier == "miss" and first["role"] == "assistant"
    assert first["content"][0]["text"].endswith(QUESTION)

    async def streamed() -> list[dict[str, Any]]:
        stream = await cache.amessages(**messages_kwargs(claude), stream=True)
        out = [event async for event in stream]
        assert stream.cache_info.tier == "exact"  # type: ignore[attr-defined]
        return out

    events = asyncio.run(streamed())
    assert [e["type"] for e in events][:2] == ["message_start", "content_block_start"]
    assert events[-1]["type"] == "message_stop"
    text = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert text == first["content"][0]["text"]
    assert claude.messages_calls == 1


def test_library_bad_input_names_the_field_before_any_call(
    cache: SemanticCache, upstream: FakeOpenAIServer, claude: FakeAnthropicServer
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        cache.messages(**{k: v for k, v in messages_kwargs(claude).items() if k != "max_tokens"})
    assert raised.value.field == "max_tokens"
    with pytest.raises(InvalidRequest) as raised:
        cache.responses(**responses_kwargs(upstream, store="yes"))
    assert raised.value.field == "store"
    with pytest.raises(InvalidRequest) as raised:  # no Responses state at that provider
        kwargs = messages_kwargs(claude)
        del kwargs["messages"], kwargs["max_tokens"]
        cache.responses(**kwargs, input=QUESTION, previous_response_id="resp_1")
    assert raised.value.field == "previous_response_id"
    with pytest.raises(InvalidRequest) as raised:
        cache.responses(**responses_kwargs(upstream, background=True, tenant=""))
    assert raised.value.field == "tenant"
    assert upstream.chat_calls == 0 and upstream.responses_calls == 0
    assert claude.messages_calls == 0


def test_library_stateful_responses_go_to_the_provider_and_are_never_stored(
    cache: SemanticCache, upstream: FakeOpenAIServer
) -> None:
    follow_up = responses_kwargs(upstream, previous_response_id="resp_client")
    for _ in range(2):
        reply = cache.responses(**follow_up)
        assert reply.cache_info.tier == "bypass" and reply.cache_info.miss_reason == "stateful"
        assert reply["output"][0]["content"][0]["text"].endswith(QUESTION)
        assert upstream.requests[-1]["previous_response_id"] == "resp_client"

    async def streamed() -> list[dict[str, Any]]:
        stream = await cache.aresponses(**follow_up, stream=True)
        out = [event async for event in stream]
        assert stream.cache_info.miss_reason == "stateful"  # type: ignore[attr-defined]
        return out

    events = asyncio.run(streamed())
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    assert upstream.requests[-1]["stream"] is True
    assert upstream.responses_calls == 3 and upstream.chat_calls == 0
    assert cache.responses(**responses_kwargs(upstream)).cache_info.tier == "miss"
    stats = cache.stats()
    assert stats.tiers["bypass"] == 3 and stats.counts["stateful_bypasses"] == 3
    assert stats.upstream_calls == 4 and stats.memory_entries == 1


def test_a_chat_answer_never_replays_as_a_protocol_answer(
    cache: SemanticCache, upstream: FakeOpenAIServer
) -> None:
    """Even a chat request equal to the Responses request's translation is another entry."""
    from semcache import cache_info
    from semcache.protocols import RESPONSES

    chat = RESPONSES.translate(responses_kwargs(upstream)).chat
    assert cache_info(cache.completion(**chat)).tier == "miss"
    assert cache_info(cache.completion(**chat)).tier == "exact"
    assert cache.responses(**responses_kwargs(upstream)).cache_info.tier == "miss"
    assert upstream.chat_calls == 2
