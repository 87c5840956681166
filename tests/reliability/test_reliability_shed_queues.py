"""Shed queues, not hits: what admission control counts as
the embedder's queue, how a batch is priced, that the exact tier is never shed, and that a
timeout under load does not keep the cache not ready after the load stops.

Deterministic: the batch cost is fed its observations, queue depths are driven by tickets,
and store calls block on events instead of racing sleeps."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.embedders import MicroBatcher
from semcache.embedders.batch_cost import BatchCost
from semcache.facade.health import Status
from semcache.runtime.admission import Admission, UpstreamLatency
from semcache.stats import MissReason, Tier
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

#: Batches of the bundled MiniLM on one thread, measured: (texts, seconds).
MINILM = [(1, 0.0095), (4, 0.021), (16, 0.067), (64, 0.236), (1, 0.0095), (2, 0.014)]


def msg(content: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": content}]


# -- pricing a batch ----------------------------------------------------------------------
def test_a_batch_is_priced_by_a_line_fixed_cost_plus_texts():
    cost = BatchCost()
    assert not cost.known and cost.seconds(10) == 0.0 and cost.per_text_s() is None
    for texts, seconds in MINILM:
        cost.observe(texts, seconds)
    fixed, per_text = cost.line()
    assert 0.002 < fixed < 0.012 and 0.003 < per_text < 0.0042, (fixed, per_text)
    # one batch of 51 texts: about 190 ms, not 51 x the 9.5 ms of a one-text batch
    assert 0.17 < cost.seconds(51) < 0.23
    same = BatchCost()
    for _ in range(5):
        same.observe(8, 0.04)  # one size only: the slope is unknown, so through the origin
    assert same.line() == (0.0, pytest.approx(0.005))


def test_fifty_queued_lookups_are_one_batch_not_fifty():
    """Priced as texts x seconds per text of recent (one-text) batches, a burst's first 50
    lookups would look like 475 ms of embedder work and hits would be shed."""
    batcher = MicroBatcher(FakeEmbedder(), max_batch=64, max_wait_ms=2)
    try:
        assert batcher.expected_wait_s(50) is None  # no batch yet: nothing is known
        for texts, seconds in MINILM:
            batcher.cost.observe(texts, seconds)
        assert batcher.expected_wait_s(0) == 0.0  # idle: its own embedding is no queue
        # one batch of 51 texts less its own one-text batch: about 180 ms, not 475
        assert 0.16 < batcher.expected_wait_s(50) < 0.22
        # past the load batch (4 x 64 = 256) the queue takes two batches: two fixed costs
        fixed, _ = batcher.cost.line()
        two = batcher.expected_wait_s(300)
        one = batcher.cost.seconds(1)
        assert two == pytest.approx(batcher.cost.seconds(256) + batcher.cost.seconds(45) - one)
        assert two == pytest.approx(fixed * 2 + batcher.cost.line()[1] * 301 - one)
        gate = Admission(
            backlog=batcher.expected_wait_s,
            upstream=UpstreamLatency(),
            wait_budget_s=0.25,
            wait_fraction=0.1,
        )
        tickets = [gate.enter() for _ in range(51)]  # a burst: admitted, not yet queued
        assert all(t is not None for t in tickets) and gate.shed == 0
        assert gate.enter() is not None  # still well inside 250 ms
        assert [gate.enter() is not None for _ in range(30)].count(False) > 0  # not forever
    finally:
        batcher.close()


# -- what counts as queued ----------------------------------------------------------------
def test_only_lookups_not_yet_queued_count_besides_the_embedders_own_queue():
    queue = [0]  # texts the embedder itself has queued or running

    def backlog(unqueued: int) -> float:
        return 0.01 * (queue[0] + unqueued)

    gate = Admission(
        backlog=backlog, upstream=UpstreamLatency(), wait_budget_s=0.02, wait_fraction=0.1
    )
    tickets = [gate.enter() for _ in range(3)]  # 0, 10, 20 ms: admitted
    assert all(t is not None for t in tickets)
    assert gate.enter() is None  # a burst admitted in one instant counts before it is queued
    for ticket in tickets:
        ticket.queued()  # handed over: from now on the embedder's own count says
        ticket.queued()  # idempotent
    assert gate.enter() is not None  # the embedder finished them (queue 0): not a queue
    queue[0] = 3  # ... or it still has them: they count, once
    assert gate.enter() is None
    assert gate.in_flight == 4 and gate.shed == 2


class BlockingSearchStore(InMemoryStore):
    """``nearest`` waits until released, counting the searches that reached it."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.searching = 0

    def nearest(self, vector, where):
        self.searching += 1
        self.release.wait(10)
        return super().nearest(vector, where)

    def nearest_k(self, vector, where, k):
        self.searching += 1
        self.release.wait(10)
        return super().nearest_k(vector, where, k)


