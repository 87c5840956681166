"""``SemanticCache.embedding``: exact-tier caching of embedding calls, through LiteLLM."""

from __future__ import annotations

import asyncio

import pytest

from semcache import CacheSettings, InvalidRequest, SemanticCache, cache_info
from semcache.stats import Tier
from semcache.testing import FakeEmbedder, InMemoryStore


class Clock:
    now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def cache(clock):
    store = InMemoryStore()
    with SemanticCache(CacheSettings(), embedder=FakeEmbedder(), store=store, clock=clock) as c:
        yield c


@pytest.fixture
def embed(cache, upstream):
    def embed(text="hello world", **kwargs):
        return cache.embedding(
            model="openai/text-embedding-3-small",
            input=text,
            api_base=upstream.api_base,
            api_key="sk-test",
            **kwargs,
        )

    return embed


def vectors(response):
    return [item["embedding"] for item in response.data]


def test_an_exact_repeat_is_served_without_a_call(embed, upstream):
    first = embed()
    second = embed()
    assert upstream.calls["embeddings"] == 1
    assert vectors(second) == vectors(first)
    assert cache_info(first).tier is Tier.MISS and cache_info(second).tier is Tier.EXACT


def test_different_input_model_params_or_partition_miss(embed, upstream):
    embed()
    embed("hello there")
    embed(["hello world"])
    embed(dimensions=32)
    embed(tenant="b")
    embed(cache={"namespace": "n"})
    assert upstream.calls["embeddings"] == 6


def test_served_from_the_store_by_another_cache(upstream, clock):
    store = InMemoryStore()
    kwargs = {"model": "openai/text-embedding-3-small", "input": "hi", "api_key": "sk-test"}
    kwargs["api_base"] = upstream.api_base
    first, second = (
        SemanticCache(CacheSettings(), embedder=FakeEmbedder(), store=store, clock=clock)
        for _ in range(2)
    )
    with first, second:  # the second has an empty memory tier: the store answers
        first.embedding(**kwargs)
        first.flush()
        response = second.embedding(**kwargs)
    assert cache_info(response).tier is Tier.EXACT
    assert upstream.calls["embeddings"] == 1


def test_controls_ttl_and_s_maxage(embed, upstream, clock):
    embed(cache={"no-store": True})
    embed(cache={"ttl": 10})
    clock.now += 5
    assert cache_info(embed(cache={"s-maxage": 1})).tier is Tier.MISS
    assert cache_info(embed(cache={"no-cache": True})).tier is Tier.MISS
    clock.now += 20
    assert upstream.calls["embeddings"] == 4


def test_purge_removes_embeddings(cache, embed, upstream):
    embed()
    cache.flush()
    cache.purge(model="openai/text-embedding-3-small")
    embed()
    assert upstream.calls["embeddings"] == 2


def test_async_twin(cache, upstream):
    async def go():
        kwargs = {"model": "openai/text-embedding-3-small", "input": "x y", "api_key": "k"}
        kwargs["api_base"] = upstream.api_base
        await cache.aembedding(**kwargs)
        return await cache.aembedding(**kwargs)

    assert cache_info(asyncio.run(go())).tier is Tier.EXACT
    assert upstream.calls["embeddings"] == 1


@pytest.mark.parametrize(("text", "field"), [("", "input"), (None, "input"), (3, "input")])
def test_bad_input_is_refused_before_any_call(embed, upstream, text, field):
    with pytest.raises(InvalidRequest) as error:
        embed(text)
    assert error.value.field == field and upstream.calls["embeddings"] == 0
