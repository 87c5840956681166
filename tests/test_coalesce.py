"""The in-flight coalescer: single-flight semantics, cancellation, max_wait, streaming fan-out.

Sequencing uses asyncio.Event; the only real waits are max_wait deadlines of a few milliseconds.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable
from typing import Any

import pytest

from semcache.core.coalesce import Coalescer, Emit, Outcome, Role, Subscription
from semcache.errors import ConfigError


class Boom(Exception):
    """The execution's own failure."""


class Work:
    """A controllable execution function that counts its runs and how they ended."""

    def __init__(
        self, value: str = "v", chunks: tuple[str, ...] = (), fail: BaseException | None = None
    ) -> None:
        self.value = value
        self.chunks = chunks
        self.fail = fail
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.calls = 0
        self.cancelled = 0

    async def __call__(self, emit: Emit[str]) -> str:
        self.calls += 1
        self.started.set()
        try:
            for chunk in self.chunks:
                emit(chunk)
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        if self.fail is not None:
            raise self.fail
        return self.value


class Stepped:
    """A streaming execution that emits one chunk each time the test calls ``step``."""

    def __init__(self, chunks: list[str], fail: BaseException | None = None) -> None:
        self.chunks = chunks
        self.fail = fail
        self.calls = 0
        self._go = asyncio.Queue[None]()
        self.emitted = asyncio.Event()

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            self._go.put_nowait(None)

    async def __call__(self, emit: Emit[str]) -> str:
        self.calls += 1
        for chunk in self.chunks:
            await self._go.get()
            emit(chunk)
            self.emitted.set()
        await self._go.get()  # one more step to finish
        if self.fail is not None:
            raise self.fail
        return "".join(self.chunks)


async def settle() -> None:
    """Let every ready task run until none is left to make progress."""
    for _ in range(5):
        await asyncio.sleep(0)


async def drain(subscription: Subscription[str, str]) -> list[str]:
    return [chunk async for chunk in subscription]


def spawn(coro: Awaitable[Outcome[str]]) -> asyncio.Task[Outcome[str]]:
    return asyncio.ensure_future(coro)


# -- single flight ------------------------------------------------------------------------------


async def test_concurrent_calls_share_one_execution() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    work = Work("answer")
    tasks = [spawn(coalescer.do("k", work)) for _ in range(100)]
    await work.started.wait()
    assert coalescer.in_flight() == 1
    work.release.set()
    outcomes = await asyncio.gather(*tasks)

    assert work.calls == 1
    assert {o.value for o in outcomes} == {"answer"}
    assert sum(o.shared for o in outcomes) == 99
    assert [o.role for o in outcomes].count(Role.LEADER) == 1
    assert coalescer.in_flight() == 0


async def test_distinct_keys_run_separately() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    first, second = Work("a"), Work("b")
    tasks = [spawn(coalescer.do("a", first)), spawn(coalescer.do("b", second))]
    await asyncio.gather(first.started.wait(), second.started.wait())
    assert coalescer.in_flight() == 2
    first.release.set()
    second.release.set()
    outcomes = await asyncio.gather(*tasks)

    assert [(o.value, o.shared) for o in outcomes] == [("a", False), ("b", False)]
    assert (first.calls, second.calls) == (1, 1)
    assert coalescer.in_flight() == 0


async def test_nothing_is_cached_after_completion() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    work = Work()
    work.release.set()
    first = await coalescer.do("k", work)
    second = await coalescer.do("k", work)
    assert work.calls == 2
    assert first.role is second.role is Role.LEADER


async def test_exception_reaches_every_waiter_and_drops_the_entry() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    error = Boom("upstream down")
    work = Work(fail=error)
    tasks = [spawn(coalescer.do("k", work)) for _ in range(10)]
    await work.started.wait()
    work.release.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)

    assert all(result is error for result in results)
    assert coalescer.in_flight() == 0
    work.fail = None
    assert (await coalescer.do("k", work)).value == "v"
    assert work.calls == 2


