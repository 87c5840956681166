"""The shared exact tier against a real redis-server: hits across replicas, TTL, partitions,
purges that win, and fail-open when Redis is gone."""

from __future__ import annotations

import asyncio
import time

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.config.settings import StoreSettings
from semcache.replicas.settings import RedisSettings
from semcache.testing import FakeUpstream


def settings(redis_url: str, **redis: object) -> CacheSettings:
    return CacheSettings(
        store=StoreSettings(backend="none"), redis=RedisSettings(url=redis_url, **redis)
    )


def req(content: str = "What is the capital of France?", **extra: object) -> dict:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}], **extra}


@pytest.fixture
def replicas(redis_url):
    """Factory: ``replicas(n, upstream, **redis_settings)`` -> n caches on one Redis."""
    made: list[SemanticCache] = []

    def make(n: int, upstream: FakeUpstream, **redis: object) -> list[SemanticCache]:
        caches = [SemanticCache(settings(redis_url, **redis), upstream=upstream) for _ in range(n)]
        made.extend(caches)
        return caches

    yield make
    for cache in made:
        cache.close()


def text(response) -> str:
    return response.choices[0].message.content


def test_an_answer_made_on_one_replica_is_an_exact_hit_on_another(replicas):
    upstream = FakeUpstream()
    a, b = replicas(2, upstream)
    first = a.completion(**req())
    second = b.completion(**req())
    assert upstream.call_count == 1
    assert text(first) == text(second)
    assert cache_info(first).tier == "miss" and cache_info(second).tier == "exact"
    assert cache_info(second).saved_tokens > 0
    assert b.stats().counts.get("redis_stored", 0) == 0 and a.stats().counts["redis_stored"] == 1


def test_entries_use_redis_native_ttl(replicas, raw):
    upstream = FakeUpstream()
    a, b = replicas(2, upstream)
    a.completion(**req(cache={"ttl": 0.3}))
    [key] = raw.keys("semcache:e:*")
    assert 0 < raw.pttl(key) <= 300
    a.completion(**req("no ttl given"))  # the default TTL (7 days)
    ttls = sorted(raw.pttl(k) for k in raw.keys("semcache:e:*"))
    assert ttls[-1] > 6 * 24 * 3600 * 1000
    asyncio.run(asyncio.sleep(0.4))
    assert raw.exists(key) == 0
    b.completion(**req(cache={"ttl": 0.3}))
    assert upstream.call_count == 3  # expired in Redis: b had to ask again


def test_tenants_and_namespaces_never_share(replicas):
    upstream = FakeUpstream()
    a, b = replicas(2, upstream)
    a.completion(**req(tenant="t1"))
    for kwargs in ({"tenant": "t2"}, {"tenant": "t1", "cache": {"namespace": "other"}}, {}):
        assert cache_info(b.completion(**req(**kwargs))).tier == "miss"
    assert cache_info(b.completion(**req(tenant="t1"))).tier == "exact"
    assert upstream.call_count == 4


@pytest.mark.parametrize(
    ("purge", "gone"),
    [
        ({"tenant": "t1"}, {"t1/ns1/gpt-4o-mini", "t1/ns2/gpt-4o"}),
        ({"namespace": "ns1"}, {"t1/ns1/gpt-4o-mini", "t2/ns1/gpt-4o-mini"}),
        ({"model": "gpt-4o"}, {"t1/ns2/gpt-4o"}),
        ({"tenant": "t1", "namespace": "ns1"}, {"t1/ns1/gpt-4o-mini"}),
        ({}, {"t1/ns1/gpt-4o-mini", "t1/ns2/gpt-4o", "t2/ns1/gpt-4o-mini"}),
    ],
)
def test_purge_withdraws_exactly_the_covered_entries_on_every_replica(replicas, raw, purge, gone):
    upstream = FakeUpstream()
    a, b = replicas(2, upstream)
    cells = [("t1", "ns1", "gpt-4o-mini"), ("t1", "ns2", "gpt-4o"), ("t2", "ns1", "gpt-4o-mini")]

    def ask(cache, tenant, ns, model):
        return cache.completion(**req(model=model, tenant=tenant, cache={"namespace": ns}))

    for cell in cells:
        ask(a, *cell)
        assert cache_info(ask(b, *cell)).tier == "exact"  # now in b's memory too
    assert a.purge(**purge) == len(gone)
    assert len(raw.keys("semcache:e:*")) == len(cells) - len(gone)
    calls = upstream.call_count
    for cache in (b, a):  # b heard of the purge before it returned: its memory copy is gone
        for cell in cells:
            tier = cache_info(ask(cache, *cell)).tier
            expected = "miss" if "/".join(cell) in gone and cache is b else "exact"
            assert tier == expected, (cache is a, cell, tier)
    assert upstream.call_count == calls + len(gone)


