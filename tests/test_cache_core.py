"""The request path through the real LiteLLM HTTP client against a local upstream.

These tests use the memory tier only (store backend "none"), so they are fast; the semantic
tier and the stores have their own tests.
"""

from __future__ import annotations

import asyncio
import threading
import time

import litellm
import pytest

from semcache import CacheControl, CacheSettings, InvalidRequest, SemanticCache, cache_info
from semcache.config.settings import CoalesceSettings, StoreSettings
from semcache.runtime.loop import shared_loop

API_KEY = "sk-test-very-secret-key-123"


class FakeClock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def cache(clock):
    c = SemanticCache(CacheSettings(store=StoreSettings(backend="none")), clock=clock)
    yield c
    c.close()


@pytest.fixture
def req(upstream):
    def make(content="What is the capital of France?", **extra):
        return {
            "model": "openai/gpt-4o-mini",
            "api_base": upstream.api_base,
            "api_key": API_KEY,
            "messages": [{"role": "user", "content": content}],
            **extra,
        }

    return make


def text(response) -> str:
    return response.choices[0].message.content


def test_miss_then_exact_hit(cache, upstream, req):
    first = cache.completion(**req())
    second = cache.completion(**req())
    assert text(first) == text(second) == "[gpt-4o-mini] answer to: What is the capital of France?"
    assert upstream.chat_calls == 1
    assert cache_info(first).tier == "miss" and cache_info(second).tier == "exact"
    assert second._hidden_params["cache_hit"] is True and first._hidden_params["cache_hit"] is False
    assert cache_info(second).saved_cost_usd > 0 and cache_info(second).saved_tokens > 0
    assert first is not second  # every caller gets its own object


async def test_hundred_concurrent_acompletions_make_one_upstream_call(cache, upstream, req):
    upstream.delay_s = 0.2
    results = await asyncio.gather(*(cache.acompletion(**req()) for _ in range(100)))
    assert upstream.chat_calls == 1
    assert {text(r) for r in results} == {"[gpt-4o-mini] answer to: What is the capital of France?"}
    tiers = [cache_info(r).tier for r in results]
    assert tiers.count("miss") == 1 and tiers.count("coalesced") == 99
    assert len({id(r) for r in results}) == 100


def test_sixteen_threads_make_one_upstream_call(cache, upstream, req):
    upstream.delay_s = 0.2
    results, barrier = [], threading.Barrier(16)

    def worker():
        barrier.wait()
        results.append(cache.completion(**req()))

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert upstream.chat_calls == 1
    assert len({text(r) for r in results}) == 1 and len(results) == 16


async def test_follower_joining_a_stream_midway_gets_every_chunk_in_order(cache, upstream, req):
    upstream.chunks, upstream.chunk_delay_s = 8, 0.05
    leader = await cache.acompletion(**req(stream=True))
    leader_chunks = [await leader.__anext__() for _ in range(3)]
    follower = await cache.acompletion(**req(stream=True))
    follower_chunks = [c async for c in follower]
    leader_chunks += [c async for c in leader]
    assert upstream.chat_calls == 1
    assert cache_info(follower).tier == "coalesced" and cache_info(leader).tier == "miss"

    def joined(chunks):
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)

    expected = "[gpt-4o-mini] answer to: What is the capital of France?"
    assert joined(leader_chunks) == joined(follower_chunks) == expected
    # and the answer was stored complete: a later caller hits it
    assert text(await cache.acompletion(**req())) == expected
    assert upstream.chat_calls == 1


async def test_non_streaming_follower_of_streaming_leader_gets_the_assembled_answer(
    cache, upstream, req
):
    upstream.chunks, upstream.chunk_delay_s = 6, 0.03
    leader = await cache.acompletion(**req(stream=True))
    first = await leader.__anext__()
    follower = asyncio.ensure_future(cache.acompletion(**req()))
    rest = [c async for c in leader]
    response = await follower
    assert upstream.chat_calls == 1
    assert cache_info(response).tier == "coalesced"
    assert text(response) == "".join(
        c.choices[0].delta.content or "" for c in [first, *rest] if c.choices
    )