async def test_a_call_in_the_completion_step_starts_a_new_execution() -> None:
    """Joining after fn returned, before the task's callbacks ran, must not reuse its result."""
    coalescer: Coalescer[str, str] = Coalescer()
    joined: list[Subscription[str, str]] = []

    def join() -> None:
        joined.append(coalescer.subscribe("k", Work()))

    async def first(emit: Emit[str]) -> str:
        asyncio.get_running_loop().call_soon(join)  # runs before the task's done callbacks
        return "first"

    assert await coalescer.do("k", first) == Outcome("first", Role.LEADER)
    async with joined[0] as subscription:
        assert subscription.role is Role.LEADER
        assert coalescer.in_flight() == 1
    assert coalescer.in_flight() == 0


# -- cancellation -------------------------------------------------------------------------------


async def test_cancelled_leader_leaves_followers_served() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    work = Work("answer")
    leader = spawn(coalescer.do("k", work))
    await work.started.wait()
    followers = [spawn(coalescer.do("k", work)) for _ in range(3)]
    await settle()
    leader.cancel()
    await settle()
    assert leader.cancelled()
    assert coalescer.in_flight() == 1

    work.release.set()
    outcomes = await asyncio.gather(*followers)
    assert [o.value for o in outcomes] == ["answer"] * 3
    assert all(o.shared for o in outcomes)
    assert (work.calls, work.cancelled) == (1, 0)
    assert coalescer.in_flight() == 0


async def test_last_waiter_leaving_cancels_the_execution() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    work = Work()
    tasks = [spawn(coalescer.do("k", work)) for _ in range(3)]
    await work.started.wait()
    for task in tasks[:2]:
        task.cancel()
    await settle()
    assert (work.cancelled, coalescer.in_flight()) == (0, 1)

    tasks[2].cancel()
    await settle()
    assert all(task.cancelled() for task in tasks)
    assert (work.cancelled, coalescer.in_flight()) == (1, 0)

    work.release.set()  # a new call is a new execution, not the cancelled one
    assert (await coalescer.do("k", work)).role is Role.LEADER
    assert work.calls == 2


async def test_execution_cancelling_itself_cancels_every_waiter() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    work = Work(fail=asyncio.CancelledError())
    tasks = [spawn(coalescer.do("k", work)) for _ in range(3)]
    await work.started.wait()
    work.release.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(result, asyncio.CancelledError) for result in results)
    assert (work.calls, coalescer.in_flight()) == (1, 0)


async def test_leaving_before_the_execution_starts_never_runs_it() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    work = Work()
    subscription = coalescer.subscribe("k", work)
    assert coalescer.in_flight() == 1
    await subscription.aclose()
    await subscription.aclose()  # idempotent: must not leave twice
    await settle()
    assert (work.calls, coalescer.in_flight()) == (0, 0)


async def test_failure_nobody_reads_is_not_logged() -> None:
    """The last waiter left just as fn failed: no 'exception was never retrieved' noise."""
    loop = asyncio.get_running_loop()
    reported: list[dict[str, object]] = []
    failed = asyncio.Event()

    async def fail(_emit: Emit[str]) -> str:
        failed.set()
        raise Boom  # a fresh exception that only the task holds, so the task can be collected

    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        coalescer: Coalescer[str, str] = Coalescer()
        subscription = coalescer.subscribe("k", fail)
        await failed.wait()
        await settle()
        await subscription.aclose()
        del subscription
        gc.collect()
        await settle()
    finally:
        loop.set_exception_handler(None)
    assert reported == []
    assert coalescer.in_flight() == 0


async def test_a_call_right_after_the_last_waiter_left_starts_afresh() -> None:
    """The abandoned execution is still unwinding its cancellation; nobody may join it."""
    coalescer: Coalescer[str, str] = Coalescer()
    abandoned = Work()
    subscription = coalescer.subscribe("k", abandoned)
    await abandoned.started.wait()
    await subscription.aclose()
    fresh = Work("fresh")
    fresh.release.set()
    assert await coalescer.do("k", fresh) == Outcome("fresh", Role.LEADER)
    assert (abandoned.cancelled, fresh.calls, coalescer.in_flight()) == (1, 1, 0)


