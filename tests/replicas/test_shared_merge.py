"""The paraphrase merge across replicas, against a real Redis 8: a paraphrase of a question in
flight on another replica waits for that call, by the same hit rule as a semantic hit, and
never across tenants, partitions, a purge, a failed or unstorable answer, or private text.

Replicas are separate caches in one process (own memory, store, coalescer and Redis
connections), each with its own store, so only Redis joins them; the table embedder gives
each question a chosen vector (LEADER and PARAPHRASE at cosine 0.96).
"""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.core.fingerprint import request_keys
from semcache.replicas.inflight import SharedQuestions
from semcache.replicas.keys import KeySpace
from semcache.stats import Tier
from semcache.testing import FakeUpstream, InMemoryStore

LEADER = "How do I reset my password?"
PARAPHRASE = "I forgot my password, how do I change it?"
PRIVATE = "I forgot my password, card 4111 1111 1111 1111, how do I change it?"
DETAIL = "How do I reset my password on Android?"  # the guard below vetoes it
DELAY_S = 0.5
STAGGER_S = 0.15


class TableEmbedder:
    name = "table-4"
    dim = 4

    def embed(self, texts):
        near = [0.96, (1 - 0.96**2) ** 0.5, 0.0, 0.0]
        table = {LEADER: [1.0, 0.0, 0.0, 0.0], PARAPHRASE: near, PRIVATE: near}
        table[DETAIL] = [0.99, 0.0, (1 - 0.99**2) ** 0.5, 0.0]  # nearer to LEADER still
        return np.asarray([table.get(t, [0.0, 0.0, 0.0, 1.0]) for t in texts], np.float32)


class VetoDetail:
    name = "veto-detail"

    def verify(self, query: str, candidate: str) -> bool:
        return DETAIL not in (query, candidate)


class Veto:
    name = "veto"

    def verify(self, query: str, candidate: str) -> bool:
        return False


def ask(content: str, **extra):
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}], **extra}


def text(response) -> str:
    return response.choices[0].message.content


@pytest.fixture
def replicas(redis_url):
    made: list[SemanticCache] = []

    def make(n=2, threshold=0.9, verifier=None, upstream=None, merge=True):
        upstream = upstream or FakeUpstream(delay_s=DELAY_S)
        settings = CacheSettings(
            semantic={"threshold": threshold, "verifier": "none", "max_batch_wait_ms": 0},
            coalesce={"merge": merge},
            admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
            redis={"url": redis_url},
        )
        caches = []
        for _ in range(n):
            cache = SemanticCache(
                settings,
                embedder=TableEmbedder(),
                store=InMemoryStore(),
                verifier=verifier,
                upstream=upstream,
            )
            assert cache.ready()
            caches.append(cache)
        made.extend(caches)
        return caches, upstream

    yield make
    for cache in made:
        cache.close()


async def staggered(first, second, stagger_s=STAGGER_S):
    async def later():
        await asyncio.sleep(stagger_s)
        return await second

    return await asyncio.gather(first, later())


def in_flight_keys(raw) -> list[bytes]:
    return list(raw.scan_iter(match="semcache:q:*"))


async def test_a_paraphrase_on_another_replica_waits_for_the_leaders_call(replicas, raw):
    (a, b), upstream = replicas()
    first, second = await staggered(a.acompletion(**ask(LEADER)), b.acompletion(**ask(PARAPHRASE)))
    assert upstream.call_count == 1
    assert cache_info(first).tier == Tier.MISS
    info = cache_info(second)
    assert info.tier == Tier.MERGED and info.hit
    assert info.similarity == pytest.approx(0.96, abs=1e-4)
    assert text(second) == text(first) == f"[gpt-4o-mini] answer to: {LEADER}"
    assert b.stats().counts["shared_merges"] == 1
    deadline = time.monotonic() + 5  # removed in the background once the call ended
    while [raw.execute_command("VCARD", k) for k in in_flight_keys(raw)] not in ([], [0]):
        assert time.monotonic() < deadline, "the leader's question was never removed"
        await asyncio.sleep(0.05)


async def test_without_redis_merging_the_paraphrase_pays_again(replicas):
    (a, b), upstream = replicas(merge=False)
    await staggered(a.acompletion(**ask(LEADER)), b.acompletion(**ask(PARAPHRASE)))
    assert upstream.call_count == 2