def test_streaming_caller_that_hits_gets_a_stream(cache, upstream, req):
    cache.completion(**req())
    stream = cache.completion(**req(stream=True))
    chunks = list(stream)
    assert stream.cache_info.tier == "exact"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == text(
        cache.completion(**req())
    )
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert upstream.chat_calls == 1
    assert all(cache_info(c).tier == "exact" for c in chunks)


async def test_a_streamed_memory_hit_never_waits_on_semcaches_loop(cache, upstream, req):
    """A memory hit, streamed or not, is answered on the caller's side: a busy loop (a long
    lookup, a stalled callback) cannot hold it, and its chunks do not cross threads."""
    cache.completion(**req())
    before = cache.stats().tiers.get("exact", 0)
    release = threading.Event()
    shared_loop().loop.call_soon_threadsafe(release.wait, 30)  # the loop is stuck
    started = time.monotonic()
    try:
        streamed = cache.completion(**req(stream=True))
        assert streamed.cache_info.tier == "exact"  # known before the first chunk
        chunks = list(streamed)
        batch = [c async for c in await cache.acompletion(**req(stream=True))]
        plain = cache.completion(**req())
        assert time.monotonic() - started < 10  # all of it while the loop was still stuck
    finally:
        release.set()
    content = ["".join(c.choices[0].delta.content or "" for c in cs) for cs in (chunks, batch)]
    assert content == [text(plain)] * 2
    assert cache.stats().tiers.get("exact", 0) == before + 3  # each recorded once, a hit
    assert upstream.chat_calls == 1


async def test_leader_error_reaches_every_follower_and_nothing_is_stored(cache, upstream, req):
    upstream.delay_s = 0.1
    upstream.fail_next = [500]
    results = await asyncio.gather(
        *(cache.acompletion(**req(max_retries=0)) for _ in range(10)), return_exceptions=True
    )
    assert upstream.chat_calls == 1
    assert all(isinstance(r, litellm.InternalServerError) for r in results)
    upstream.delay_s = 0.0
    ok = await cache.acompletion(**req())
    assert cache_info(ok).tier == "miss" and upstream.chat_calls == 2


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (429, litellm.RateLimitError),
        (401, litellm.AuthenticationError),
        (400, litellm.BadRequestError),
    ],
)
def test_upstream_errors_reach_the_caller_unchanged(cache, upstream, req, status, error):
    upstream.fail_next = [status]
    with pytest.raises(error):
        cache.completion(**req(max_retries=0))


async def test_cancelling_the_leader_leaves_followers_served(cache, upstream, req):
    upstream.delay_s = 0.3
    leader = asyncio.ensure_future(cache.acompletion(**req()))
    await asyncio.sleep(0.05)
    followers = [asyncio.ensure_future(cache.acompletion(**req())) for _ in range(5)]
    await asyncio.sleep(0.05)
    leader.cancel()
    results = await asyncio.gather(*followers)
    assert leader.cancelled()
    assert upstream.chat_calls == 1
    assert all(text(r).endswith("France?") for r in results)


async def test_aborted_stream_is_not_stored(cache, upstream, req):
    upstream.chunks, upstream.abort_stream_after = 6, 2
    stream = await cache.acompletion(**req(stream=True))
    with pytest.raises(Exception):  # noqa: B017 - LiteLLM's error type for a cut connection varies
        async for _ in stream:
            pass
    upstream.abort_stream_after = None
    stream = await cache.acompletion(**req(stream=True))
    chunks = [c async for c in stream]
    assert cache_info(stream).tier == "miss" and upstream.chat_calls == 2
    assert chunks


def test_sampling_requests_bypass_unless_opted_in(cache, upstream, req):
    cache.completion(**req(temperature=1.2))
    second = cache.completion(**req(temperature=1.2))
    assert upstream.chat_calls == 2 and cache_info(second).tier == "bypass"
    cache.completion(**req(n=2))
    cache.completion(**req(n=2))
    assert upstream.chat_calls == 4
    cache.completion(**req(temperature=1.2, cache={"share-sampled": True}))
    hit = cache.completion(**req(temperature=1.2, cache={"share-sampled": True}))
    assert cache_info(hit).tier == "exact" and upstream.chat_calls == 5
    cache.completion(**req(temperature=0.8))
    assert cache_info(cache.completion(**req(temperature=0.8))).tier == "exact"