async def test_a_lookup_searching_the_store_is_not_embedder_queue():
    """Lookups waiting on a store search are past the embedder: they must not make the next
    lookup look queued (before: every admitted lookup counted, so 3 searches x 20 ms a text
    exceeded a 50 ms budget and the fourth lookup was shed; counting a ticket until it is
    handed to the embedder, not just admitted, sheds the same way)."""
    store = BlockingSearchStore()
    embedder = FakeEmbedder(call_latency_s=0.02)
    settings = CacheSettings(
        semantic={"verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "none", "timeout_s": 10},
        admission={"wait_ms": 50},
    )
    cache = SemanticCache(settings, embedder=embedder, store=store, upstream=FakeUpstream())
    try:
        assert await cache.aready()
        store.release.set()
        await cache.acompletion(model="m", messages=msg("warm the batch cost"))
        store.release.clear()
        store.searching = 0
        pending = []
        for i in range(4):  # each starts once the one before is searching the store
            pending.append(
                asyncio.ensure_future(
                    cache.acompletion(model="m", messages=msg(f"question number {i}"))
                )
            )
            for _ in range(400):  # a shed lookup never reaches the store: fail in 2 s
                if store.searching > i:
                    break
                await asyncio.sleep(0.005)
            assert store.searching > i, f"lookup {i} did not reach the store: {cache.stats().shed}"
        store.release.set()
        responses = await asyncio.gather(*pending)
        assert [cache_info(r).tier for r in responses] == [Tier.MISS] * 4
        assert MissReason.SHED not in {cache_info(r).miss_reason for r in responses}
        assert cache.stats().shed == {}
    finally:
        store.release.set()
        await cache.aclose()


# -- the exact tier -----------------------------------------------------------------------
class SlowRetrieveStore(InMemoryStore):
    retrieve_s = 0.0

    def retrieve(self, key, where):
        time.sleep(self.retrieve_s)
        return super().retrieve(key, where)


async def test_an_exact_store_read_is_never_shed():
    """Concurrent exact repeats under load are answered from the store, never shed: an exact
    read needs no embedder, so the embedder's queue has no say over it."""
    store = SlowRetrieveStore()
    settings = CacheSettings(
        semantic={"verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "none"},
        exact={"max_entries": 0},  # no memory tier: every exact repeat reads the store
        admission={"wait_ms": 1},
    )
    questions = [f"What is the opening time of branch {i}?" for i in range(10)]
    cache = SemanticCache(settings, embedder=FakeEmbedder(), store=store, upstream=FakeUpstream())
    try:
        assert await cache.aready()
        for q in questions:
            await cache.astore(q, f"answer {q}", model="m")
        await cache.aflush()
        store.retrieve_s = 0.05
        responses = await asyncio.gather(
            *(cache.acompletion(model="m", messages=msg(q)) for q in questions)
        )
        assert [cache_info(r).tier for r in responses] == [Tier.EXACT] * 10
        assert "store_retrieve" not in cache.stats().shed
    finally:
        await cache.aclose()


# -- readiness after the load ---------------------------------------------------------------
async def test_a_timeout_under_load_does_not_keep_the_cache_not_ready():
    """The last lookup before the load stopped timed out; with no lookup after it, its part
    stayed down, /readyz 503, for the whole 60 s health window (issue 24: 37 s)."""
    embedder = FakeEmbedder()
    store = SlowRetrieveStore()
    settings = CacheSettings(
        semantic={"verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "none", "timeout_s": 0.1},
        health={"shed_window_s": 0.3, "window_s": 60},
    )
    cache = SemanticCache(settings, embedder=embedder, store=store, upstream=FakeUpstream())
    try:
        assert await cache.aready()  # its probe question's vector is remembered from now on
        embedder.call_latency_s = 0.3  # a lookup takes longer than store.timeout_s
        response = await cache.acompletion(model="m", messages=msg("one slow question"))
        assert cache_info(response).miss_reason is MissReason.FAILED
        assert cache.stats().errors.get("semantic_lookup") == 1  # still counted and visible
        health = await cache.ahealth()
        assert health.ready, health
        assert health.parts["semantic_lookup"].status is Status.DEGRADED
        embedder.call_latency_s = 0.0
        await asyncio.sleep(0.5)  # the shed window passes, the write's embedding ends
        health = await cache.ahealth()
        assert health.ready and health.status is Status.OK, health
        store.retrieve_s = 0.3  # a store that hangs for good fails the probe: not ready
        health = await cache.ahealth()
        assert not health.ready and health.parts["readiness"].status is Status.DOWN, health
    finally:
        store.retrieve_s = 0.0
        await cache.aclose()


# -- writes behind lookups ------------------------------------------------------------------
async def test_while_lookups_arrive_a_batch_takes_few_writes():
    """A full batch of 64 writes ran 1.3 s on a busy machine and every lookup arriving
    meanwhile was shed; with lookups about, writes go a few at a time (within 20 ms)."""
    idle = MicroBatcher(FakeEmbedder(), max_batch=64, max_wait_ms=0)
    try:
        for texts, seconds in MINILM:
            idle.cost.observe(texts, seconds)
        await asyncio.gather(*(idle.embed_one(f"w {i}", background=True) for i in range(20)))
        assert idle.embedder.batches == [20]  # no lookup about: one full batch (bulk import)
    finally:
        idle.close()
    embedder = FakeEmbedder(call_latency_s=0.006, text_latency_s=0.0036)  # MiniLM-like
    busy = MicroBatcher(embedder, max_batch=64, max_wait_ms=0, max_background_ms=20)
    try:
        for texts, seconds in MINILM:
            busy.cost.observe(texts, seconds)
        await busy.embed_one("a lookup")
        room = busy.background_room(asyncio.get_running_loop().time())
        assert 2 <= room <= 4, busy.cost.line()
        await asyncio.gather(*(busy.embed_one(f"w {i}", background=True) for i in range(20)))
        writes = embedder.batches[1:]
        assert sum(writes) == 20 and max(writes) <= room, writes
    finally:
        busy.close()


# -- the budget before the first upstream answer ---------------------------------------------
def test_before_the_first_answer_a_call_out_bounds_the_upstream_latency():
    """With the floor alone, the first second against a 1 s upstream priced a lookup's wait
    at 20 ms and shed the lookups of every first question."""
    now = [0.0]
    budget = UpstreamLatency(clock=lambda: now[0])
    gate = Admission(backlog=lambda _: None, upstream=budget, wait_budget_s=0.02, wait_fraction=0.1)
    assert gate.budget_s() == 0.02  # nothing out, nothing answered: the floor
    budget.begin()
    now[0] = 0.1
    assert gate.budget_s() == 0.02  # 10% of 0.1 s is below the floor
    budget.begin()  # a second call does not move the oldest start
    now[0] = 0.8
    assert gate.budget_s() == pytest.approx(0.08)
    budget.abandon()  # it failed: its age says nothing
    assert gate.budget_s() == 0.02
    budget.begin()
    now[0] = 100.0
    assert gate.budget_s() == pytest.approx(1.0)  # capped at 10 s of latency
    budget.observe(1.0)  # answered: the observed p50 decides from now on
    assert gate.budget_s() == pytest.approx(0.1)
    budget.begin()
    now[0] = 200.0
    assert gate.budget_s() == pytest.approx(0.1)


async def test_a_shed_lookup_still_keeps_write_batches_small():
    """A shed lookup never reaches the batcher; before, the writes of shed lookups' answers
    went in full batches after a second of shedding, and blocked the lookups after them."""
    embedder = FakeEmbedder(call_latency_s=0.006, text_latency_s=0.0036)
    batcher = MicroBatcher(embedder, max_batch=64, max_wait_ms=0, max_background_ms=20)
    try:
        for texts, seconds in MINILM:
            batcher.cost.observe(texts, seconds)
        batcher.expected_wait_s(0)  # admission control priced a lookup (then shed it)
        room = batcher.background_room(asyncio.get_running_loop().time())
        assert room <= 4
        await asyncio.gather(*(batcher.embed_one(f"w {i}", background=True) for i in range(12)))
        assert max(embedder.batches) <= room, embedder.batches
    finally:
        batcher.close()
