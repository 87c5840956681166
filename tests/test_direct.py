"""``check`` / ``store`` (semcache.direct): the cache's tiers without an LLM call."""

from __future__ import annotations

import asyncio

import pytest

from semcache import CacheSettings, InvalidRequest, SemanticCache
from semcache.stats import Tier
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

Q = "What is the capital of France?"
PARA = "what is the capital of france"


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def upstream():
    return FakeUpstream()


@pytest.fixture
def cache(clock, upstream):
    settings = CacheSettings(semantic={"threshold": 0.9, "verifier": "details"})
    with SemanticCache(
        settings, embedder=FakeEmbedder(), store=InMemoryStore(), upstream=upstream, clock=clock
    ) as cache:
        yield cache


def test_store_then_check_exact_and_semantic(cache):
    assert cache.check(Q, model="gpt-4o-mini") is None
    key = cache.store(Q, "Paris", model="gpt-4o-mini")
    assert key is not None
    cache.flush()
    exact = cache.check(Q, model="gpt-4o-mini")
    assert exact.text == "Paris" and exact.info.tier is Tier.EXACT and exact.info.key == key
    para = cache.check(PARA, model="gpt-4o-mini")
    assert para.text == "Paris" and para.info.tier is Tier.SEMANTIC
    assert para.info.similarity >= 0.9


def test_stored_answers_serve_completion_and_completion_answers_serve_check(cache, upstream):
    cache.store(Q, "Paris", model="gpt-4o-mini")
    messages = [{"role": "user", "content": Q}]
    response = cache.completion(model="gpt-4o-mini", messages=messages)
    assert response.choices[0].message.content == "Paris" and upstream.call_count == 0
    other = [{"role": "user", "content": "Name the largest ocean."}]
    answer = cache.completion(model="gpt-4o-mini", messages=other).choices[0].message.content
    assert cache.check(messages=other, model="gpt-4o-mini").text == answer


@pytest.mark.parametrize(
    "other",
    [
        {"tenant": "b"},
        {"cache": {"namespace": "other"}},
        {"model": "gpt-4o"},
        {"temperature": 0.2},
        {"messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": Q}]},
    ],
)
def test_every_partition_and_key_field_separates(cache, other):
    cache.store(Q, "Paris", model="gpt-4o-mini")
    cache.flush()
    kwargs = {"model": "gpt-4o-mini", **other}
    if "messages" not in kwargs:
        kwargs["prompt"] = Q
    assert cache.check(**kwargs) is None


def test_ttl_expiry_and_s_maxage(cache, clock):
    cache.store(Q, "Paris", model="m", cache={"ttl": 10})
    cache.flush()
    clock.now += 5
    assert cache.check(Q, model="m") is not None
    assert cache.check(Q, model="m", cache={"s-maxage": 4}) is None
    assert cache.check(PARA, model="m", cache={"s-maxage": 4}) is None
    assert cache.check(Q, model="m", cache={"s-maxage": 6}) is not None
    clock.now += 6
    assert cache.check(Q, model="m") is None


@pytest.mark.parametrize("control", [{"no-store": True}, {"ttl": 0}], ids=["no-store", "ttl-0"])
def test_policy_keeps_answers_out(cache, control):
    assert cache.store(Q, "Paris", model="m", cache=control) is None
    assert cache.check(Q, model="m") is None


def test_sampling_requests_are_neither_stored_nor_looked_up(cache):
    assert cache.store(Q, "Paris", model="m", temperature=1.5) is None
    cache.store(Q, "Paris", model="m", temperature=1.5, cache={"share-sampled": True})
    assert cache.check(Q, model="m", temperature=1.5) is None
    assert cache.check(Q, model="m", temperature=1.5, cache={"share-sampled": True}) is not None


def test_the_guard_applies(cache):
    cache.store("Can I return an item 14 days after delivery?", "Yes", model="m")
    cache.flush()
    assert cache.check("Can I return an item 40 days after delivery?", model="m") is None
    assert cache.stats().verifier_rejections == 1