async def test_below_the_threshold_nothing_merges(replicas):
    (a, b), upstream = replicas(threshold=0.97)
    _, second = await staggered(a.acompletion(**ask(LEADER)), b.acompletion(**ask(PARAPHRASE)))
    assert upstream.call_count == 2 and cache_info(second).tier == Tier.MISS
    assert text(second) == f"[gpt-4o-mini] answer to: {PARAPHRASE}"


async def test_the_guard_vetoes_a_merge_across_replicas(replicas):
    (a, b), upstream = replicas(verifier=Veto())
    _, second = await staggered(a.acompletion(**ask(LEADER)), b.acompletion(**ask(PARAPHRASE)))
    assert upstream.call_count == 2 and cache_info(second).tier == Tier.MISS
    assert b.stats().counts["merge_rejections"] == 1


@pytest.mark.parametrize(
    "first, second",
    [
        ({"tenant": "a"}, {"tenant": "b"}),
        ({"cache": {"namespace": "x"}}, {"cache": {"namespace": "y"}}),
        ({"model": "gpt-4o-mini"}, {"model": "gpt-4o"}),
        ({"max_tokens": 10}, {"max_tokens": 11}),
    ],
    ids=["tenant", "namespace", "model", "params"],
)
async def test_never_across_partitions(replicas, first, second):
    (a, b), upstream = replicas()
    x, y = await staggered(
        a.acompletion(**{**ask(LEADER), **first}), b.acompletion(**{**ask(PARAPHRASE), **second})
    )
    assert upstream.call_count == 2
    assert {cache_info(x).tier, cache_info(y).tier} == {Tier.MISS}


async def test_a_failed_leader_sends_the_follower_to_its_own_call(replicas):
    (a, b), upstream = replicas()
    upstream.fail_next = [RuntimeError("provider down")]
    first, second = await asyncio.gather(
        a.acompletion(**ask(LEADER)),
        staggered(asyncio.sleep(0), b.acompletion(**ask(PARAPHRASE))),
        return_exceptions=True,
    )
    assert isinstance(first, RuntimeError)
    follower = second[1]
    assert cache_info(follower).tier == Tier.MISS
    assert text(follower) == f"[gpt-4o-mini] answer to: {PARAPHRASE}"
    assert upstream.call_count == 2 and b.stats().counts["merge_fallbacks"] == 1


async def test_a_no_store_leader_cannot_be_followed(replicas):
    (a, b), upstream = replicas()
    await staggered(
        a.acompletion(**ask(LEADER, cache={"no-store": True})), b.acompletion(**ask(PARAPHRASE))
    )
    assert upstream.call_count == 2


async def test_a_purge_during_the_call_wins_over_the_merge(replicas):
    (a, b, c), upstream = replicas(3)

    async def purge_midway():
        await asyncio.sleep(STAGGER_S * 2)  # both in flight
        await c.apurge(tenant="default")

    _, second, _ = await asyncio.gather(
        a.acompletion(**ask(LEADER)),
        staggered(asyncio.sleep(0), b.acompletion(**ask(PARAPHRASE))),
        purge_midway(),
    )
    follower = second[1]
    assert text(follower) == f"[gpt-4o-mini] answer to: {PARAPHRASE}"
    assert cache_info(follower).tier == Tier.MISS and upstream.call_count == 2


async def test_private_text_never_takes_part(replicas, raw):
    (a, b), upstream = replicas()
    seen: list[list[bytes]] = []

    async def look():
        await asyncio.sleep(STAGGER_S / 2)
        seen.append(
            [m for key in in_flight_keys(raw) for m in raw.execute_command("VRANDMEMBER", key, 10)]
        )

    # a flagged paraphrase does not follow; a flagged leader is not published
    _, second = await staggered(a.acompletion(**ask(LEADER)), b.acompletion(**ask(PRIVATE)))
    assert cache_info(second).tier == Tier.MISS and upstream.call_count == 2
    await asyncio.gather(a.acompletion(**ask(PRIVATE, tenant="t2")), look())
    assert seen == [[]]


async def test_a_streaming_follower_reads_the_other_replicas_stream_live(replicas):
    upstream = FakeUpstream(delay_s=0.2, chunks=6, chunk_delay_s=0.1)
    (a, b), _ = replicas(upstream=upstream)

    async def drain(cache, question, delay):
        await asyncio.sleep(delay)
        stream = await cache.acompletion(**ask(question), stream=True)
        return [chunk async for chunk in stream]

    lead, follow = await asyncio.gather(drain(a, LEADER, 0), drain(b, PARAPHRASE, 0.25))
    assert upstream.call_count == 1
    info = cache_info(follow[0])
    assert info.tier == Tier.MERGED and info.similarity == pytest.approx(0.96, abs=1e-4)
    joined = "".join(c.choices[0].delta.content or "" for c in follow)
    assert joined == "".join(c.choices[0].delta.content or "" for c in lead)
    assert joined == f"[gpt-4o-mini] answer to: {LEADER}"


