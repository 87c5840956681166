"""LiteLLM's cache slot for its Responses and Messages call types.

Through ``litellm.aresponses`` / ``litellm.responses`` against the loopback FakeOpenAIServer
(``/v1/responses``) and ``litellm.anthropic.messages.acreate`` against FakeAnthropicServer;
their call counts say what reached the provider. Nothing in LiteLLM is patched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import litellm
import pytest

from semcache import CacheSettings, InvalidRequest, SemanticCache, cache_info
from semcache.integrations.litellm import LiteLLMCache
from semcache.integrations.litellm_protocols import PROTOCOL_CALL_TYPES, read_call
from semcache.protocols import MESSAGES, RESPONSES
from semcache.stats import MissReason, Tier
from semcache.testing import FakeAnthropicServer, FakeEmbedder, FakeOpenAIServer, InMemoryStore

QUESTION = "What is the capital of France?"
OTHER = "How long should sourdough bread proof overnight?"
TOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
ANTHROPIC_TOOL = {"name": "get_weather", "input_schema": {"type": "object"}}
SERVED = {"tier": "exact", "billed": False}


@pytest.fixture(scope="module")
def claude_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def claude(claude_server: FakeAnthropicServer) -> FakeAnthropicServer:
    claude_server.reset()
    return claude_server


@pytest.fixture
def cache() -> Iterator[SemanticCache]:
    settings = CacheSettings(store={"backend": "edge"})
    with SemanticCache(settings, embedder=FakeEmbedder(), store=InMemoryStore()) as built:
        litellm.cache = LiteLLMCache(built)
        yield built
        litellm.disable_cache()


def ask(upstream: FakeOpenAIServer, text: str = QUESTION, **extra: Any) -> dict[str, Any]:
    base = {"model": "openai/gpt-4o-mini", "api_base": upstream.api_base, "api_key": "k"}
    return {**base, "input": text, "instructions": "Be brief.", **extra}


def ask_claude(claude: FakeAnthropicServer, text: str = QUESTION, **extra: Any) -> dict[str, Any]:
    return {
        "model": "anthropic/claude-3-5-haiku-latest",
        "api_base": claude.api_base,
        "api_key": "k",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": text}],
        **extra,
    }


async def stored(cache: SemanticCache, count: int) -> None:
    """Wait until ``count`` answers have landed: LiteLLM stores from a background task."""
    for _ in range(500):
        if cache.stats().stored >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{cache.stats().stored} answers stored, expected {count}")


async def responses(cache: SemanticCache, *calls: dict[str, Any]) -> list[Any]:
    """Each call through ``litellm.aresponses``, each answer stored before the next."""
    out = []
    for kwargs in calls:
        before = cache.stats().stored
        out.append(await litellm.aresponses(**kwargs))
        if not out[-1]._hidden_params.get("cache_hit"):
            await stored(cache, before + 1)
    return out


async def messages(cache: SemanticCache, *calls: dict[str, Any]) -> list[dict[str, Any]]:
    """Each call through ``litellm.anthropic.messages.acreate``, each answer stored before the
    next (a hit's usage says semcache served it)."""
    out = []
    for kwargs in calls:
        before = cache.stats().stored
        out.append(await litellm.anthropic.messages.acreate(**kwargs))
        if "semcache" not in out[-1]["usage"]:
            await stored(cache, before + 1)
    return out


def text_of(response: Any) -> str:
    return str(response.output[0].content[0].text)


# -- Responses ---------------------------------------------------------------------------------
def test_aresponses_repeat_is_served_and_another_question_is_not(cache, upstream):
    first, again, other = asyncio.run(
        responses(cache, ask(upstream), ask(upstream), ask(upstream, OTHER))
    )
    assert upstream.responses_calls == 2 and upstream.chat_calls == 0
    assert not first._hidden_params.get("cache_hit") and again._hidden_params["cache_hit"]
    assert type(again) is type(first) and again.object == "response"
    assert text_of(again) == text_of(first) and text_of(first).endswith(QUESTION)
    assert again.usage.semcache == SERVED and again.usage.input_tokens_details.cached_tokens == 0
    assert not other._hidden_params.get("cache_hit") and text_of(other).endswith(OTHER)
    info = cache_info(again)
    assert info is not None and info.tier is Tier.EXACT


def test_sync_responses_and_a_streamed_replay(cache, upstream):
    first = litellm.responses(**ask(upstream))
    again = litellm.responses(**ask(upstream))
    assert again._hidden_params["cache_hit"] and text_of(again) == text_of(first)
    events = list(litellm.responses(**ask(upstream), stream=True))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert text_of(events[-1].response) == text_of(first)
    assert events[-1].response.usage.semcache == SERVED
    assert upstream.responses_calls == 1


def test_a_streamed_answer_is_stored_and_served_to_a_plain_call(cache, upstream):
    async def go() -> tuple[list[Any], Any]:
        stream = await litellm.aresponses(**ask(upstream), stream=True)
        events = [event async for event in stream]
        await stored(cache, 1)
        return events, await litellm.aresponses(**ask(upstream))

    events, again = asyncio.run(go())
    assert again._hidden_params["cache_hit"] and upstream.responses_calls == 1
    assert text_of(again) == text_of(events[-1].response)


@pytest.mark.parametrize(
    "changed",
    [{"instructions": "Answer in French."}, {"tools": [TOOL]}, {"max_output_tokens": 32}],
)
def test_a_changed_responses_key_field_misses(cache, upstream, changed):
    _, other = asyncio.run(responses(cache, ask(upstream), ask(upstream, **changed)))
    assert not other._hidden_params.get("cache_hit") and upstream.responses_calls == 2


def test_responses_tenants_never_share(cache, upstream):
    a, b, a_again = asyncio.run(
        responses(
            cache,
            ask(upstream, metadata={"tenant": "a"}),
            ask(upstream, metadata={"tenant": "b"}),
            ask(upstream, metadata={"tenant": "a"}),
        )
    )
    assert not a._hidden_params.get("cache_hit") and not b._hidden_params.get("cache_hit")
    assert a_again._hidden_params["cache_hit"]
    assert upstream.responses_calls == 2


@pytest.mark.parametrize("state", [{"previous_response_id": "resp_client"}, {"store": True}])
def test_a_stateful_request_is_never_served_nor_stored(cache, upstream, state):
    async def go() -> list[Any]:
        plain = await litellm.aresponses(**ask(upstream))  # stored: a stateful call skips it
        await stored(cache, 1)
        out = [await litellm.aresponses(**ask(upstream, **state)) for _ in range(2)]
        await litellm.aresponses(**ask(upstream, OTHER))  # stored after the stateful ones
        await stored(cache, 2)
        return [plain, *out]

    _, *stateful = asyncio.run(go())
    cache.flush()  # every write handed over has landed
    assert upstream.responses_calls == 4
    for response in stateful:
        assert not response._hidden_params.get("cache_hit")
        info = cache_info(response)
        assert info is not None and info.tier is Tier.BYPASS
        assert info.miss_reason is MissReason.STATEFUL
    assert cache.stats().stored == 2  # the two plain questions only
    assert upstream.requests[1].get(next(iter(state))) == next(iter(state.values()))


def test_a_body_the_adapter_refuses_goes_to_the_provider_uncached(cache, upstream):
    reference = [{"type": "item_reference", "id": "msg_1"}, {"role": "user", "content": QUESTION}]
    first = litellm.responses(**ask(upstream, input=reference))
    again = litellm.responses(**ask(upstream, input=reference))
    assert not again._hidden_params.get("cache_hit") and text_of(first) == text_of(again)
    assert upstream.responses_calls == 2 and cache.stats().stored == 0


def test_a_bad_control_is_refused_by_name_before_any_call(cache, upstream):
    with pytest.raises(InvalidRequest, match=r"cache\.bogus"):
        litellm.responses(**ask(upstream), cache={"bogus": 1})
    assert upstream.responses_calls == 0


def test_cache_responses_and_the_slot_share_one_entry(cache, upstream):
    direct = cache.responses(**ask(upstream))
    (through_slot,) = asyncio.run(responses(cache, ask(upstream)))
    assert through_slot._hidden_params["cache_hit"]
    assert text_of(through_slot) == direct["output"][0]["content"][0]["text"]
    (slot_first,) = asyncio.run(responses(cache, ask(upstream, OTHER)))
    replay = cache.responses(**ask(upstream, OTHER))
    assert replay.cache_info.tier is Tier.EXACT
    assert replay["output"][0]["content"][0]["text"] == text_of(slot_first)
    assert upstream.chat_calls == 1 and upstream.responses_calls == 1


# -- Messages ----------------------------------------------------------------------------------
def test_messages_repeat_is_served_and_another_question_is_not(cache, claude):
    first, again, other = asyncio.run(
        messages(cache, ask_claude(claude), ask_claude(claude), ask_claude(claude, OTHER))
    )
    assert claude.messages_calls == 2
    assert again["type"] == "message" and again["content"] == first["content"]
    assert again["usage"]["semcache"] == SERVED and "semcache" not in first["usage"]
    assert "semcache" not in other["usage"] and other["content"][0]["text"].endswith(OTHER)


@pytest.mark.parametrize(
    "changed",
    [{"system": "Answer in French."}, {"tools": [ANTHROPIC_TOOL]}, {"max_tokens": 32}],
)
def test_a_changed_messages_key_field_misses(cache, claude, changed):
    _, other = asyncio.run(messages(cache, ask_claude(claude), ask_claude(claude, **changed)))
    assert "semcache" not in other["usage"] and claude.messages_calls == 2


def test_messages_tenants_never_share(cache, claude):
    a, b, a_again = asyncio.run(
        messages(
            cache,
            ask_claude(claude, metadata={"tenant": "a"}),
            ask_claude(claude, metadata={"tenant": "b"}),
            ask_claude(claude, metadata={"tenant": "a"}),
        )
    )
    assert "semcache" not in a["usage"] and "semcache" not in b["usage"]
    assert a_again["usage"]["semcache"] == SERVED
    assert claude.messages_calls == 2


def test_cache_messages_and_the_slot_share_one_entry(cache, claude):
    direct = cache.messages(**ask_claude(claude))
    (through_slot,) = asyncio.run(messages(cache, ask_claude(claude)))
    assert through_slot["usage"]["semcache"] == SERVED
    assert through_slot["content"] == direct["content"]
    (slot_first,) = asyncio.run(messages(cache, ask_claude(claude, OTHER)))
    replay = cache.messages(**ask_claude(claude, OTHER))
    assert replay.cache_info.tier is Tier.EXACT and replay["content"] == slot_first["content"]
    assert claude.messages_calls == 2


def test_a_streamed_messages_call_is_left_to_litellm():
    """LiteLLM streams Messages, live or replayed from its cache, only with its proxy extra
    installed; the slot neither serves nor stores those streams (see the module docstring)."""
    kwargs = {"model": "anthropic/claude-3-5-haiku-latest", "max_tokens": 8}
    kwargs["messages"] = [{"role": "user", "content": QUESTION}]
    assert read_call(MESSAGES, kwargs) is not None
    assert read_call(MESSAGES, {**kwargs, "stream": True}) is None
    assert read_call(RESPONSES, {"model": "m", "input": QUESTION, "stream": True}) is not None


def test_the_slot_takes_every_protocol_call_type(cache):
    assert set(PROTOCOL_CALL_TYPES) <= set(litellm.cache.supported_call_types)


def test_an_unknown_protocol_is_refused_by_name(cache):
    with pytest.raises(InvalidRequest) as raised:
        cache.lookup(protocol="realtime", model="m", messages=[{"role": "user", "content": "x"}])
    assert raised.value.field == "protocol"


def test_feedback_withdraws_a_served_responses_answer(cache, upstream):
    _, again = asyncio.run(responses(cache, ask(upstream), ask(upstream)))
    assert again._hidden_params["cache_hit"]
    assert litellm.cache.feedback(again, correct=False).withdrawn
    (fresh,) = asyncio.run(responses(cache, ask(upstream)))
    assert not fresh._hidden_params.get("cache_hit") and upstream.responses_calls == 2