def test_a_purge_wins_over_a_write_that_began_before_it(replicas, raw):
    upstream = FakeUpstream(delay_s=0.3)
    a, b = replicas(2, upstream)

    async def race():
        call = asyncio.ensure_future(a.acompletion(**req(tenant="t1")))
        await asyncio.sleep(0.1)  # a's upstream call is running
        await b.apurge(tenant="t1")
        return await call

    answer = asyncio.run(race())
    assert cache_info(answer).tier == "miss"  # the caller is answered ...
    assert raw.keys("semcache:e:*") == []  # ... but the answer was not stored in Redis
    assert a.stats().counts["redis_fenced_writes"] == 1
    assert cache_info(b.completion(**req(tenant="t1"))).tier == "miss"


def test_redis_down_degrades_to_misses_and_is_counted(redis_url):
    upstream = FakeUpstream()
    cache = SemanticCache(settings("redis://127.0.0.1:1/0", timeout_s=0.2), upstream=upstream)
    try:
        assert (
            text(cache.completion(**req()))
            == "[gpt-4o-mini] answer to: What is the capital of France?"
        )
        started = time.monotonic()
        assert cache_info(cache.completion(**req())).tier == "exact"  # memory still works
        another = cache_info(cache.completion(**req("another")))
        assert another.tier == "miss" and another.miss_reason == "failed"  # said on the response
        assert time.monotonic() - started < 1.5  # no per-request wait for a dead Redis
        errors = cache.stats().errors
        assert errors.get("redis_get", 0) + errors.get("redis_claim", 0) >= 1
    finally:
        cache.close()


def test_a_model_snapshot_change_seen_on_one_replica_withdraws_answers_everywhere(replicas):
    upstream = FakeUpstream(model="gpt-4o-mini-2024-07-18", system_fingerprint="fp_old")
    a, b = replicas(2, upstream)
    assert cache_info(a.completion(**req("one"))).tier == "miss"
    assert cache_info(b.completion(**req("one"))).tier == "exact"  # now in b's memory too
    upstream.system_fingerprint = "fp_new"
    assert cache_info(b.completion(**req("two"))).tier == "miss"  # Redis sees the change
    assert b.stats().counts["redis_model_changes"] == 1
    (c,) = replicas(1, upstream)  # a fresh replica: nothing in memory, Redis says stale
    assert cache_info(c.completion(**req("one"))).tier == "miss"
    deadline = time.monotonic() + 2
    while cache_info(a.completion(**req("two"))).tier != "exact":  # a heard of the change
        assert time.monotonic() < deadline
    assert cache_info(a.completion(**req("one"))).tier == "exact"  # c's fresh answer


def test_a_purge_by_model_through_the_cli_reaches_redis(redis_url, raw, monkeypatch, capsys):
    from semcache.cli import main

    upstream = FakeUpstream()
    cache = SemanticCache(settings(redis_url), upstream=upstream)
    try:
        cache.completion(**req(model="gpt-4o-mini"))
        cache.completion(**req(model="gpt-4o"))
    finally:
        cache.close()
    monkeypatch.setenv("SEMCACHE_REDIS__URL", redis_url)
    monkeypatch.setenv("SEMCACHE_STORE__BACKEND", "none")
    assert main(["purge", "--model", "gpt-4o-mini"]) == 0
    assert "purged 1" in capsys.readouterr().out
    assert len(raw.keys("semcache:e:*")) == 1


def test_password_auth(tmp_path):
    from semcache.testing import RedisServer

    upstream = FakeUpstream()
    with RedisServer(password="s3cret-pw") as server:
        url = f"redis://127.0.0.1:{server.port}/0"
        wrong = SemanticCache(settings(url, password="nope", timeout_s=0.5), upstream=upstream)
        right = SemanticCache(settings(url, password="s3cret-pw"), upstream=upstream)
        try:
            wrong.completion(**req())  # refused by Redis: a counted miss, never an error
            assert wrong.stats().errors.get("redis_get", 0) >= 1
            right.completion(**req())
            assert right.stats().counts["redis_stored"] == 1
        finally:
            wrong.close()
            right.close()


def test_wrong_feedback_on_one_replica_withdraws_the_answer_on_every_replica(replicas):
    """A "wrong" verdict ends the Redis copy and every replica's in-process copy: without
    it, the replica that made the answer (or any other, from Redis) would serve it again."""
    upstream = FakeUpstream()
    a, b, c = replicas(3, upstream)
    a.completion(**req())  # a holds the answer in memory and Redis
    a.completion(**req("Who wrote Hamlet?"))  # same partition: must survive the withdrawal
    served = b.completion(**req())
    assert cache_info(served).tier == "exact"  # from Redis; b holds a copy in memory now
    assert b.feedback(served, correct=False).withdrawn
    assert cache_info(a.completion(**req())).tier == "miss"  # a's own copy went too
    assert cache_info(a.completion(**req("Who wrote Hamlet?"))).tier == "exact"
    assert upstream.call_count == 3
    # a's fresh answer is the one now shared; the withdrawn one is nowhere
    assert cache_info(c.completion(**req())).tier == "exact"
    assert upstream.call_count == 3