async def test_closed_subscription_refuses_reads() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    work = Work()
    async with coalescer.subscribe("k", work) as subscription:
        pass
    with pytest.raises(RuntimeError, match="closed"):
        await subscription.result()
    with pytest.raises(RuntimeError, match="closed"):
        await anext(aiter(subscription))


# -- max_wait -----------------------------------------------------------------------------------


def test_max_wait_must_be_none_or_non_negative() -> None:
    with pytest.raises(ConfigError):
        Coalescer(max_wait=-1)
    with pytest.raises(ConfigError):
        Coalescer(max_wait=float("nan"))
    Coalescer(max_wait=0)
    Coalescer(max_wait=None)


async def test_follower_past_max_wait_runs_alone_while_the_flight_continues() -> None:
    coalescer: Coalescer[str, str] = Coalescer(max_wait=0.01)
    slow = Work("from leader")
    leader = spawn(coalescer.do("k", slow))
    await slow.started.wait()
    own = Work("from follower")
    own.release.set()

    outcome = await coalescer.do("k", own)
    assert outcome == Outcome("from follower", Role.ALONE)
    assert not outcome.shared
    assert (own.calls, slow.cancelled, coalescer.in_flight()) == (1, 0, 1)

    slow.release.set()
    assert await leader == Outcome("from leader", Role.LEADER)
    assert coalescer.in_flight() == 0


async def test_leader_never_gives_up() -> None:
    coalescer: Coalescer[str, str] = Coalescer(max_wait=0)
    work = Work()
    leader = spawn(coalescer.do("k", work))
    await asyncio.sleep(0.02)
    assert not leader.done()
    work.release.set()
    assert (await leader).role is Role.LEADER


async def test_follower_served_within_max_wait_shares() -> None:
    coalescer: Coalescer[str, str] = Coalescer(max_wait=5)
    work = Work()
    leader = spawn(coalescer.do("k", work))
    follower = spawn(coalescer.do("k", Work("unused")))
    await settle()
    work.release.set()
    assert [o.role for o in await asyncio.gather(leader, follower)] == [
        Role.LEADER,
        Role.FOLLOWER,
    ]


async def test_giving_up_as_the_last_waiter_cancels_the_abandoned_flight() -> None:
    coalescer: Coalescer[str, str] = Coalescer(max_wait=0.01)
    stuck = Work()
    leader = spawn(coalescer.do("k", stuck))
    await stuck.started.wait()
    own = Work("mine")
    own.release.set()
    follower = spawn(coalescer.do("k", own))
    await settle()
    leader.cancel()
    assert (await follower).role is Role.ALONE
    assert stuck.cancelled == 1
    assert coalescer.in_flight() == 0


async def test_streaming_follower_without_a_chunk_goes_alone_seamlessly() -> None:
    coalescer: Coalescer[str, str] = Coalescer(max_wait=0.01)
    stalled = Stepped(["x"])
    leader = coalescer.subscribe("k", stalled)
    own = Work("ab", chunks=("a", "b"))
    own.release.set()
    async with coalescer.subscribe("k", own) as follower:
        assert follower.role is Role.FOLLOWER
        assert await drain(follower) == ["a", "b"]
        assert await follower.result() == "ab"
        assert follower.role is Role.ALONE and not follower.shared
    assert coalescer.in_flight() == 1  # the leader's flight is untouched
    stalled.step(2)
    assert await drain(leader) == ["x"]
    await leader.aclose()
    assert coalescer.in_flight() == 0