def test_max_shared_temperature_setting_is_honoured(upstream, req):
    settings = CacheSettings(
        store=StoreSettings(backend="none"), policy={"max_shared_temperature": 0.3}
    )
    with SemanticCache(settings) as cache:
        cache.completion(**req(temperature=0.5))
        assert cache_info(cache.completion(**req(temperature=0.5))).tier == "bypass"


def test_controls_no_cache_no_store_ttl_namespace_tenant(cache, upstream, req, clock):
    cache.completion(**req())
    assert cache_info(cache.completion(**req(cache={"no-cache": True}))).tier == "miss"
    assert upstream.chat_calls == 2
    cache.completion(**req("other", cache=CacheControl(no_store=True)))
    assert cache_info(cache.completion(**req("other"))).tier == "miss"
    # tenants and namespaces partition the exact tier
    assert cache_info(cache.completion(**req(tenant="b"))).tier == "miss"
    assert cache_info(cache.completion(**req(cache={"namespace": "n2"}))).tier == "miss"
    assert cache_info(cache.completion(**req(tenant="b"))).tier == "exact"
    # ttl: served before expiry, not after
    cache.completion(**req("short", cache={"ttl": 10}))
    clock.now += 9
    assert cache_info(cache.completion(**req("short"))).tier == "exact"
    clock.now += 2
    assert cache_info(cache.completion(**req("short"))).tier == "miss"
    # ttl=0 never stores
    cache.completion(**req("zero", cache={"ttl": 0}))
    assert cache_info(cache.completion(**req("zero"))).tier == "miss"


def test_default_ttl_from_settings(upstream, req, clock):
    settings = CacheSettings(store=StoreSettings(backend="none"), policy={"default_ttl_s": 5})
    with SemanticCache(settings, clock=clock) as cache:
        cache.completion(**req())
        clock.now += 6
        assert cache_info(cache.completion(**req())).tier == "miss"


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"model": None}, "model"),
        ({"messages": "hello"}, "messages"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
        ({"cache": {"ttl": -1}}, "cache.ttl"),
        ({"cache": {"no-cach": True}}, "cache.no-cach"),
        ({"cache": "yes"}, "cache"),
        ({"tenant": 5}, "tenant"),
        ({"temperature": "hot"}, "temperature"),
        ({"n": 0}, "n"),
        ({"seed": object()}, "seed"),
    ],
)
def test_bad_input_is_a_clear_error_and_calls_nothing(cache, upstream, req, bad, field):
    request = {**req(), **bad}
    if request["model"] is None:
        del request["model"]
    with pytest.raises(InvalidRequest) as info:
        cache.completion(**request)
    assert info.value.field == field
    assert upstream.chat_calls == 0 and cache.stats().memory_entries == 0


def test_caller_kwargs_are_not_mutated(cache, req):
    request = req(tenant="a", cache={"ttl": 30})
    snapshot = {k: v for k, v in request.items()}
    cache.completion(**request)
    assert request == snapshot and "tenant" in request


def test_batch_completion_identical_requests_cost_one_call(cache, upstream, req):
    upstream.delay_s = 0.05
    batch = [req(), req(), req("Another question"), req(), req("Another question")]
    results = cache.batch_completion(batch, max_concurrency=8)
    assert upstream.chat_calls == 2
    assert [text(r).split(": ", 1)[1] for r in results] == [
        "What is the capital of France?",
        "What is the capital of France?",
        "Another question",
        "What is the capital of France?",
        "Another question",
    ]


def test_batch_completion_validates_everything_first(cache, upstream, req):
    with pytest.raises(InvalidRequest) as info:
        cache.batch_completion([req(), {**req(), "messages": []}])
    assert info.value.field == "requests[1].messages"
    assert upstream.chat_calls == 0


def test_api_key_never_kept(cache, upstream, req):
    cache.completion(**req())
    cache.completion(**req(stream=True, messages=[{"role": "user", "content": "s"}]))
    hit = cache.completion(**req())  # rebuilt from what the cache kept
    assert cache_info(hit).tier == "exact"
    assert API_KEY not in hit.model_dump_json() and API_KEY not in repr(hit._hidden_params)
    assert API_KEY not in repr(cache.stats())
    assert upstream.headers[0]["authorization"] == f"Bearer {API_KEY}"  # it did reach upstream


