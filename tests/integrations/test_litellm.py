"""``litellm.cache = LiteLLMCache(...)``: plain LiteLLM calls use semcache's tiers.

Driven only through LiteLLM's public API against the loopback FakeOpenAIServer, which counts
the upstream calls; nothing in LiteLLM is patched.
"""

from __future__ import annotations

import asyncio

import litellm
import pytest

from semcache import CacheSettings, InvalidRequest, SemanticCache
from semcache.integrations.litellm import LiteLLMCache, semcache_call, tenant_of
from semcache.stats import Tier
from semcache.testing import InMemoryStore

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
PARAPHRASE = [{"role": "user", "content": "Tell me the capital city of France."}]


@pytest.fixture
def cache(minilm):
    # The cache's own default guard ("auto"), a real embedder, the in-memory store double.
    settings = CacheSettings(semantic={"threshold": 0.8}, store={"backend": "edge"})
    with SemanticCache(settings, embedder=minilm, store=InMemoryStore()) as cache:
        yield cache


@pytest.fixture
def installed(cache):
    litellm.cache = LiteLLMCache(cache)
    yield cache
    litellm.disable_cache()


@pytest.fixture
def call(upstream):
    def call(messages, **kwargs):
        return litellm.completion(
            model="openai/gpt-4o-mini",
            api_base=upstream.api_base,
            api_key="sk-test",
            messages=messages,
            **kwargs,
        )

    return call


def hit(response) -> bool:
    return bool(response._hidden_params.get("cache_hit"))


def test_identical_calls_make_one_upstream_call_and_paraphrase_hits_semantic(
    installed, call, upstream
):
    first = call(QUESTION)
    second = call(QUESTION)
    assert upstream.chat_calls == 1
    assert not hit(first) and hit(second)
    assert second.choices[0].message.content == first.choices[0].message.content
    installed.flush()
    third = call(PARAPHRASE)
    assert upstream.chat_calls == 1 and hit(third)
    assert third.choices[0].message.content == first.choices[0].message.content
    tiers = installed.stats().tiers
    assert tiers[Tier.EXACT] == 1 and tiers[Tier.SEMANTIC] == 1


def test_the_guard_refuses_a_paraphrase_with_another_detail(installed, call, upstream):
    call([{"role": "user", "content": "Can I return an item 14 days after delivery?"}])
    installed.flush()
    other = call([{"role": "user", "content": "Can I return an item 40 days after delivery?"}])
    assert not hit(other) and upstream.chat_calls == 2


def test_async_completion_uses_the_tiers(installed, upstream):
    async def go():
        kwargs = {"model": "openai/gpt-4o-mini", "api_base": upstream.api_base, "api_key": "k"}
        first = await litellm.acompletion(messages=QUESTION, **kwargs)
        for _ in range(100):  # LiteLLM stores from a background task
            if installed.stats().counts.get("stored") or len(installed.recent_entries()) > 0:
                break
            await asyncio.sleep(0.02)
        second = await litellm.acompletion(messages=QUESTION, **kwargs)
        return first, second

    first, second = asyncio.run(go())
    assert not hit(first) and hit(second) and upstream.chat_calls == 1


def test_streamed_calls_are_stored_and_served(installed, call, upstream):
    chunks = list(call(QUESTION, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    again = list(call(QUESTION, stream=True))
    assert upstream.chat_calls == 1
    assert "".join(c.choices[0].delta.content or "" for c in again) == text


@pytest.mark.parametrize(
    ("control", "served"),
    [({"no-cache": True}, False), ({"s-maxage": 3600}, True), ({"namespace": "other"}, False)],
)
def test_litellm_controls_on_lookup(installed, call, upstream, control, served):
    call(QUESTION)
    response = call(QUESTION, cache=control)
    assert hit(response) is served
    assert upstream.chat_calls == (1 if served else 2)


def test_s_maxage_zero_refuses_any_stored_answer_and_refreshes_it(installed, call, upstream):
    call(QUESTION)
    assert not hit(call(QUESTION, cache={"s-max-age": 0}))  # LiteLLM's other spelling
    assert upstream.chat_calls == 2
    assert hit(call(QUESTION))


@pytest.mark.parametrize("control", [{"no-store": True}, {"ttl": 0}])
def test_litellm_controls_on_store(installed, call, upstream, control):
    call(QUESTION, cache=control)
    assert not hit(call(QUESTION))
    assert upstream.chat_calls == 2


def test_tenants_from_metadata_never_share(installed, call, upstream):
    call(QUESTION, metadata={"tenant": "a"})
    assert not hit(call(QUESTION, metadata={"tenant": "b"}))
    assert hit(call(QUESTION, metadata={"tenant": "a"}))
    assert upstream.chat_calls == 2


def test_default_off_mode_is_opt_in(cache, call, upstream):
    litellm.cache = LiteLLMCache(cache, mode="default_off")
    try:
        call(QUESTION)
        assert not hit(call(QUESTION))
        call(QUESTION, cache={"use-cache": True})
        assert hit(call(QUESTION, cache={"use-cache": True}))
    finally:
        litellm.disable_cache()
    assert upstream.chat_calls == 3


def test_a_bad_control_is_refused_by_name_before_any_call(installed, call, upstream):
    with pytest.raises(InvalidRequest, match=r"cache\.bogus"):
        call(QUESTION, cache={"bogus": 1})
    assert upstream.chat_calls == 0


def test_lookup_and_store_kwargs_give_one_key():
    lookup = {"model": "m", "messages": QUESTION, "cache_key": "abc", "litellm_call_id": "1"}
    store = {"model": "m", "messages": QUESTION, "parent_otel_span": None, "stream": True}
    assert semcache_call(lookup) == {"model": "m", "messages": QUESTION}
    assert semcache_call(store) == {"model": "m", "messages": QUESTION, "stream": True}


def test_proxy_identity_is_the_tenant_when_none_is_given():
    assert tenant_of({"metadata": {"tenant": "t"}}) == "t"
    proxy = {"litellm_params": {"metadata": {"user_api_key": "hk", "user_api_key_team_id": "x"}}}
    assert tenant_of(proxy) == "litellm:user_api_key=hk;user_api_key_team_id=x"
    assert tenant_of({"metadata": {}}) is None


def test_a_no_cache_call_has_cache_info_on_the_sync_path(installed, call, upstream):
    """LiteLLM tests ``no-cache`` itself and never calls the slot's ``get_cache``; the slot
    records the bypass when LiteLLM stores the answer (before returning, on the sync path)."""
    from semcache import cache_info

    call(QUESTION)
    response = call(QUESTION, cache={"no-cache": True})
    info = cache_info(response)
    assert info is not None and info.tier == Tier.BYPASS and info.miss_reason == "bypass"
    assert not hit(response) and upstream.chat_calls == 2
    assert cache_info(call(QUESTION, cache={"no-cache": True, "no-store": True})) is None


def test_an_async_no_cache_call_gets_its_cache_info_once_litellm_stored_it(installed, upstream):
    from semcache import cache_info

    async def go():
        response = await litellm.acompletion(
            model="openai/gpt-4o-mini",
            api_base=upstream.api_base,
            api_key="k",
            messages=QUESTION,
            cache={"no-cache": True},
        )
        for _ in range(100):  # LiteLLM stores from a background task
            if cache_info(response) is not None:
                break
            await asyncio.sleep(0.02)
        return cache_info(response)

    info = asyncio.run(go())
    assert info is not None and info.tier == Tier.BYPASS
