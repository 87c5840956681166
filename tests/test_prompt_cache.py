"""Provider prompt caching on misses, in the library: which upstream requests carry an
Anthropic breakpoint or an OpenAI ``prompt_cache_key``, and how the provider's reported
cached tokens are counted (apart from the cache's own hits), against the loopback fakes."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.core.prompt_cache import BREAKPOINT, PromptCacheMarks, partition_key
from semcache.testing import FakeAnthropicServer, FakeOpenAIServer, count_tokens

#: One document of about 2,000 tokens (the fakes count words), then many questions about it.
DOC = " ".join(
    f"Clause {i}: the tenant keeps the premises in good repair and pays the rent monthly."
    for i in range(134)
)
QUESTIONS = [f"What does clause {i} of the lease say about repairs?" for i in range(20)]
CLAUDE = "anthropic/claude-3-5-haiku-latest"
GPT = "openai/gpt-4o-mini"


def test_the_document_is_about_two_thousand_tokens() -> None:
    assert 1_900 <= count_tokens(DOC) <= 2_100


# -- the marker alone ------------------------------------------------------------------------
def _mark(marks: PromptCacheMarks, messages: list[Any], tenant: str = "a", **params: Any) -> Any:
    return marks.mark(
        {"model": CLAUDE, "messages": messages, **params},
        tenant=tenant,
        namespace="default",
        model=CLAUDE,
    )


def _system_doc(question: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": DOC}, {"role": "user", "content": question}]


def _doc_turn(question: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": DOC},
        {"role": "assistant", "content": "I have read the lease."},
        {"role": "user", "content": question},
    ]


def _doc_blocks(question: str) -> list[dict[str, Any]]:
    blocks = [{"type": "text", "text": DOC}, {"type": "text", "text": question}]
    return [{"role": "user", "content": blocks}]


@pytest.mark.parametrize(
    ("shape", "where"),
    [
        (_system_doc, (0, 0)),  # a string content becomes one marked text block
        (_doc_turn, (0, 0)),  # the document in an earlier message
        (_doc_blocks, (0, 0)),  # document and question as blocks of one user message
    ],
)
def test_the_breakpoint_goes_at_the_end_of_the_shared_prefix(shape: Any, where: Any) -> None:
    marks = PromptCacheMarks()
    assert _mark(marks, shape(QUESTIONS[0])) is None  # nothing shared yet: no write premium
    asked = shape(QUESTIONS[1])
    before = copy.deepcopy(asked)
    marked = _mark(marks, asked)
    assert asked == before  # the caller's messages are never changed
    message, block = where
    content = marked["messages"][message]["content"]
    assert content[block] == {"type": "text", "text": DOC, "cache_control": BREAKPOINT}
    marked_blocks = [
        b
        for m in marked["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if "cache_control" in b
    ]
    assert len(marked_blocks) == 1  # one breakpoint, the question stays unmarked


def test_a_document_and_question_in_one_string_share_no_block() -> None:
    marks = PromptCacheMarks()
    for question in QUESTIONS[:3]:
        assert _mark(marks, [{"role": "user", "content": f"{DOC}\n\n{question}"}]) is None


def test_a_short_prefix_is_not_marked() -> None:
    marks = PromptCacheMarks(min_tokens=4096)  # the document is about 2,700 estimated tokens
    for question in QUESTIONS[:3]:
        assert _mark(marks, _system_doc(question)) is None


def test_a_prefix_older_than_the_window_is_not_marked() -> None:
    now = [0.0]
    marks = PromptCacheMarks(window_s=300.0, clock=lambda: now[0])
    assert _mark(marks, _system_doc(QUESTIONS[0])) is None
    now[0] = 301.0
    assert _mark(marks, _system_doc(QUESTIONS[1])) is None
    now[0] = 302.0  # the last request refreshed it
    assert _mark(marks, _system_doc(QUESTIONS[2])) is not None


def test_a_request_with_its_own_marks_or_key_is_left_alone() -> None:
    marks = PromptCacheMarks()
    _mark(marks, _system_doc(QUESTIONS[0]))
    own = [{"type": "text", "text": DOC, "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    assert _mark(marks, [{"role": "system", "content": own}, *_system_doc("q")[1:]]) is None
    tool = {"type": "function", "function": {"name": "f"}, "cache_control": BREAKPOINT}
    assert _mark(marks, _system_doc(QUESTIONS[1]), tools=[tool]) is None
    keyed = {"model": GPT, "messages": _system_doc("q"), "prompt_cache_key": "mine"}
    assert marks.mark(keyed, tenant="a", namespace="default", model=GPT) is None


def test_the_partition_rule_and_the_key_per_partition() -> None:
    marks = PromptCacheMarks()
    assert _mark(marks, _system_doc(QUESTIONS[0]), tenant="tenant-a") is None
    # tenant B's first request with the same document is not marked by tenant A's
    assert _mark(marks, _system_doc(QUESTIONS[1]), tenant="tenant-b") is None
    assert _mark(marks, _system_doc(QUESTIONS[2]), tenant="tenant-b") is not None
    keys = {partition_key(t, "default", GPT) for t in ("tenant-a", "tenant-b")}
    assert len(keys) == 2 and not any("tenant" in k for k in keys)
    assert partition_key("tenant-a", "default", GPT) != partition_key("tenant-a", "other", GPT)
    asked = {"model": GPT, "messages": _system_doc("q")}
    for tenant in ("tenant-a", "tenant-b"):
        marked = marks.mark(asked, tenant=tenant, namespace="default", model=GPT)
        assert marked["prompt_cache_key"] == partition_key(tenant, "default", GPT)
    short = {"model": GPT, "messages": [{"role": "user", "content": "hi"}]}
    assert marks.mark(short, tenant="a", namespace="default", model=GPT) is None


def test_other_providers_are_sent_as_they_are() -> None:
    marks = PromptCacheMarks()
    for _ in range(2):
        asked = {"model": "mistral/mistral-large", "messages": _system_doc("q")}
        assert marks.mark(asked, tenant="a", namespace="n", model="mistral/mistral-large") is None


def test_the_memory_is_bounded() -> None:
    marks = PromptCacheMarks(max_prefixes=2)
    _mark(marks, _system_doc(QUESTIONS[0]))  # remembers 2 prefixes: document, document+q0
    _mark(marks, [{"role": "system", "content": DOC + " other"}, {"role": "user", "content": "q"}])
    assert _mark(marks, _system_doc(QUESTIONS[1])) is None  # evicted


# -- through the library, against the fakes --------------------------------------------------
@pytest.fixture
def claude() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


def _cache(**settings: Any) -> SemanticCache:
    return SemanticCache(CacheSettings(store={"backend": "none"}, **settings))


def _ask_messages(cache: SemanticCache, claude: FakeAnthropicServer, question: str, **kw: Any):
    return cache.messages(
        model=CLAUDE,
        api_base=claude.api_base,
        api_key="k",
        max_tokens=64,
        system=[{"type": "text", "text": "You answer questions about the lease below."}],
        messages=_doc_blocks(question),
        **kw,
    )


def _breakpoints(body: dict[str, Any]) -> list[str]:
    """The texts of the blocks of an upstream Anthropic request that carry a breakpoint."""
    blocks = list(body.get("system") or [])
    for message in body["messages"]:
        content = message["content"]
        blocks += content if isinstance(content, list) else []
    return [b.get("text", "") for b in blocks if b.get("cache_control")]


def test_messages_twenty_questions_after_one_document(claude: FakeAnthropicServer) -> None:
    with _cache() as cache:
        replies = [_ask_messages(cache, claude, q) for q in QUESTIONS]
        assert claude.messages_calls == 20
        assert _breakpoints(claude.requests[0]) == []  # nothing shared yet
        for body in claude.requests[1:]:
            assert _breakpoints(body) == [DOC]  # the end of the shared prefix
        infos = [r.cache_info for r in replies]
        assert [i.tier for i in infos] == ["miss"] * 20
        cached = [i.provider_cached_tokens for i in infos]
        # the second request writes the prefix, the 18 after it read it
        assert cached[:2] == [0, 0] and all(c == cached[2] > 1_900 for c in cached[2:])
        assert [r["usage"].get("cache_read_input_tokens", 0) for r in replies] == cached
        assert all(i.provider_cached_usd >= 0.0 and i.saved_cost_usd == 0.0 for i in infos)
        stats = cache.stats()
        assert stats.provider_cached_tokens == sum(cached)
        assert stats.saved_tokens == 0  # counted apart from the cache's own savings
        # the key is the caller's request: a repeat is an exact hit with the stored answer
        again = _ask_messages(cache, claude, QUESTIONS[5])
        assert again.cache_info.tier == "exact" and claude.messages_calls == 20
        assert again["content"] == replies[5]["content"]
        assert again.cache_info.provider_cached_tokens == 0
        assert not again["usage"].get("cache_read_input_tokens")  # a replay claims none
        assert cache.stats().provider_cached_tokens == sum(cached)


def test_chat_and_responses_carry_one_key_per_partition(upstream: FakeOpenAIServer) -> None:
    ask = {"model": GPT, "api_base": upstream.api_base, "api_key": "k"}
    with _cache() as cache:
        chat = [
            cache.completion(
                messages=[{"role": "system", "content": DOC}, {"role": "user", "content": q}],
                **ask,
            )
            for q in QUESTIONS
        ]
        key = partition_key("default", "default", GPT)
        assert [b.get("prompt_cache_key") for b in upstream.requests] == [key] * 20
        cached = [cache_info(r).provider_cached_tokens for r in chat]
        assert cached[0] == 0 and all(c > 1_900 for c in cached[1:])
        assert cached == [r.usage.prompt_tokens_details.cached_tokens for r in chat]
        assert cache_info(chat[1]).provider_cached_usd == pytest.approx(
            cached[1] * (0.15e-6 - 0.075e-6)  # gpt-4o-mini: input less cached-input price
        )
        # Responses: the same partition, its own keys; a caller's key is sent as given
        n = len(upstream.requests)  # (no reset: the fake keeps its prompt cache)
        first = cache.responses(instructions=DOC, input=QUESTIONS[0], **ask)
        own = cache.responses(instructions=DOC, input=QUESTIONS[1], prompt_cache_key="mine", **ask)
        assert [b.get("prompt_cache_key") for b in upstream.requests[n:]] == [key, "mine"]
        assert first.cache_info.provider_cached_tokens > 1_900  # the chat calls' prefix
        assert first["usage"]["input_tokens_details"]["cached_tokens"] > 1_900
        assert own.cache_info.provider_cached_tokens == 0  # another key: another cache
        other = cache.responses(instructions=DOC, input=QUESTIONS[2], tenant="b", **ask)
        assert upstream.requests[-1]["prompt_cache_key"] == partition_key("b", "default", GPT)
        assert other.cache_info.provider_cached_tokens == 0
        replay = cache.responses(instructions=DOC, input=QUESTIONS[0], **ask)
        assert replay.cache_info.tier == "exact" and replay["output"] == first["output"]
        assert replay["usage"]["input_tokens_details"]["cached_tokens"] == 0
        assert cache.stats().provider_cached_tokens == sum(cached) + (
            first.cache_info.provider_cached_tokens
        )


def test_a_streamed_miss_reports_its_cached_tokens_at_the_end(
    claude: FakeAnthropicServer,
) -> None:
    with _cache() as cache:
        for question in QUESTIONS[:2]:
            _ask_messages(cache, claude, question)
        stream = _ask_messages(cache, claude, QUESTIONS[2], stream=True)
        events = list(stream)
        read = events[-2]["usage"]["cache_read_input_tokens"]
        assert read > 1_900 and _breakpoints(claude.requests[-1]) == [DOC]
        assert stream.cache_info.tier == "miss"
        assert stream.cache_info.provider_cached_tokens == read
        assert cache.stats().provider_cached_tokens == read


def test_tenant_a_prefix_never_marks_tenant_b(claude: FakeAnthropicServer) -> None:
    with _cache() as cache:
        _ask_messages(cache, claude, QUESTIONS[0], tenant="a")
        _ask_messages(cache, claude, QUESTIONS[1], tenant="b")
        _ask_messages(cache, claude, QUESTIONS[2], tenant="b")
        assert [_breakpoints(b) for b in claude.requests] == [[], [], [DOC]]


def test_the_setting_off_sends_requests_as_asked(
    claude: FakeAnthropicServer, upstream: FakeOpenAIServer
) -> None:
    with _cache(prompt_cache={"enabled": False}) as cache:
        for question in QUESTIONS[:3]:
            _ask_messages(cache, claude, question)
            cache.completion(
                model=GPT,
                api_base=upstream.api_base,
                api_key="k",
                messages=_system_doc(question),
            )
        assert all(_breakpoints(b) == [] for b in claude.requests)
        assert all("prompt_cache_key" not in b for b in upstream.requests)
        assert cache.stats().provider_cached_tokens == 0
        # the caller's own marks still go upstream, and what they saved is still counted
        own = [{"type": "text", "text": DOC, "cache_control": BREAKPOINT}]
        for question in QUESTIONS[3:5]:
            reply = cache.messages(
                model=CLAUDE,
                api_base=claude.api_base,
                api_key="k",
                max_tokens=64,
                system=own,
                messages=[{"role": "user", "content": question}],
            )
        assert reply.cache_info.provider_cached_tokens > 1_900
        assert cache.stats().provider_cached_tokens == reply.cache_info.provider_cached_tokens


def test_the_setting_reads_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMCACHE_PROMPT_CACHE__ENABLED", "false")
    assert CacheSettings().prompt_cache.enabled is False
