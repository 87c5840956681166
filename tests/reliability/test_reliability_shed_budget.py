"""Shed queues, not hits: the lookup budget follows the upstream latency it
could save, the embedder's queue decides, shedding clears readiness in seconds, and every
miss says why."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.facade.health import Status
from semcache.runtime.admission import Admission, UpstreamLatency
from semcache.stats import MissReason, Tier
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore


class SlowEmbedder(FakeEmbedder):
    delay_s = 0.0

    def __init__(self) -> None:
        super().__init__()
        self.loading = threading.Event()
        self.loading.set()

    @property
    def dim(self) -> int:
        self.loading.wait(10)
        return super().dim

    def embed(self, texts):
        time.sleep(self.delay_s)
        return super().embed(texts)


def gate_over(backlog, latency: UpstreamLatency) -> Admission:
    """A gate with a 20 ms floor and a budget of 10% of the upstream latency."""
    return Admission(backlog=backlog, upstream=latency, wait_budget_s=0.02, wait_fraction=0.1)


def test_the_budget_is_a_fraction_of_the_upstream_p50_with_a_floor():
    latency = UpstreamLatency()
    gate = gate_over(lambda _: None, latency)
    assert gate.budget_s() == 0.02  # nothing observed: the floor
    for seconds in [1.0] * 10 + [30.0] * 3:  # a few very slow calls do not move a median
        latency.observe(seconds)
    assert latency.p50_s == 1.0
    assert gate.budget_s() == pytest.approx(0.1)
    fast = UpstreamLatency()
    fast.observe(0.05)
    assert gate_over(lambda _: None, fast).budget_s() == 0.02  # 5 ms: below the floor


def test_the_gate_weighs_the_embedders_queue_against_the_budget():
    queue = [0, 0.005]  # (texts queued at the embedder, seconds per text)

    def backlog(ahead: int) -> float:
        return max(queue[0], ahead) * queue[1]

    latency = UpstreamLatency()
    gate = gate_over(backlog, latency)
    tickets = [gate.enter() for _ in range(5)]  # 0..4 ahead x 5 ms <= 20 ms
    assert all(t is not None for t in tickets)
    queue[0] = 10  # 50 ms of queue
    assert gate.enter() is None and gate.shed == 1
    for _ in range(20):
        latency.observe(1.0)  # a 1 s upstream: a hit saves a second, 100 ms is worth waiting
    assert gate.budget_s() == pytest.approx(0.1)
    assert gate.enter() is not None
    queue[0] = 30  # 150 ms: too long even for a 1 s call
    assert gate.enter() is None
    for ticket in tickets:
        ticket.leave()
        ticket.leave()  # idempotent
    assert gate.in_flight == 1
    assert gate_over(lambda ahead: None, UpstreamLatency()).enter() is not None  # no batch yet


def test_with_nothing_in_flight_a_lookup_is_admitted_whatever_the_estimate():
    """The estimate is refreshed by the lookups it admits: a gate that refused with nothing
    in flight would never learn that a slow spell ended."""
    gate = gate_over(lambda _: 10.0, UpstreamLatency())  # 10 s of queue, e.g. a swapping model
    first = gate.enter()
    assert first is not None  # nothing in flight: it waits for at most the running batch
    assert gate.enter() is None
    first.leave()
    assert gate.enter() is not None


def test_a_sequential_client_is_never_shed_on_a_busy_host():
    """Defaults: no loop-lag check, so a host busy with other work does not shed lookups."""
    embedder = SlowEmbedder()
    settings = CacheSettings(semantic={"max_batch_wait_ms": 0}, store={"backend": "none"})
    with SemanticCache(
        settings, embedder=embedder, store=InMemoryStore(), upstream=FakeUpstream()
    ) as cache:
        assert cache.ready()
        embedder.delay_s = 0.03  # slower than the 20 ms floor: still nothing is queued
        for i in range(5):
            cache.completion(model="m", messages=[{"role": "user", "content": f"q {i}?"}])
        assert cache.stats().shed == {}


def test_every_miss_says_why():
    embedder = SlowEmbedder()
    settings = CacheSettings(
        semantic={"threshold": 0.9, "verifier": "details", "max_batch_wait_ms": 0},
        store={"backend": "none"},
    )
    clock = [1_700_000_000.0]
    embedder.loading.clear()  # the model is still loading
    cache = SemanticCache(
        settings,
        embedder=embedder,
        store=InMemoryStore(),
        upstream=FakeUpstream(),
        clock=lambda: clock[0],
    )

    def reason(content, **kwargs):
        messages = content if isinstance(content, list) else [{"role": "user", "content": content}]
        info = cache_info(cache.completion(model="m", messages=messages, **kwargs))
        return info.miss_reason if info.tier.used_upstream else info.tier

    with cache:
        assert reason("What is the capital of France?") is MissReason.WARMING
        embedder.loading.set()
        assert cache.ready()
        cache.purge()
        assert reason("How do I reset my password?") is MissReason.NO_CANDIDATE
        assert reason("What is the weather like on Mars today?") is MissReason.BELOW_THRESHOLD
        assert reason("how do i reset my password") is Tier.SEMANTIC
        jacket = "Can I still return the blue jacket I bought at the store {} days ago?"
        assert reason(jacket.format(14)) is MissReason.BELOW_THRESHOLD
        assert reason(jacket.format(40)) is MissReason.REJECTED  # cosine 0.95, the guard's veto
        assert reason("x", cache={"no-cache": True}) is MissReason.BYPASS
        assert reason("y", temperature=1.5) is MissReason.BYPASS
        assert reason("My card is 4111 1111 1111 1111, is it valid?") is MissReason.PRIVATE
        assert (
            reason([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
            is MissReason.EXACT_ONLY
        )
        clock[0] += 120
        stale = reason("HOW DO I RESET MY PASSWORD?", cache={"s-maxage": 60})
        assert stale is MissReason.STALE
        hit = cache.check("how do I reset my password")
        assert hit is None or hit.info.miss_reason is None
        embedder.fail = True
        assert reason("Where is the nearest train station?") is MissReason.FAILED


async def test_a_shed_lookup_says_so_and_readiness_recovers_within_the_shed_window():
    embedder = SlowEmbedder()
    settings = CacheSettings(
        semantic={"verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "none"},
        admission={"wait_ms": 5},
        health={"shed_window_s": 0.5, "window_s": 60},
    )
    cache = SemanticCache(
        settings, embedder=embedder, store=InMemoryStore(), upstream=FakeUpstream()
    )
    try:
        assert await cache.aready()
        embedder.delay_s = 0.3  # measured by the batcher on this first lookup
        await cache.acompletion(model="m", messages=[{"role": "user", "content": "warm"}])
        responses = await asyncio.gather(
            *(
                cache.acompletion(model="m", messages=[{"role": "user", "content": f"q {i}"}])
                for i in range(10)
            )
        )
        reasons = {cache_info(r).miss_reason for r in responses}
        assert MissReason.SHED in reasons
        health = await cache.ahealth()
        assert health.ready and health.parts["semantic_lookup"].status is Status.DEGRADED
        embedder.delay_s = 0.0
        await asyncio.sleep(0.6)
        health = await cache.ahealth()
        assert health.ready and health.status is Status.OK, health
    finally:
        await cache.aclose()
