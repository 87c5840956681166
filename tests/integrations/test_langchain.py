"""``set_llm_cache(LangChainCache(...))``, through LangChain's public API and fake models."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core")

from langchain_core.globals import set_llm_cache
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from semcache import CacheSettings, SemanticCache
from semcache.integrations.langchain import LangChainCache, chat_messages
from semcache.stats import Tier
from semcache.testing import FakeEmbedder, InMemoryStore

Q = "What is the capital of France?"
PARA = "what is the capital of france"


@pytest.fixture
def cache():
    settings = CacheSettings(semantic={"threshold": 0.9})
    with SemanticCache(settings, embedder=FakeEmbedder(), store=InMemoryStore()) as cache:
        yield cache


@pytest.fixture
def lc_cache(cache):
    adapter = LangChainCache(cache)
    set_llm_cache(adapter)
    yield adapter
    set_llm_cache(None)


def test_llm_repeat_and_paraphrase_are_served(lc_cache, cache):
    llm = FakeListLLM(responses=["Paris", "second call", "third call"])
    assert llm.invoke(Q) == "Paris"
    assert llm.invoke(Q) == "Paris"
    cache.flush()
    assert llm.invoke(PARA) == "Paris"
    tiers = cache.stats().tiers
    assert tiers[Tier.EXACT] == 1 and tiers[Tier.SEMANTIC] == 1


def test_chat_model_repeat_and_paraphrase_are_served(lc_cache, cache):
    chat = FakeListChatModel(responses=["Paris", "second call", "third call"])
    assert chat.invoke(Q).content == "Paris"
    assert chat.invoke(Q).content == "Paris"
    cache.flush()
    assert chat.invoke(PARA).content == "Paris"


def test_the_guard_applies(lc_cache, cache):
    llm = FakeListLLM(responses=["Yes", "No"])
    llm.invoke("Can I return an item 14 days after delivery?")
    cache.flush()
    assert llm.invoke("Can I return an item 40 days after delivery?") == "No"


def test_another_model_configuration_never_shares(lc_cache):
    FakeListLLM(responses=["Paris"]).invoke(Q)
    assert FakeListLLM(responses=["Lyon"]).invoke(Q) == "Lyon"


def test_async_models(lc_cache):
    chat = FakeListChatModel(responses=["A1", "A2"])

    async def go():
        return [(await chat.ainvoke("async question")).content for _ in range(2)]

    assert asyncio.run(go()) == ["A1", "A1"]


def test_tenants_never_share(cache):
    llm = FakeListLLM(responses=["for a", "for b"])
    try:
        set_llm_cache(LangChainCache(cache, tenant="a"))
        llm.invoke(Q)
        set_llm_cache(LangChainCache(cache, tenant="b"))
        assert llm.invoke(Q) == "for b"
    finally:
        set_llm_cache(None)


def test_clear_removes_only_its_partition(cache):
    mine, other = LangChainCache(cache, tenant="a"), LangChainCache(cache, tenant="b")
    llm_a = FakeListLLM(responses=["A", "A fresh"])
    llm_b = FakeListLLM(responses=["B", "B fresh"])
    try:
        set_llm_cache(mine)
        llm_a.invoke(Q)
        set_llm_cache(other)
        llm_b.invoke(Q)
        cache.flush()
        mine.clear()
        assert llm_b.invoke(Q) == "B"
        set_llm_cache(mine)
        assert llm_a.invoke(Q) == "A fresh"
    finally:
        set_llm_cache(None)


def test_chat_prompts_revive_as_messages_and_text_prompts_do_not():
    from langchain_core.load import dumps
    from langchain_core.messages import HumanMessage, SystemMessage

    prompt = dumps([SystemMessage("Be terse."), HumanMessage(Q)])
    assert chat_messages(prompt) == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": Q},
    ]
    assert chat_messages(Q) is None
    assert chat_messages("[not json") is None