def test_coalescing_can_be_switched_off(upstream, req):
    settings = CacheSettings(
        store=StoreSettings(backend="none"), coalesce=CoalesceSettings(enabled=False)
    )
    upstream.delay_s = 0.1
    with SemanticCache(settings) as cache:

        async def run():
            return await asyncio.gather(*(cache.acompletion(**req()) for _ in range(3)))

        asyncio.run(run())
    assert upstream.chat_calls == 3


def test_purge_by_tenant(cache, upstream, req):
    cache.completion(**req(tenant="a"))
    cache.completion(**req(tenant="b"))
    assert cache.purge(tenant="a") == 1
    assert cache_info(cache.completion(**req(tenant="a"))).tier == "miss"
    assert cache_info(cache.completion(**req(tenant="b"))).tier == "exact"
    assert cache.purge(model="gpt-4o-mini") == 2


def test_stats_count_tiers(cache, upstream, req):
    cache.completion(**req())
    cache.completion(**req())
    cache.completion(**req(temperature=1.5))
    stats = cache.stats()
    assert stats.tiers["miss"] == 1 and stats.tiers["exact"] == 1
    assert stats.tiers["bypass"] == 1 and stats.upstream_calls == 2
    assert stats.hit_rate == pytest.approx(1 / 3)


def test_sync_and_async_apis_have_the_same_operations():
    import inspect

    pairs = [
        ("completion", "acompletion"),
        ("close", "aclose"),
        ("purge", "apurge"),
        ("recent_entries", "arecent_entries"),
        ("ready", "aready"),
        ("flush", "aflush"),
        ("health", "ahealth"),
        ("__enter__", "__aenter__"),
        ("__exit__", "__aexit__"),
    ]
    for sync_name, async_name in pairs:
        sync, asynchronous = getattr(SemanticCache, sync_name), getattr(SemanticCache, async_name)
        assert not inspect.iscoroutinefunction(sync)
        assert inspect.iscoroutinefunction(asynchronous)
        assert list(inspect.signature(sync).parameters) == list(
            inspect.signature(asynchronous).parameters
        )
    public = {n for n in vars(SemanticCache) if not n.startswith("_")}
    assert public == {
        "completion",
        "acompletion",
        "batch_completion",
        "stats",
        "lookups",
        "purge",
        "apurge",
        "recent_entries",
        "arecent_entries",
        "ready",
        "aready",
        "flush",
        "aflush",
        "close",
        "aclose",
        "closed",
        "health",
        "ahealth",
    }


async def test_async_admin_twins(cache, upstream, req):
    await cache.acompletion(**req(tenant="a"))
    assert await cache.apurge(tenant="a") == 1
    assert await cache.aready() is True
    assert await cache.arecent_entries() == []


async def test_consumer_leaving_mid_read_can_close_the_stream(cache, upstream, req):
    upstream.chunks, upstream.chunk_delay_s = 6, 0.1
    stream = await cache.acompletion(**req(stream=True))
    await stream.__anext__()
    reader = asyncio.ensure_future(stream.__anext__())
    await asyncio.sleep(0.01)
    reader.cancel()  # a client disconnecting while the next chunk is awaited
    await stream.aclose()
    # the flight was abandoned by its only subscriber; a new caller is served normally
    upstream.chunk_delay_s = 0.0
    response = await cache.acompletion(**req())
    assert response.choices[0].message.content.endswith("France?")


def test_no_mixin_of_the_facade_shadows_anothers_attribute():
    """``SemanticCache`` is assembled from mixins; a name two of them define (a private
    helper included) silently replaces one of them for every caller."""
    owners: dict[str, list[str]] = {}
    for base in SemanticCache.__mro__[1:]:
        if base is object:
            continue
        for name in vars(base):
            if not (name.startswith("__") and name.endswith("__")):
                owners.setdefault(name, []).append(base.__name__)
    shared = {name: found for name, found in owners.items() if len(found) > 1}
    assert shared == {}, shared
