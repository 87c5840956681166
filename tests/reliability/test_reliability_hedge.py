"""Hedged lookups: a lookup refused for the embedder's queue
runs beside the upstream call instead of being dropped. A hit that arrives first is served
and the call cancelled; a call that answers first wins as a shed lookup did; a miss still
follows a paraphrase in flight, or is followed; a stream that has passed on a chunk keeps
its call; ``admission.hedge = false`` sheds as before.

The queue is real: an embedder that sleeps per batch (its cost is what the batcher
measures), one unrelated lookup in the embedder while the question under test arrives, and
an upstream whose latency the wait budget has observed."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.runtime.admission import (
    HEDGE_PROBE_EVERY,
    HEDGE_WINDOW,
    Admission,
    LoopLag,
    UpstreamLatency,
)
from semcache.stats import MissReason, Tier
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

BASE = "How do I reset my password?"
PARAPHRASE = "how do i reset my password"
OTHER = "What is the capital of France?"


class SleepyEmbedder(FakeEmbedder):
    """FakeEmbedder's vectors after ``delay_s`` of sleep per batch (the embedder's queue)."""

    delay_s = 0.0

    def embed(self, texts):
        time.sleep(self.delay_s)
        return super().embed(texts)


def msg(content: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": content}]


async def warmed(
    *,
    hedge: bool = True,
    upstream_s: float = 0.6,
    wait_fraction: float = 0,
    window_ms: float = 0,
    verifier: Any = None,
) -> tuple[SemanticCache, Any]:
    """A cache whose embedder sleeps 0.15 s a batch and whose upstream p50 is ``upstream_s``,
    with BASE stored; its lookups may wait 1 ms (``wait_fraction`` 0: the floor); a miss
    is held ``window_ms`` before its call (the gathering window)."""
    embedder = SleepyEmbedder()
    settings = CacheSettings(
        semantic={"verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "none"},
        admission={"wait_ms": 1, "wait_fraction": wait_fraction, "hedge": hedge},
        coalesce={"window_ms": window_ms},
    )
    upstream = FakeUpstream(delay_s=upstream_s)
    cache = SemanticCache(
        settings, embedder=embedder, store=InMemoryStore(), upstream=upstream, verifier=verifier
    )
    assert await cache.aready()
    embedder.delay_s = 0.15
    await cache.acompletion(model="m", messages=msg(BASE))
    await cache.aflush()
    return cache, (embedder, upstream)


async def behind_a_busy_embedder(cache: SemanticCache, question: str, other: str = OTHER) -> Any:
    """``question`` asked while an unrelated lookup (``other``) occupies the embedder (so
    the gate expects a wait past its 1 ms budget)."""
    busy = asyncio.create_task(cache.acompletion(model="m", messages=msg(other)))
    await embedder_busy(cache)
    try:
        started = time.perf_counter()
        response = await cache.acompletion(model="m", messages=msg(question))
        behind_a_busy_embedder.took = time.perf_counter() - started
        return response
    finally:
        await busy


async def embedder_busy(cache: SemanticCache) -> None:
    """Until the gate sees a lookup running in the embedder (white-box: no public probe)."""
    gate = cache._parts.embed_gate
    for _ in range(200):
        if gate.expected_wait_s() > 0.005:
            return
        await asyncio.sleep(0.002)
    raise AssertionError("the unrelated lookup never reached the embedder")


async def test_a_hedged_hit_is_served_and_its_upstream_call_cancelled():
    cache, (_, upstream) = await warmed()
    try:
        response = await behind_a_busy_embedder(cache, PARAPHRASE)
        took = behind_a_busy_embedder.took
        info = cache_info(response)
        assert info.tier is Tier.SEMANTIC, info
        assert "reset my password" in response.choices[0].message.content.lower()
        stats = cache.stats()
        assert stats.counts["hedged_lookups"] == 1 and stats.counts["hedge_hits"] == 1
        assert upstream.cancelled == 1  # the paraphrase's own call, started at once
        assert "semantic_lookup" not in stats.shed
        assert took < 0.55, took  # the hit, not the 0.6 s call
    finally:
        await cache.aclose()


async def test_an_upstream_that_answers_first_wins_and_the_lookup_counts_as_shed():
    cache, (_, upstream) = await warmed()
    try:
        upstream.delay_s = 0.05  # faster than the lookup now; the budget still knows 0.6 s
        response = await behind_a_busy_embedder(cache, PARAPHRASE)
        info = cache_info(response)
        assert info.tier is Tier.MISS and info.miss_reason is MissReason.SHED, info
        stats = cache.stats()
        assert stats.counts["hedged_lookups"] == 1 and stats.counts["hedge_lost"] == 1
        assert stats.shed["semantic_lookup"] == 1 and upstream.cancelled == 0
    finally:
        await cache.aclose()


async def test_hedges_pause_once_nearly_all_recent_ones_lost_to_the_upstream():
    cache, (_, upstream) = await warmed()
    try:
        gate = cache._parts.embed_gate  # white-box: 15 earlier races lost, the 16th is real
        for _ in range(HEDGE_WINDOW // 2 - 1):
            gate.hedge_ended(lost=True)
        upstream.delay_s = 0.05  # faster than the lookup; the budget still knows 0.6 s
        lost = cache_info(await behind_a_busy_embedder(cache, PARAPHRASE))
        assert lost.miss_reason is MissReason.SHED and cache.stats().counts["hedge_lost"] == 1
        upstream.delay_s = 0.6
        await cache.aflush()  # the lost race's answer is written: the embedder is idle
        while gate.in_flight or gate.expected_wait_s() > 0.005:
            await asyncio.sleep(0.01)
        paused = await behind_a_busy_embedder(
            cache, "how can i reset my password", other="Who painted the Mona Lisa?"
        )
        info = cache_info(paused)
        assert info.tier is Tier.MISS and info.miss_reason is MissReason.SHED, info
        counts = cache.stats().counts
        assert counts["hedged_lookups"] == 1 and counts["hedges_paused"] == 1, counts
    finally:
        await cache.aclose()


async def test_a_hedged_miss_says_why_and_its_answer_is_stored():
    cache, (_, upstream) = await warmed()
    try:
        new = "Which planet has the most moons?"
        response = await behind_a_busy_embedder(cache, new)
        info = cache_info(response)
        assert info.tier is Tier.MISS and info.miss_reason is not MissReason.SHED, info
        assert upstream.cancelled == 0
        await cache.aflush()
        again = await cache.acompletion(model="m", messages=msg(new.lower()))
        assert cache_info(again).tier is Tier.SEMANTIC
    finally:
        await cache.aclose()


async def test_a_hedged_miss_follows_a_paraphrase_in_flight():
    cache, (_, upstream) = await warmed(upstream_s=0.8)
    try:
        new = "Which planet has the most moons?"
        # the budget knows 0.8 s; this call takes longer, so a loaded machine still finds
        # it in flight when the follower looks
        upstream.delay_s = 3.0
        leader = asyncio.create_task(cache.acompletion(model="m", messages=msg(new)))
        await asyncio.sleep(0.3)  # its lookup missed; its call runs
        follower = await behind_a_busy_embedder(cache, new.lower())
        await leader
        info = cache_info(follower)
        assert info.tier is Tier.MERGED, info
        assert cache.stats().counts["hedge_merges"] == 1, cache.stats().counts
        assert upstream.cancelled == 1  # the follower's own call, replaced by the leader's
    finally:
        await cache.aclose()


async def test_a_leader_switches_to_a_hedged_paraphrase_call_that_began_before_its_own():
    cache, (_, upstream) = await warmed(upstream_s=0.8)
    try:
        calls = upstream.call_count
        started = time.perf_counter()
        leader = asyncio.create_task(cache.acompletion(model="m", messages=msg(OTHER)))
        await embedder_busy(cache)  # the leader's lookup: its call starts after it
        hedged = await cache.acompletion(model="m", messages=msg(OTHER.lower()))
        first = await leader
        took = time.perf_counter() - started
        assert cache_info(hedged).tier is Tier.MISS  # its own call, begun first
        assert cache_info(first).tier is Tier.MERGED, cache_info(first)
        assert first.choices[0].message.content == hedged.choices[0].message.content
        assert took < 0.93, took  # not its own call's answer (about 0.15 + 0.8 s)
        assert upstream.cancelled == 1 and upstream.call_count == calls + 2  # its own, cancelled
        counts = cache.stats().counts
        assert counts["hedge_leads"] == 1 and counts["merge_switches"] == 1, counts
    finally:
        await cache.aclose()


class OneWay:
    """A verifier that vetoes OTHER asked about anything else, and nothing else."""

    name = "one-way"

    def verify(self, query: str, candidate: str) -> bool:
        return query != OTHER


async def test_a_leader_judges_the_offered_call_itself_before_switching():
    cache, (_, upstream) = await warmed(upstream_s=0.8, verifier=OneWay())
    try:
        leader = asyncio.create_task(cache.acompletion(model="m", messages=msg(OTHER)))
        await embedder_busy(cache)  # the leader's lookup: its call starts after it
        hedged = await cache.acompletion(model="m", messages=msg(OTHER.lower()))
        first = await leader
        assert cache_info(hedged).tier is Tier.MISS
        assert cache_info(first).tier is Tier.MISS  # its own call: it would not serve the other
        assert upstream.cancelled == 0
        counts = cache.stats().counts
        assert counts["hedge_leads"] == 1 and "merge_switches" not in counts, counts
    finally:
        await cache.aclose()


async def test_a_streaming_leader_keeps_its_call_and_the_hedged_paraphrase_takes_its_own():
    cache, (_, upstream) = await warmed(upstream_s=0.8)
    try:
        stream = await cache.acompletion(model="m", messages=msg(OTHER), stream=True)
        leader = asyncio.create_task(drain(stream))
        await embedder_busy(cache)  # the leader's lookup: its call starts after it
        started = time.perf_counter()
        hedged = await cache.acompletion(model="m", messages=msg(OTHER.lower()))
        took = time.perf_counter() - started
        await leader
        assert cache_info(hedged).tier is Tier.MISS  # its own call, begun first, answered
        assert took < 0.95, took  # not held for the leader's (ending about 0.95 s)
        assert upstream.cancelled == 0
        assert "merge_switches" not in cache.stats().counts
    finally:
        await cache.aclose()


async def drain(stream: Any) -> list[Any]:
    return [chunk async for chunk in stream]


async def held_and_hedged(cache: SemanticCache) -> tuple[Any, Any]:
    """A new question asked on an idle embedder (its lookup, then its gathering hold: about
    0.15 + 0.3 s) and at once its paraphrase, hedged behind it: that call begins first.
    Returns both outcomes (an exception stands for a failed call)."""
    new = "Which planet has the most moons?"
    held = asyncio.create_task(cache.acompletion(model="m", messages=msg(new)))
    await embedder_busy(cache)
    hedged = asyncio.create_task(cache.acompletion(model="m", messages=msg(new.lower())))
    first, second = await asyncio.gather(held, hedged, return_exceptions=True)
    return first, second


async def test_a_leader_in_its_gathering_hold_follows_a_hedged_paraphrase_already_calling():
    cache, (_, upstream) = await warmed(upstream_s=0.8, window_ms=300)
    try:
        calls = upstream.call_count
        held, hedged = await held_and_hedged(cache)
        assert cache_info(hedged).tier is Tier.MISS  # its own call, begun first
        assert cache_info(held).tier is Tier.MERGED, cache_info(held)
        assert held.choices[0].message.content == hedged.choices[0].message.content
        assert upstream.call_count == calls + 1  # one call for the two (racing: both paid)
        counts = cache.stats().counts
        assert counts["hedge_leads"] == 1 and counts["merge_switches"] == 1, counts
    finally:
        await cache.aclose()


async def test_a_held_leader_calls_on_its_own_when_the_hedged_paraphrase_fails():
    cache, (_, upstream) = await warmed(upstream_s=0.8, window_ms=300)
    try:
        calls = upstream.call_count
        upstream.fail_next = [RuntimeError("upstream down")]  # the first call to end
        held, hedged = await held_and_hedged(cache)
        assert isinstance(hedged, RuntimeError)
        info = cache_info(held)
        assert info.tier is Tier.MISS, info  # after the one it followed failed
        assert "most moons" in held.choices[0].message.content.lower()
        assert upstream.call_count == calls + 2
        counts = cache.stats().counts
        assert counts["merge_switches"] == 1 and counts["merge_fallbacks"] == 1, counts
    finally:
        await cache.aclose()


async def test_a_held_leader_with_a_follower_keeps_its_call_for_it():
    """Its follower judged it, not the hedged paraphrase: following that would leave the
    follower with an answer it may not serve (a call of its own, late)."""
    cache, (_, upstream) = await warmed(upstream_s=0.8, window_ms=500)
    try:
        calls = upstream.call_count
        new = "Which planet has the most moons?"
        held = asyncio.create_task(cache.acompletion(model="m", messages=msg(new)))
        await embedder_busy(cache)
        await asyncio.sleep(0.2)  # its lookup (0.15 s) done: held until about 0.65 s
        follower = asyncio.create_task(
            cache.acompletion(model="m", messages=msg("which planet has the most moons"))
        )
        await embedder_busy(cache)  # the follower's lookup; then a hedged paraphrase
        hedged = await cache.acompletion(model="m", messages=msg(new.lower()))
        first, second = await held, await follower
        assert cache_info(hedged).tier is Tier.MISS
        assert cache_info(first).tier is Tier.MISS  # its own call, for its follower
        assert cache_info(second).tier is Tier.MERGED, cache_info(second)
        assert second.choices[0].message.content == first.choices[0].message.content
        assert upstream.call_count == calls + 2
        counts = cache.stats().counts
        assert counts["hedge_leads"] == 1 and "merge_switches" not in counts, counts
    finally:
        await cache.aclose()


async def early_follower(cache: SemanticCache) -> tuple[asyncio.Task, ...]:
    """Two asks of one new question, hedged 10 ms apart behind a busy embedder (the wait
    budget is 2% of 0.8 s: 16 ms); returns the busy request's, the leader's and the
    follower's tasks once the follower has cancelled its own call for the leader's."""
    new = "Which planet has the most moons?"
    busy = asyncio.create_task(cache.acompletion(model="m", messages=msg(OTHER)))
    await embedder_busy(cache)
    leader = asyncio.create_task(cache.acompletion(model="m", messages=msg(new)))
    await asyncio.sleep(0.01)
    follower = asyncio.create_task(cache.acompletion(model="m", messages=msg(new.lower())))
    for _ in range(400):
        if cache.stats().counts.get("hedge_early_follows"):
            break
        await asyncio.sleep(0.005)
    return busy, leader, follower  # OTHER's own call runs on (0.8 s)


async def test_a_hedged_miss_cancels_its_call_at_once_for_a_leader_that_began_with_it():
    cache, (_, upstream) = await warmed(upstream_s=0.8, wait_fraction=0.02)
    try:
        calls = upstream.call_count
        busy, leader, follower = await early_follower(cache)
        counts = cache.stats().counts
        assert counts.get("hedge_early_follows") == 1, counts
        assert upstream.cancelled == 1 and not leader.done()  # at once: not after the answer
        first, second = await leader, await follower
        await busy
        assert cache_info(first).tier is Tier.MISS
        assert cache_info(second).tier is Tier.MERGED, cache_info(second)
        assert second.choices[0].message.content == first.choices[0].message.content
        assert upstream.call_count == calls + 3  # OTHER, the leader's, the cancelled one
        assert cache.stats().counts["hedge_merges"] == 1
    finally:
        await cache.aclose()


async def test_an_early_follower_whose_leader_fails_calls_anew():
    cache, (_, upstream) = await warmed(upstream_s=0.8, wait_fraction=0.02)
    try:
        calls = upstream.call_count
        busy, leader, follower = await early_follower(cache)
        assert cache.stats().counts.get("hedge_early_follows") == 1
        upstream.fail_next = [RuntimeError("upstream down")]  # the leader's call fails
        done = await asyncio.gather(leader, follower, return_exceptions=True)
        await busy
        assert isinstance(done[0], RuntimeError)
        info = cache_info(done[1])
        assert info.tier is Tier.MISS and info.miss_reason is not MissReason.SHED, info
        assert "most moons" in done[1].choices[0].message.content.lower()
        assert upstream.call_count == calls + 4  # ... and the follower's new call
        assert cache.stats().counts.get("merge_fallbacks") == 1
    finally:
        await cache.aclose()


async def test_a_hedged_miss_can_be_followed():
    cache, (_, upstream) = await warmed(upstream_s=1.0)
    try:
        new = "Which planet has the most moons?"
        hedged = asyncio.create_task(behind_a_busy_embedder(cache, new))
        await asyncio.sleep(0.5)  # its lookup missed; its call (1 s) still runs
        later = await cache.acompletion(model="m", messages=msg(new.lower()))
        first = await hedged
        assert cache_info(first).tier is Tier.MISS
        assert cache_info(later).tier is Tier.MERGED, cache_info(later)
        assert upstream.call_count == 3  # BASE, the busy question, the hedged one: no fourth
        assert cache.stats().counts["hedged_lookups"] >= 1
    finally:
        await cache.aclose()


async def test_a_stream_that_passed_on_a_chunk_keeps_its_call():
    cache, (_, upstream) = await warmed()
    try:
        upstream.delay_s = 0.0
        upstream.chunks, upstream.chunk_delay_s = 4, 0.15  # first chunk at once, 0.45 s in all
        busy = asyncio.create_task(cache.acompletion(model="m", messages=msg(OTHER)))
        await embedder_busy(cache)
        stream = await cache.acompletion(model="m", messages=msg(PARAPHRASE), stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream])
        await busy
        assert cache.stats().counts["hedged_lookups"] == 1  # raced, and the stream won
        assert text.startswith("[m] answer to: " + PARAPHRASE), (text, cache.stats().counts)
        assert upstream.cancelled == 0
        assert cache.stats().counts.get("hedge_hits", 0) == 0
    finally:
        await cache.aclose()


async def test_with_hedging_off_a_refused_lookup_is_shed():
    cache, _ = await warmed(hedge=False)
    try:
        response = await behind_a_busy_embedder(cache, PARAPHRASE)
        info = cache_info(response)
        assert info.tier is Tier.MISS and info.miss_reason is MissReason.SHED, info
        assert cache.stats().counts.get("hedged_lookups", 0) == 0
    finally:
        await cache.aclose()


# -- the gate's rule --------------------------------------------------------------------
def gate_over(backlog, latency: UpstreamLatency, lag: LoopLag | None = None) -> Admission:
    """A gate with a 20 ms floor and a budget of 10% of the upstream latency."""
    return Admission(
        backlog=backlog, upstream=latency, wait_budget_s=0.02, wait_fraction=0.1, lag=lag
    )


def test_a_hedge_runs_only_when_it_can_finish_before_the_upstream_answers():
    wait = [0.5]
    budget = UpstreamLatency()
    gate = gate_over(lambda _: wait[0], budget)
    early = gate.hedge()
    assert early is not None  # no upstream latency known yet (a start-up burst)
    early.leave()
    budget.observe(1.0)
    first = gate.enter()
    assert first is not None  # nothing in flight: always admitted
    assert gate.enter() is None  # 0.5 s of queue against a 0.1 s budget
    ticket = gate.hedge()
    assert ticket is not None and gate.hedged == 2
    wait[0] = 1.0  # would end after the upstream answer: CPU for nothing
    assert gate.hedge() is None
    ticket.leave()
    first.leave()


def test_no_lookup_and_no_hedge_on_a_late_loop():
    budget = UpstreamLatency()
    budget.observe(1.0)
    lag = LoopLag()
    late = gate_over(lambda _: 0.5, budget, lag)
    lag.ensure_running = lambda: None  # measured elsewhere; here it reads 50 ms late
    lag.lag_s = 0.05
    assert late.enter() is None  # even with nothing in flight: the process is short of CPU
    assert late.hedge() is None
    lag.lag_s = 0.0
    assert late.enter() is not None


def refused_gate() -> tuple[Admission, object]:
    """A gate that refuses ``enter()`` (0.5 s of queue, 1 s upstream) with one lookup in."""
    budget = UpstreamLatency()
    budget.observe(1.0)
    gate = gate_over(lambda _: 0.5, budget)
    held = gate.enter()
    assert held is not None and gate.enter() is None
    return gate, held


def test_hedges_pause_on_recent_losses_but_probe_one_in_eight():
    gate, _ = refused_gate()
    for _ in range(HEDGE_WINDOW // 2 - 1):
        gate.hedge_ended(lost=True)
    ticket = gate.hedge()
    assert ticket is not None  # 15 outcomes: too few to judge
    ticket.leave()
    gate.hedge_ended(lost=True)
    got = [gate.hedge() for _ in range(2 * HEDGE_PROBE_EVERY)]
    probes = [t for t in got if t is not None]
    assert len(probes) == 2 and got[HEDGE_PROBE_EVERY - 1] is not None
    assert gate.hedges_paused == 2 * HEDGE_PROBE_EVERY - 2


def test_hedges_resume_when_probes_win_again():
    gate, _ = refused_gate()
    for _ in range(HEDGE_WINDOW):
        gate.hedge_ended(lost=True)
    assert gate.hedge() is None
    for _ in range(3):
        gate.hedge_ended(lost=False)
    assert gate.hedge() is None  # 29 of 32 lost: still at least 90%
    gate.hedge_ended(lost=False)
    assert gate.hedge() is not None and gate.hedge() is not None  # 28 of 32