def test_no_cache_skips_lookup(cache):
    cache.store(Q, "Paris", model="m")
    assert cache.check(Q, model="m", cache={"no-cache": True}) is None


def test_purge_wins(cache):
    cache.store(Q, "Paris", model="m", tenant="a")
    cache.flush()
    assert cache.purge(tenant="a") >= 1
    assert cache.check(Q, model="m", tenant="a") is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({}, "prompt"),
        ({"prompt": Q, "messages": [{"role": "user", "content": Q}]}, "prompt"),
        ({"prompt": 3}, "prompt"),
        ({"prompt": Q, "tenant": ""}, "tenant"),
        ({"prompt": Q, "cache": {"ttl": -1}}, "cache.ttl"),
        ({"prompt": Q, "cache": {"s-maxage": -1}}, "cache.s-maxage"),
    ],
)
def test_bad_input_names_the_field_and_touches_nothing(cache, upstream, kwargs, field):
    with pytest.raises(InvalidRequest) as error:
        cache.check(model="m", **kwargs)
    assert error.value.field == field
    with pytest.raises(InvalidRequest):
        cache.store(response="x", model="m", **kwargs)
    assert cache.stats().requests == 0 and len(cache.recent_entries()) == 0


def test_store_refuses_a_missing_or_odd_response(cache):
    with pytest.raises(InvalidRequest, match="response"):
        cache.store(Q, model="m")
    with pytest.raises(InvalidRequest, match="response"):
        cache.store(Q, 42, model="m")


def test_async_twins_share_the_tiers(cache):
    async def go():
        assert await cache.acheck(Q, model="m") is None
        assert await cache.astore(Q, "Paris", model="m") is not None
        return await cache.acheck(Q, model="m")

    assert asyncio.run(go()).text == "Paris"
    assert cache.check(Q, model="m").text == "Paris"


def test_sync_and_async_expose_the_same_operations():
    for name in ("check", "store", "embedding"):
        assert hasattr(SemanticCache, name) and hasattr(SemanticCache, f"a{name}")


def test_a_check_miss_never_answers_a_concurrent_completion(cache, upstream):
    upstream.delay_s = 0.05
    messages = [{"role": "user", "content": Q}]

    async def go():
        completion = asyncio.create_task(cache.acompletion(model="m", messages=messages))
        await asyncio.sleep(0.01)
        miss = await cache.acheck(Q, model="m")
        return miss, await completion

    miss, response = asyncio.run(go())
    assert response.choices[0].message.content.endswith(Q)
    assert upstream.call_count == 1 and miss is None


class SlowStore(InMemoryStore):
    """Each write takes a while to land, as on a remote store under load."""

    def upsert(self, entries):
        import time

        time.sleep(0.5)
        super().upsert(entries)


@pytest.mark.parametrize(
    "options",
    [{}, {"filters": {"source": "faq"}}, {"num_results": 2}, {"threshold": 0.95}],
    ids=["plain", "filters", "num_results", "threshold"],
)
def test_check_reads_its_own_store_at_once(clock, upstream, options):
    """Read-your-writes: a paraphrase right after ``store()`` finds the answer, although the
    store write is still landing (what docs/direct-api.md's first snippet does)."""
    settings = CacheSettings(semantic={"threshold": 0.9, "verifier": "details"})
    with SemanticCache(
        settings, embedder=FakeEmbedder(), store=SlowStore(), upstream=upstream, clock=clock
    ) as cache:
        assert cache.ready()
        cache.store(Q, "Paris", model="gpt-4o-mini", metadata={"source": "faq"})
        found = cache.check(PARA, model="gpt-4o-mini", **options)
        hit = found[0] if isinstance(found, list) else found
        assert hit is not None and hit.text == "Paris" and hit.info.tier is Tier.SEMANTIC
        other = cache.check(PARA, model="gpt-4o-mini", tenant="someone-else", **options)
        assert not other  # settling waits on this partition's writes; it widens nothing
