"""``CachedLLM``: LlamaIndex's LLM interface answered from semcache, with a fake model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.llms import (
    ChatMessage,
    CompletionResponse,
    CustomLLM,
    LLMMetadata,
)
from pydantic import PrivateAttr

from semcache import CacheSettings, SemanticCache
from semcache.integrations.llamaindex import CachedLLM, llm_identity
from semcache.stats import Tier
from semcache.testing import FakeEmbedder, InMemoryStore

Q = "What is the capital of France?"
PARA = "what is the capital of france"


class CountingLLM(CustomLLM):
    """A fake model: answer n to the n-th call (chat goes through complete in CustomLLM)."""

    model: str = "fake-llm"
    api_key: str = "secret-that-must-not-be-keyed"
    _calls: int = PrivateAttr(default=0)

    @property
    def calls(self) -> int:
        return self._calls

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=self.model)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self._calls += 1
        return CompletionResponse(text=f"answer {self._calls}")

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        yield self.complete(prompt, formatted)


@pytest.fixture
def cache():
    settings = CacheSettings(semantic={"threshold": 0.9})
    with SemanticCache(settings, embedder=FakeEmbedder(), store=InMemoryStore()) as cache:
        yield cache


def test_complete_repeat_and_paraphrase(cache):
    inner = CountingLLM()
    llm = CachedLLM(llm=inner, cache=cache)
    assert llm.complete(Q).text == "answer 1"
    assert llm.complete(Q).text == "answer 1"
    cache.flush()
    assert llm.complete(PARA).text == "answer 1"
    assert inner.calls == 1
    assert cache.stats().tiers[Tier.SEMANTIC] == 1


def test_chat_is_cached_apart_from_complete(cache):
    inner = CountingLLM()
    llm = CachedLLM(llm=inner, cache=cache)
    messages = [ChatMessage(role="user", content=Q)]
    llm.complete(Q)
    first = llm.chat(messages).message.content
    assert llm.chat(messages).message.content == first
    assert inner.calls == 2


def test_async_calls(cache):
    inner = CountingLLM()
    llm = CachedLLM(llm=inner, cache=cache)

    async def go():
        return [(await llm.acomplete("async q")).text for _ in range(2)]

    assert asyncio.run(go()) == ["answer 1", "answer 1"]
    assert inner.calls == 1


def test_another_model_or_tenant_never_shares(cache):
    CachedLLM(llm=CountingLLM(), cache=cache).complete(Q)
    other_model = CountingLLM(model="other-llm")
    CachedLLM(llm=other_model, cache=cache).complete(Q)
    other_tenant = CountingLLM()
    CachedLLM(llm=other_tenant, cache=cache, tenant="b").complete(Q)
    assert other_model.calls == 1 and other_tenant.calls == 1


def test_streaming_passes_through(cache):
    inner = CountingLLM()
    llm = CachedLLM(llm=inner, cache=cache)
    assert [r.text for r in llm.stream_complete(Q)] == ["answer 1"]
    assert [r.text for r in llm.stream_complete(Q)] == ["answer 2"]


def test_identity_leaves_secrets_out():
    identity = llm_identity(CountingLLM())
    assert "api_key" not in identity["settings"]
    assert identity["settings"]["model"] == "fake-llm"
