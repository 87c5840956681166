"""OpenAI Responses and Anthropic Messages through the proxy, with the official clients.

Each protocol runs against its own loopback fake provider: Responses on the fake OpenAI
server (LiteLLM's chat call for an ``openai/`` model), Messages on the fake Anthropic server
(LiteLLM's Anthropic Messages call for an ``anthropic/`` model).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from protocol_harness import (
    TENANT_KEYS,
    anthropic_client,
    ask_messages,
    ask_responses,
    openai_client,
    protocol_config,
)
from proxy_harness import ENVIRON, LiveServer, wait_until

from semcache.server.app import create_app
from semcache.testing import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    InMemoryStore,
    echo_messages,
    echo_responder,
)

QUESTION = "What is the capital of France?"
PARAPHRASE = "What's the capital city of France?"
TOOLS_RESPONSES = [
    {
        "type": "function",
        "name": "lookup",
        "description": "Look a fact up.",
        "parameters": {"type": "object", "properties": {"question": {"type": "string"}}},
    }
]
TOOLS_MESSAGES = [
    {
        "name": "lookup",
        "description": "Look a fact up.",
        "input_schema": {"type": "object", "properties": {"question": {"type": "string"}}},
    }
]


class AcceptAll:
    """Verifier that accepts every candidate above the threshold (isolates the proxy)."""

    name = "accept-all"

    def verify(self, query: str, candidate: str) -> bool:
        return True


@pytest.fixture(scope="session")
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def claude(anthropic_server: FakeAnthropicServer) -> Iterator[FakeAnthropicServer]:
    anthropic_server.reset()
    anthropic_server.responder = echo_messages
    anthropic_server.delay_s = 0.0
    yield anthropic_server
    anthropic_server.reset()


class Running:
    def __init__(self, server: LiveServer, cache: Any) -> None:
        self.server, self.cache = server, cache

    @property
    def base_url(self) -> str:
        return self.server.base_url


@pytest.fixture
def serve(
    upstream: FakeOpenAIServer, claude: FakeAnthropicServer
) -> Iterator[Callable[..., Running]]:
    """``serve(semantic=False, **cache_settings)`` → a running proxy on both fakes."""
    from semcache.cache import SemanticCache

    started: list[Running] = []

    def start(*, embedder: Any = None, **settings: Any) -> Running:
        config = protocol_config(upstream.api_base, claude.api_base, **settings)
        if embedder is None:
            cache = SemanticCache(config.cache)
        else:
            cache = SemanticCache(
                config.cache, embedder=embedder, store=InMemoryStore(), verifier=AcceptAll()
            )
        running = Running(LiveServer(create_app(config, cache, environ=ENVIRON)).start(), cache)
        started.append(running)
        return running

    yield start
    for running in started:
        running.server.stop()
        running.cache.close()


def semantic(serve: Callable[..., Running], minilm: Any, **settings: Any) -> Running:
    return serve(embedder=minilm, semantic={"threshold": 0.8}, **settings)


def _written(proxy: Running, count: int) -> None:
    wait_until(lambda: proxy.cache.stats().store_entries == count)


# -- repeat, paraphrase, streamed and not ----------------------------------------------------
@pytest.mark.parametrize("stream", [False, True])
def test_responses_repeat_is_exact_and_paraphrase_semantic(
    serve: Callable[..., Running], upstream: FakeOpenAIServer, minilm: Any, stream: bool
) -> None:
    proxy = semantic(serve, minilm)
    client = openai_client(proxy.base_url)
    tier, text, first = ask_responses(client, QUESTION, stream=stream)
    assert tier == "miss" and text == f"[gpt-4o-mini] answer to: {QUESTION}"
    assert first.status == "completed" and first.output[0].type == "message"
    tier, again, replay = ask_responses(client, QUESTION, stream=stream)
    assert (tier, again) == ("exact", text)
    assert replay.usage.input_tokens_details.cached_tokens == 0
    assert replay.usage.model_extra["semcache"] == {"tier": "exact", "billed": False}
    _written(proxy, 1)
    tier, para, _ = ask_responses(client, PARAPHRASE, stream=stream)
    assert (tier, para) == ("semantic", text)
    assert upstream.chat_calls == 1


@pytest.mark.parametrize("stream", [False, True])
def test_messages_repeat_is_exact_and_paraphrase_semantic(
    serve: Callable[..., Running], claude: FakeAnthropicServer, minilm: Any, stream: bool
) -> None:
    proxy = semantic(serve, minilm)
    client = anthropic_client(proxy.base_url)
    tier, text, _ = ask_messages(client, QUESTION, stream=stream)
    assert tier == "miss" and text == f"[claude-3-5-haiku-latest] answer to: {QUESTION}"
    tier, again, replay = ask_messages(client, QUESTION, stream=stream)
    assert (tier, again) == ("exact", text)
    usage = replay[-2].usage if stream else replay.usage
    assert not usage.cache_read_input_tokens
    assert usage.model_extra["semcache"] == {"tier": "exact", "billed": False}
    _written(proxy, 1)
    assert (ask_messages(client, PARAPHRASE, stream=stream)[:2]) == ("semantic", text)
    assert claude.messages_calls == 1
    assert claude.requests[0]["messages"][-1]["content"][0]["text"] == QUESTION


def test_messages_stream_events_and_usage(
    serve: Callable[..., Running], claude: FakeAnthropicServer
) -> None:
    client = anthropic_client(serve().base_url)
    for expected in ("miss", "exact"):
        with client.messages.stream(
            model="claude", max_tokens=50, messages=[{"role": "user", "content": QUESTION}]
        ) as stream:
            message = stream.get_final_message()
        assert message.stop_reason == "end_turn"
        assert message.content[0].text.endswith(QUESTION)
        assert message.usage.output_tokens > 0
        if expected == "exact":  # the SDK's accumulator keeps Anthropic's own usage fields
            assert not message.usage.cache_read_input_tokens
    assert claude.messages_calls == 1


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/responses", {"model": "fast", "input": QUESTION, "stream": True}),
        (
            "/v1/messages",
            {
                "model": "claude",
                "max_tokens": 50,
                "messages": [{"role": "user", "content": QUESTION}],
                "stream": True,
            },
        ),
    ],
    ids=["responses", "messages"],
)
def test_a_streamed_hit_is_the_same_event_stream_as_its_miss(
    serve: Callable[..., Running], path: str, body: dict[str, Any]
) -> None:
    """A memory hit's events go out as one body: framed as the live stream's are, the same
    events in the same order, ids and text alike."""
    base = serve().base_url
    headers = {"authorization": f"Bearer {TENANT_KEYS['team-a']}", "x-api-key": "unused"}
    streams = [httpx.post(f"{base}{path}", json=body, headers=headers) for _ in range(2)]
    assert [r.headers["x-semcache-tier"] for r in streams] == ["miss", "exact"]
    events = []
    for response in streams:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        frames = response.text.split("\n\n")
        assert frames[-1] == ""
        parsed = []
        for frame in frames[:-1]:
            kind, data = frame.split("\n")
            event = json.loads(data.removeprefix("data: "))
            assert kind == f"event: {event['type']}"
            parsed.append(event)
        events.append(parsed)
    miss, hit = events  # a replay may cut the text into fewer deltas than the provider did
    assert _kinds(hit) == _kinds(miss)
    assert _text(hit) == _text(miss) and _text(hit).endswith(QUESTION)


def _kinds(events: list[dict[str, Any]]) -> list[str]:
    """The event types in order, a run of one type counted once."""
    kinds = [e["type"] for e in events]
    return [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k]


def _text(events: list[dict[str, Any]]) -> str:
    deltas = [e["delta"] for e in events if "delta" in e]
    return "".join(d if isinstance(d, str) else d.get("text", "") for d in deltas)


# -- provider prompt caching: marks out of the key, never claimed on a replay ----------------
def test_messages_cache_control_is_out_of_the_key_and_replays_claim_no_cached_tokens(
    serve: Callable[..., Running], claude: FakeAnthropicServer
) -> None:
    client = anthropic_client(serve().base_url)
    system = "You answer geography questions in one sentence. " * 20
    marked = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    tier, _, first = ask_messages(client, QUESTION, system=marked)
    assert tier == "miss" and first.usage.cache_creation_input_tokens > 0
    # the mark went upstream: the provider caches the prefix
    assert claude.requests[0]["system"][0]["cache_control"] == {"type": "ephemeral"}
    tier, _, hit = ask_messages(client, QUESTION, system=[{"type": "text", "text": system}])
    assert tier == "exact"  # the same request without the mark
    assert not hit.usage.cache_read_input_tokens and not hit.usage.cache_creation_input_tokens
    assert (
        hit.usage.input_tokens == first.usage.input_tokens + first.usage.cache_creation_input_tokens
    )
    assert hit.usage.model_extra["semcache"]["billed"] is False
    assert claude.messages_calls == 1


# -- coalescing ------------------------------------------------------------------------------
@pytest.mark.parametrize("protocol", ["responses", "messages"])
def test_hundred_concurrent_identical_requests_make_one_upstream_call(
    serve: Callable[..., Running],
    upstream: FakeOpenAIServer,
    claude: FakeAnthropicServer,
    protocol: str,
) -> None:
    proxy = serve()
    release = threading.Event()
    upstream.responder = lambda body: release.wait(60) and echo_responder(body)
    claude.responder = lambda body: release.wait(60) and echo_messages(body)
    local = threading.local()

    def ask(stream: bool) -> tuple[str, str]:
        if protocol == "responses":
            if not hasattr(local, "openai"):
                local.openai = openai_client(proxy.base_url)
            return ask_responses(local.openai, QUESTION, stream=stream)[:2]
        if not hasattr(local, "anthropic"):
            local.anthropic = anthropic_client(proxy.base_url)
        return ask_messages(local.anthropic, QUESTION, stream=stream)[:2]

    tiers: list[str] = []
    answers: list[str] = []

    def one(i: int) -> None:
        tier, text = ask(i % 2 == 0)
        tiers.append(tier)
        answers.append(text)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(100)]
    for thread in threads:
        thread.start()
    coalescer = proxy.cache._parts.coalescer
    try:
        wait_until(lambda: coalescer.waiting() == 100, timeout_s=90)
    finally:
        release.set()
    for thread in threads:
        thread.join(timeout=60)
    calls = upstream.chat_calls if protocol == "responses" else claude.messages_calls
    assert calls == 1
    assert Counter(tiers) == {"miss": 1, "coalesced": 99}
    assert len(answers) == 100 and len(set(answers)) == 1


# -- tenants ---------------------------------------------------------------------------------
def test_tenants_never_cross_over_hundreds_of_asks(
    serve: Callable[..., Running],
    upstream: FakeOpenAIServer,
    claude: FakeAnthropicServer,
    minilm: Any,
) -> None:
    """Every upstream answer is unique (a call counter in it); each answer a tenant gets must
    come from a call made for that tenant."""
    proxy = semantic(serve, minilm)
    made: list[str] = []
    lock = threading.Lock()

    def numbered(echo: Callable[[dict], str]) -> Callable[[dict], str]:
        def answer(body: dict) -> str:
            with lock:
                made.append(echo(body))
                return f"#{len(made)} {made[-1]}"

        return answer

    upstream.responder = numbered(echo_responder)
    claude.responder = numbered(echo_messages)
    questions = [f"What is the population of city number {i}?" for i in range(28)]
    asks = 0
    owner: dict[str, str] = {}  # answer -> the tenant whose miss produced it
    for repeat in range(3):
        for tenant in TENANT_KEYS:
            oa, an = openai_client(proxy.base_url, tenant), anthropic_client(proxy.base_url, tenant)
            for i, question in enumerate(questions):
                text = question if repeat != 1 else f"Tell me: {question.lower()}"
                stream = (i + repeat) % 2 == 0
                for tier, answer, _ in (
                    ask_responses(oa, text, stream=stream),
                    ask_messages(an, text, stream=stream),
                ):
                    asks += 1
                    if tier == "miss":
                        assert answer not in owner
                        owner[answer] = tenant
                    assert owner.get(answer) == tenant, (tenant, tier, answer)
    assert asks >= 500
    # each tenant paid for its own answers, in both protocols
    for tenant in TENANT_KEYS:
        mine = [answer for answer, owned in owner.items() if owned == tenant]
        assert any("gpt-4o-mini" in a for a in mine) and any("claude" in a for a in mine)


def test_metadata_user_id_never_decides_the_tenant(
    serve: Callable[..., Running], claude: FakeAnthropicServer
) -> None:
    proxy = serve()
    a, b = anthropic_client(proxy.base_url, "team-a"), anthropic_client(proxy.base_url, "team-b")
    assert ask_messages(a, QUESTION, metadata={"user_id": "u1"})[0] == "miss"
    assert ask_messages(b, QUESTION, metadata={"user_id": "u1"})[0] == "miss"
    assert ask_messages(a, QUESTION, metadata={"user_id": "u2"})[0] == "exact"
    assert claude.messages_calls == 2


# -- protocol is part of the key -------------------------------------------------------------
def test_an_answer_replays_only_in_the_protocol_it_was_asked_in(
    serve: Callable[..., Running], upstream: FakeOpenAIServer
) -> None:
    proxy = serve()
    oa = openai_client(proxy.base_url)
    chat = oa.chat.completions.with_raw_response.create(
        model="fast", messages=[{"role": "user", "content": QUESTION}]
    )
    assert chat.headers["x-semcache-tier"] == "miss"
    assert ask_responses(oa, QUESTION)[0] == "miss"
    messages_on_fast = anthropic_client(proxy.base_url).messages.with_raw_response.create(
        model="fast", max_tokens=100, messages=[{"role": "user", "content": QUESTION}]
    )
    assert messages_on_fast.headers["x-semcache-tier"] == "miss"
    assert upstream.chat_calls == 3


# -- tool calls ------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True])
def test_responses_tool_call_served_to_identical_requests_only(
    serve: Callable[..., Running], upstream: FakeOpenAIServer, minilm: Any, stream: bool
) -> None:
    proxy = semantic(serve, minilm)
    client = openai_client(proxy.base_url)
    upstream.call_tools = True
    tier, _, first = ask_responses(client, QUESTION, tools=TOOLS_RESPONSES, stream=stream)
    assert tier == "miss" and first.output[0].type == "function_call"
    assert first.output[0].name == "lookup"
    tier, _, again = ask_responses(client, QUESTION, tools=TOOLS_RESPONSES, stream=stream)
    assert tier == "exact" and again.output[0].call_id == first.output[0].call_id
    _written(proxy, 1)
    raw = client.responses.with_raw_response.create(
        model="fast", input=PARAPHRASE, tools=TOOLS_RESPONSES
    )
    assert raw.headers["x-semcache-tier"] == "miss"
    assert raw.headers["x-semcache-miss-reason"] == "exact_only"
    tier, _, forbidden = ask_responses(
        client, QUESTION, tools=TOOLS_RESPONSES, tool_choice="none", stream=stream
    )
    assert tier == "miss" and forbidden.output[0].type == "message"
    assert upstream.chat_calls == 3


@pytest.mark.parametrize("stream", [False, True])
def test_messages_tool_call_served_to_identical_requests_only(
    serve: Callable[..., Running], claude: FakeAnthropicServer, minilm: Any, stream: bool
) -> None:
    proxy = semantic(serve, minilm)
    client = anthropic_client(proxy.base_url)
    claude.call_tools = True

    def tool_use(message_or_events: Any) -> Any:
        if stream:
            starts = [e for e in message_or_events if e.type == "content_block_start"]
            return starts[0].content_block
        return message_or_events.content[0]

    tier, _, first = ask_messages(client, QUESTION, tools=TOOLS_MESSAGES, stream=stream)
    assert tier == "miss" and tool_use(first).type == "tool_use"
    tier, _, again = ask_messages(client, QUESTION, tools=TOOLS_MESSAGES, stream=stream)
    assert tier == "exact" and tool_use(again).id == tool_use(first).id
    _written(proxy, 1)
    assert ask_messages(client, PARAPHRASE, tools=TOOLS_MESSAGES)[0] == "miss"
    tier, text, _ = ask_messages(
        client, QUESTION, tools=TOOLS_MESSAGES, tool_choice={"type": "none"}, stream=stream
    )
    assert tier == "miss" and text.endswith(QUESTION)  # a text answer, not the cached tool call
    assert claude.messages_calls == 3


def test_tool_results_in_the_history_are_in_the_scope(
    serve: Callable[..., Running], claude: FakeAnthropicServer, minilm: Any
) -> None:
    proxy = semantic(serve, minilm)
    client = anthropic_client(proxy.base_url)

    def history(result: str, question: str) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": "Look up the answer."},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": result}],
            },
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": question},
        ]

    assert ask_messages(client, history("42", QUESTION))[0] == "miss"
    _written(proxy, 1)
    assert ask_messages(client, history("42", PARAPHRASE))[0] == "semantic"
    assert ask_messages(client, history("43", PARAPHRASE))[0] == "miss"
    assert claude.messages_calls == 2


def test_a_setting_lets_tool_requests_match_paraphrases(
    serve: Callable[..., Running], upstream: FakeOpenAIServer, minilm: Any
) -> None:
    proxy = semantic(serve, minilm, policy={"tool_requests": "semantic"})
    client = openai_client(proxy.base_url)
    upstream.call_tools = True
    assert ask_responses(client, QUESTION, tools=TOOLS_RESPONSES)[0] == "miss"
    _written(proxy, 1)
    assert ask_responses(client, PARAPHRASE, tools=TOOLS_RESPONSES)[0] == "semantic"


# -- bad input -------------------------------------------------------------------------------
RESPONSES_BAD = [
    ({"model": "fast"}, "input"),
    ({"model": "fast", "input": 5}, "input"),
    ({"model": "fast", "input": "hi", "temperature": 3}, "temperature"),
    ({"model": "fast", "input": "hi", "store": "yes"}, "store"),
    ({"model": "fast", "input": "hi", "background": 1}, "background"),
    ({"model": "fast", "input": "hi", "previous_response_id": 7}, "previous_response_id"),
    ({"model": "fast", "input": "hi", "conversation": {"name": "c"}}, "conversation"),
    ({"model": "fast", "input": 5, "previous_response_id": "resp_1"}, "input"),
    ({"model": "claude", "input": "hi", "store": True}, "store"),
    ({"model": "fast", "input": "hi", "tools": [{"type": "function"}]}, "tools[0].name"),
    ({"model": "fast", "input": "hi", "tenant": "team-b"}, "tenant"),
    ({"model": "fast", "input": "hi", "api_base": "http://evil"}, "api_base"),
    ({"model": "fast", "input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
    ({"model": "fast", "input": "hi", "text": {"format": {"type": "yaml"}}}, "text.format.type"),
    # an unhashable value where a name is expected: a 400, not a TypeError (500)
    ({"model": "fast", "input": "hi", "text": {"format": {"type": {}}}}, "text.format.type"),
    ({"model": "fast", "input": [{"role": {}, "content": "x"}]}, "input[0].role"),
    ({"model": "fast", "input": "hi", "previous_response_id": False}, "previous_response_id"),
    ({"model": "fast", "input": "hi", "metadata": {"k": 1}}, "metadata.k"),
    ({"model": "fast", "input": "hi", "include": [1]}, "include"),
    ({"model": "fast", "input": "hi", "top_logprobs": 1.5}, "top_logprobs"),
    ({"model": "fast", "input": "hi", "max_output_tokens": 2**53}, "max_output_tokens"),
    # items the translator would drop in silence are refused by name
    ({"model": "fast", "input": [{"type": "reasoning", "summary": []}]}, "input[0].type"),
    (
        {
            "model": "fast",
            "input": [{"type": "function_call_output", "call_id": "", "output": "x"}],
        },
        "input[0].call_id",
    ),
    ({"model": "fast", "input": [{"type": "function_call", "call_id": "c1"}]}, "input[0].name"),
]
MESSAGES_BAD = [
    ({"model": "claude", "messages": [{"role": "user", "content": "hi"}]}, "max_tokens"),
    ({"model": "claude", "max_tokens": 5}, "messages"),
    ({"model": "claude", "max_tokens": 0, "messages": []}, "max_tokens"),
    (
        {"model": "claude", "max_tokens": 5, "messages": [{"role": "system", "content": "x"}]},
        "messages[0].role",
    ),
    (
        {
            "model": "claude",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "x"}],
            "temperature": 2,
        },
        "temperature",
    ),
    (
        {
            "model": "claude",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "x"}],
            "tool_choice": {"type": "maybe"},
        },
        "tool_choice.type",
    ),
    (
        {
            "model": "claude",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "x"}],
            "metadata": {"user_id": 7},
        },
        "user_id",
    ),
    (
        {"model": "claude", "max_tokens": 2**53, "messages": [{"role": "user", "content": "x"}]},
        "max_tokens",
    ),
    (
        {
            "model": "claude",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "x"}],
            "top_k": -1,
        },
        "top_k",
    ),
    (
        {
            "model": "claude",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "x"}],
            "tool_choice": {"type": {}},
        },
        "tool_choice.type",
    ),
    (
        {"model": "claude", "max_tokens": 5, "messages": [{"role": "user", "content": ""}]},
        "messages[0].content",
    ),
    # blocks the translator would drop in silence are refused by name
    (
        {
            "model": "claude",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": [{"type": "search_result"}]}],
        },
        "messages[0].content[0].type",
    ),
    (
        {
            "model": "claude",
            "max_tokens": 5,
            "messages": [
                {"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f"}]}
            ],
        },
        "messages[0].content[0].type",
    ),
    (
        {
            "model": "claude",
            "max_tokens": 5,
            "messages": [
                {"role": "user", "content": [{"type": "image", "source": {"type": "file"}}]}
            ],
        },
        "messages[0].content[0].source.type",
    ),
    (
        {
            "model": "claude",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": 5, "name": "f"}],
        },
        "tools[0].type",
    ),
]


@pytest.mark.parametrize(("body", "field"), RESPONSES_BAD)
def test_bad_responses_request_is_400_naming_the_field(
    serve: Callable[..., Running],
    upstream: FakeOpenAIServer,
    claude: FakeAnthropicServer,
    body: dict,
    field: str,
) -> None:
    proxy = serve()
    for stream in (False, True):
        response = httpx.post(
            f"{proxy.base_url}/v1/responses",
            json={**body, "stream": stream},
            headers={"authorization": f"Bearer {TENANT_KEYS['team-a']}"},
        )
        assert response.status_code == 400, response.text
        assert response.json()["error"]["param"] == field
    assert upstream.chat_calls == 0 and upstream.responses_calls == 0
    assert claude.messages_calls == 0


@pytest.mark.parametrize(("body", "field"), MESSAGES_BAD)
def test_bad_messages_request_is_400_naming_the_field(
    serve: Callable[..., Running], claude: FakeAnthropicServer, body: dict, field: str
) -> None:
    proxy = serve()
    for stream in (False, True):
        response = httpx.post(
            f"{proxy.base_url}/v1/messages",
            json={**body, "stream": stream},
            headers={"x-api-key": TENANT_KEYS["team-a"]},
        )
        assert response.status_code == 400, response.text
        error = response.json()
        assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
        assert field in error["error"]["message"]
    assert claude.messages_calls == 0


def test_wrong_key_is_401_in_each_protocols_shape(serve: Callable[..., Running]) -> None:
    proxy = serve()
    messages = httpx.post(
        f"{proxy.base_url}/v1/messages",
        json={"model": "claude", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
        headers={"x-api-key": "nope"},
    )
    assert messages.status_code == 401
    assert messages.json()["error"]["type"] == "authentication_error"
    responses = httpx.post(f"{proxy.base_url}/v1/responses", json={"model": "fast", "input": "x"})
    assert responses.status_code == 401 and "error" in responses.json()


def test_null_is_unset_on_both_protocols(
    serve: Callable[..., Running], upstream: FakeOpenAIServer, claude: FakeAnthropicServer
) -> None:
    """What the OpenAPI document says (every optional field may be null): a body with null
    fields is answered, and as the same request without them (one key, one upstream call)."""
    proxy = serve()
    asks = [
        (
            "/v1/responses",
            {"authorization": f"Bearer {TENANT_KEYS['team-a']}"},
            {"model": "fast", "input": QUESTION},
            {"temperature": None, "store": None, "metadata": None, "stream": None, "user": None},
        ),
        (
            "/v1/messages",
            {"x-api-key": TENANT_KEYS["team-a"]},
            {
                "model": "claude",
                "max_tokens": 64,
                "messages": [{"role": "user", "content": QUESTION}],
            },
            {"system": None, "top_k": None, "stop_sequences": None, "metadata": {"user_id": None}},
        ),
    ]
    for path, headers, body, nulls in asks:
        first = httpx.post(f"{proxy.base_url}{path}", json={**body, **nulls}, headers=headers)
        assert first.status_code == 200, first.text
        again = httpx.post(f"{proxy.base_url}{path}", json=body, headers=headers)
        assert (first.headers["x-semcache-tier"], again.headers["x-semcache-tier"]) == (
            "miss",
            "exact",
        )
    assert (upstream.chat_calls, claude.messages_calls) == (1, 1)
