"""LiteLLM's cache slot: responses carry ``cache_info`` and take ``feedback``.

Through ``litellm.completion`` / ``acompletion`` against the loopback fake upstream (its
call count says whether an answer was withdrawn), with identities written by LiteLLM's own
proxy code as in ``test_litellm_identity``; nothing in LiteLLM is patched.
"""

from __future__ import annotations

import asyncio

import litellm
import pytest
from litellm.types.proxy.auth.user_api_key_auth import UserAPIKeyAuth

from semcache import CacheSettings, InvalidRequest, SemanticCache, cache_info
from semcache.errors import UnknownServe
from semcache.integrations.litellm import LiteLLMCache
from semcache.stats import MissReason, Tier
from semcache.testing import InMemoryStore
from tests.integrations.test_litellm_identity import proxied

QUESTION = [{"role": "user", "content": "How do I rotate the API keys of my workspace?"}]
PARAPHRASE = [{"role": "user", "content": "How can I rotate my workspace's API keys?"}]


@pytest.fixture
def slot(minilm):
    settings = CacheSettings(semantic={"threshold": 0.8}, store={"backend": "edge"})
    with SemanticCache(settings, embedder=minilm, store=InMemoryStore()) as cache:
        cache.ready()
        litellm.cache = slot = LiteLLMCache(cache)
        yield slot
        litellm.disable_cache()


@pytest.fixture
def call(upstream):
    def call(messages=QUESTION, **kwargs):
        return litellm.completion(
            model="openai/gpt-4o-mini",
            api_base=upstream.api_base,
            api_key="k",
            messages=messages,
            **kwargs,
        )

    return call


def test_misses_and_hits_carry_cache_info(slot, call):
    first = call()
    info = cache_info(first)
    assert info is not None and info.tier is Tier.MISS
    assert info.miss_reason is MissReason.NO_CANDIDATE
    exact = cache_info(call())
    assert exact is not None and exact.tier is Tier.EXACT and exact.key == info.key
    slot.semcache.flush()
    semantic = cache_info(call(PARAPHRASE))
    assert semantic is not None and semantic.tier is Tier.SEMANTIC
    assert semantic.similarity is not None and semantic.similarity >= 0.8
    assert semantic.serve_id is not None


def test_async_calls_carry_cache_info(slot, upstream):
    kwargs = {"model": "openai/gpt-4o-mini", "api_base": upstream.api_base, "api_key": "k"}

    async def go():
        first = await litellm.acompletion(messages=QUESTION, **kwargs)
        for _ in range(100):  # LiteLLM stores from a background task
            if slot.semcache.recent_entries():
                break
            await asyncio.sleep(0.02)
        return first, await litellm.acompletion(messages=QUESTION, **kwargs)

    first, second = asyncio.run(go())
    assert cache_info(first).tier is Tier.MISS
    assert cache_info(second).tier is Tier.EXACT and upstream.chat_calls == 1


def test_wrong_verdict_on_a_semantic_hit_response_withdraws_it(slot, call, upstream):
    call()
    slot.semcache.flush()
    served = call(PARAPHRASE)
    assert cache_info(served).tier is Tier.SEMANTIC and upstream.chat_calls == 1
    result = slot.feedback(served, correct=False)
    assert result.withdrawn and not result.correct
    assert cache_info(call(PARAPHRASE)).tier is Tier.MISS
    assert upstream.chat_calls == 2


def test_wrong_verdict_by_litellm_cache_key_withdraws_an_exact_hit(slot, call, upstream):
    call()
    again = call()
    key = again._hidden_params["cache_key"]
    assert cache_info(again).tier is Tier.EXACT and isinstance(key, str)
    assert slot.feedback(key, correct=False).withdrawn
    assert cache_info(call()).tier is Tier.MISS and upstream.chat_calls == 2


def test_feedback_on_a_proxied_callers_response_uses_the_identity_tenant(slot, call, upstream):
    meta = proxied(UserAPIKeyAuth(api_key="hash-a", team_id="team-a"))
    call(metadata=meta)
    served = call(metadata=proxied(UserAPIKeyAuth(api_key="hash-a", team_id="team-a")))
    assert cache_info(served).tier is Tier.EXACT
    # SemanticCache.feedback alone looks in the default tenant, where nothing was served.
    with pytest.raises(UnknownServe):
        slot.semcache.feedback(served, correct=False)
    assert slot.feedback(served, correct=False).withdrawn
    again = call(metadata=proxied(UserAPIKeyAuth(api_key="hash-a", team_id="team-a")))
    assert cache_info(again).tier is Tier.MISS and upstream.chat_calls == 2


def test_a_litellm_key_served_to_two_tenants_needs_a_tenant_and_withdraws_only_its(
    slot, call, upstream
):
    for who in ("a", "b"):
        call(metadata={"tenant": who})
    key = call(metadata={"tenant": "a"})._hidden_params["cache_key"]
    assert call(metadata={"tenant": "b"})._hidden_params["cache_key"] == key
    with pytest.raises(InvalidRequest, match="tenant"):
        slot.feedback(key, correct=False)
    with pytest.raises(UnknownServe):
        slot.feedback(key, correct=False, tenant="c")
    assert slot.feedback(key, correct=False, tenant="a").withdrawn
    assert cache_info(call(metadata={"tenant": "b"})).tier is Tier.EXACT
    assert cache_info(call(metadata={"tenant": "a"})).tier is Tier.MISS
    assert upstream.chat_calls == 3


def test_feedback_refuses_an_answer_it_did_not_serve(slot, call):
    fresh = call()
    with pytest.raises(InvalidRequest, match="not served from the cache"):
        slot.feedback(fresh, correct=False)


def test_streamed_calls_carry_cache_info_on_the_stream(slot, call, upstream):
    first = call(stream=True)
    list(first)
    second = call(stream=True)
    list(second)
    assert cache_info(first).tier is Tier.MISS and cache_info(second).tier is Tier.EXACT
    assert upstream.chat_calls == 1