async def test_a_leader_that_is_gone_is_not_followed_and_is_removed(replicas, redis_url, raw):
    (b,), upstream = replicas(1)
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    questions = SharedQuestions(client, KeySpace("semcache"), lifetime_s=60)
    keys = request_keys(ask(LEADER), tenant="default", namespace="default")
    assert keys.scope is not None
    partition = ("default", "default", keys.scope, "table-4")
    vector = np.asarray([1.0, 0.0, 0.0, 0.0], np.float32)
    # a crashed leader: its question is in the set, its flight is not (no lease, no answer)
    published = await questions.add(
        partition, vector, prompt=LEADER, exact=keys.exact, model="gpt-4o-mini"
    )
    assert raw.execute_command("VCARD", published.key) == 1
    found = await b.acompletion(**ask(PARAPHRASE))
    assert cache_info(found).tier == Tier.MISS and upstream.call_count == 1
    assert raw.exists(published.key) == 0 or raw.execute_command("VCARD", published.key) == 0
    await client.aclose()


async def test_a_vetoed_nearer_question_in_another_replica_does_not_hide_the_next(replicas):
    (a, b), upstream = replicas(verifier=VetoDetail())

    async def run():
        on_a = asyncio.gather(a.acompletion(**ask(PARAPHRASE)), a.acompletion(**ask(DETAIL)))
        return await staggered(on_a, b.acompletion(**ask(LEADER)))

    _, third = await run()
    info = cache_info(third)
    assert info.tier == Tier.MERGED and info.similarity == pytest.approx(0.96, abs=1e-4)
    assert text(third) == f"[gpt-4o-mini] answer to: {PARAPHRASE}"
    assert b.stats().counts["merge_rejections"] == 1 and upstream.call_count == 2


async def test_a_replicas_own_nearer_question_does_not_hide_another_replicas(redis_url):
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    mine = SharedQuestions(client, KeySpace("semcache"), lifetime_s=60)
    theirs = SharedQuestions(client, KeySpace("semcache"), lifetime_s=60)
    partition = ("t-own", "default", "scope", "table-4")
    query = np.asarray([1.0, 0.0, 0.0, 0.0], np.float32)
    own = np.asarray([0.99, (1 - 0.99**2) ** 0.5, 0.0, 0.0], np.float32)
    other = np.asarray([0.95, 0.0, (1 - 0.95**2) ** 0.5, 0.0], np.float32)
    await mine.add(partition, own, prompt="mine", exact="x1", model="m")
    await theirs.add(partition, other, prompt="theirs", exact="x2", model="m")
    near = await mine.nearest(partition, query)
    assert near is not None and near.prompt == "theirs" and not near.own
    assert near.similarity == pytest.approx(0.95, abs=1e-5)
    assert (await theirs.nearest(partition, query)).prompt == "mine"
    await client.aclose()


async def test_redis_down_costs_the_merge_only_and_backs_off():
    from semcache.testing import RedisServer

    server = RedisServer().start()
    upstream = FakeUpstream(delay_s=0.05)
    settings = CacheSettings(
        semantic={"threshold": 0.9, "verifier": "none", "max_batch_wait_ms": 0},
        admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
        redis={"url": server.url, "timeout_s": 0.5},
    )
    cache = SemanticCache(
        settings, embedder=TableEmbedder(), store=InMemoryStore(), upstream=upstream
    )
    try:
        assert cache.ready()
        server.kill()
        # one tenant each: the table gives these questions one vector
        answers = [await cache.acompletion(**ask(f"q {i}"), tenant=f"t{i}") for i in range(4)]
        assert [text(a) for a in answers] == [f"[gpt-4o-mini] answer to: q {i}" for i in range(4)]
        counts = cache.stats().counts
        errors = cache.stats().errors
        # the first failing merge command starts the back-off; later misses skip the merge
        assert sum(v for k, v in errors.items() if k.startswith("redis_merge_")) == 1
        assert counts["shared_merge_skipped"] >= 3
    finally:
        cache.close()
        server.stop()