async def test_streaming_follower_stays_once_the_flight_shows_progress() -> None:
    coalescer: Coalescer[str, str] = Coalescer(max_wait=0.01)
    stream = Stepped(["a", "b"])
    leader = coalescer.subscribe("k", stream)
    stream.step()
    await stream.emitted.wait()
    own = Work()
    async with coalescer.subscribe("k", own) as follower:
        chunks = aiter(follower)
        assert await anext(chunks) == "a"
        reading = asyncio.ensure_future(anext(chunks))
        await asyncio.sleep(0.03)  # well past max_wait, with no new chunk
        stream.step()
        assert await reading == "b"
        stream.step()
        assert await follower.result() == "ab"
        assert follower.role is Role.FOLLOWER
    assert own.calls == 0
    await leader.aclose()


async def test_plain_follower_stays_when_a_chunk_comes_within_max_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chunk before the deadline commits even a non-streaming waiter, which then stops polling."""
    waits = 0
    real_wait = asyncio.wait

    async def counting_wait(*args: Any, **kwargs: Any) -> Any:
        nonlocal waits
        waits += 1
        return await real_wait(*args, **kwargs)

    coalescer: Coalescer[str, str] = Coalescer(max_wait=0.02)
    stream = Stepped(["a"])
    leader = coalescer.subscribe("k", stream)
    monkeypatch.setattr(asyncio, "wait", counting_wait)
    own = Work()
    follower = spawn(coalescer.do("k", own))
    await settle()
    stream.step()
    await stream.emitted.wait()
    await asyncio.sleep(0.05)  # past max_wait, with no further progress
    stream.step()
    assert await follower == Outcome("a", Role.FOLLOWER)
    assert own.calls == 0
    assert waits <= 3  # one timed wait, then one until done: no busy loop past the deadline
    await leader.aclose()


# -- streaming fan-out --------------------------------------------------------------------------


async def test_late_subscriber_gets_replay_then_live_chunks_in_order() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    stream = Stepped(["a", "b", "c", "d"])
    async with coalescer.subscribe("k", stream) as leader:
        reading_leader = asyncio.ensure_future(drain(leader))
        stream.step(2)
        await settle()
        async with coalescer.subscribe("k", Work()) as late:
            assert late.shared
            reading_late = asyncio.ensure_future(drain(late))
            await settle()
            stream.step(3)
            assert await reading_late == ["a", "b", "c", "d"]
            assert await late.result() == "abcd"
        assert await reading_leader == ["a", "b", "c", "d"]
    assert stream.calls == 1
    assert coalescer.in_flight() == 0


async def test_chunks_reach_subscribers_live_while_the_flight_runs() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    stream = Stepped(["a", "b"])
    subscriptions = [coalescer.subscribe("k", stream) for _ in range(3)]
    for expected in ("a", "b"):
        reads = [asyncio.ensure_future(anext(aiter(s))) for s in subscriptions]
        await settle()
        assert not any(read.done() for read in reads)
        stream.step()
        assert await asyncio.gather(*reads) == [expected] * 3
    stream.step()
    assert [await s.result() for s in subscriptions] == ["ab"] * 3
    for subscription in subscriptions:
        await subscription.aclose()
    assert coalescer.in_flight() == 0


async def test_several_subscribers_each_get_the_full_sequence() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    chunks = [str(i) for i in range(50)]
    stream = Stepped(chunks)
    subscriptions = [coalescer.subscribe("k", stream) for _ in range(5)]
    readers = [asyncio.ensure_future(drain(s)) for s in subscriptions]
    for _ in range(len(chunks) + 1):
        stream.step()
        await asyncio.sleep(0)
    assert await asyncio.gather(*readers) == [chunks] * 5
    for subscription in subscriptions:
        await subscription.aclose()
    assert (stream.calls, coalescer.in_flight()) == (1, 0)


async def test_plain_waiter_on_a_streaming_flight_gets_the_final_value() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    stream = Stepped(["a", "b"])
    async with coalescer.subscribe("k", stream) as leader:
        waiter = spawn(coalescer.do("k", Work()))
        await settle()
        stream.step(3)
        assert await waiter == Outcome("ab", Role.FOLLOWER)
        assert await drain(leader) == ["a", "b"]


async def test_non_streaming_flight_gives_no_chunks_and_the_value() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    work = Work("whole")
    work.release.set()
    async with coalescer.subscribe("k", work) as subscription:
        assert await drain(subscription) == []
        assert await subscription.result() == "whole"


async def test_failure_after_chunks_raises_after_those_chunks_for_every_subscriber() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    error = Boom("cut off")
    stream = Stepped(["a", "b"], fail=error)

    async def read(subscription: Subscription[str, str]) -> tuple[list[str], BaseException]:
        received: list[str] = []
        with pytest.raises(Boom) as raised:
            async for chunk in subscription:
                received.append(chunk)
        return received, raised.value

    early = coalescer.subscribe("k", stream)
    reading_early = asyncio.ensure_future(read(early))
    stream.step()
    await stream.emitted.wait()
    late = coalescer.subscribe("k", stream)
    reading_late = asyncio.ensure_future(read(late))
    stream.step(2)
    assert await reading_early == (["a", "b"], error)
    assert await reading_late == (["a", "b"], error)
    with pytest.raises(Boom):
        await late.result()
    await early.aclose()
    await late.aclose()
    assert coalescer.in_flight() == 0


async def test_slow_subscriber_does_not_delay_producer_or_fast_subscriber() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    chunks = [str(i) for i in range(100)]
    work = Work("done", chunks=tuple(chunks))
    work.release.set()
    unblock_slow = asyncio.Event()

    async def slow_reader(subscription: Subscription[str, str]) -> list[str]:
        received: list[str] = []
        async for chunk in subscription:
            received.append(chunk)
            await unblock_slow.wait()
        return received

    slow = coalescer.subscribe("k", work)
    fast = coalescer.subscribe("k", work)
    reading_slow = asyncio.ensure_future(slow_reader(slow))
    assert await asyncio.wait_for(drain(fast), 1) == chunks
    assert await fast.result() == "done"
    assert not reading_slow.done()
    unblock_slow.set()
    assert await reading_slow == chunks
    await fast.aclose()
    await slow.aclose()
    assert coalescer.in_flight() == 0


async def test_cancelled_reader_leaves_the_stream_to_the_others() -> None:
    coalescer: Coalescer[str, str] = Coalescer()
    stream = Stepped(["a", "b"])
    staying = coalescer.subscribe("k", stream)
    leaving = coalescer.subscribe("k", stream)

    async def read_then_leave() -> None:
        async with leaving:
            await drain(leaving)

    task = asyncio.ensure_future(read_then_leave())
    stream.step()
    await stream.emitted.wait()
    await settle()
    task.cancel()
    await settle()
    stream.step(2)
    assert await drain(staying) == ["a", "b"]
    await staying.aclose()
    assert (stream.calls, coalescer.in_flight()) == (1, 0)


# -- join: follow a flight chosen by another key, never start one ----------------------------


def test_join_follows_a_flight_in_flight_and_never_starts_one():
    async def run() -> None:
        coalescer: Coalescer[str, str] = Coalescer()
        lead, other = Work("v", chunks=("a", "b")), Work("own")
        assert coalescer.join("k", other) is None  # nothing in flight: nothing started
        async with coalescer.subscribe("k", lead) as leader:
            await lead.started.wait()
            joined = coalescer.join("k", other)
            assert joined is not None and joined.role is Role.FOLLOWER
            async with joined:
                lead.release.set()
                assert [c async for c in joined] == ["a", "b"]
                assert await joined.settled() and await joined.result() == "v"
            assert await leader.result() == "v"
        assert (lead.calls, other.calls) == (1, 0)
        assert coalescer.join("k", other) is None  # finished flights are gone

    asyncio.run(run())


def test_settled_and_next_chunk_report_a_failure_without_raising_it():
    async def run() -> None:
        coalescer: Coalescer[str, str] = Coalescer()
        work = Work(chunks=("a",), fail=Boom("down"))
        async with coalescer.subscribe("k", work) as flight:
            work.release.set()
            assert await flight.next_chunk() == "a"
            assert await flight.next_chunk() is None
            assert await flight.settled() is False
            with pytest.raises(Boom):
                await flight.result()

    asyncio.run(run())
