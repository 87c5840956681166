"""In-flight coalescing of identical work, with streaming fan-out (asyncio single-flight).

Knows nothing of LLMs: a key, an async function, and the chunks it emits. The facade runs every
coalesced call on one event loop; this module is the asyncio core and is not thread-safe.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, TypeVar

from semcache.errors import ConfigError

T = TypeVar("T")
C = TypeVar("C")

Emit = Callable[[C], None]
"""What an execution function calls with each chunk it produces: never blocks, and must be
called on the event loop's thread (it wakes subscribers through loop futures)."""

Work = Callable[[Emit[C]], Awaitable[T]]
"""An execution function: receives ``emit`` and returns the final value."""


class Role(enum.Enum):
    """How a caller's value was obtained."""

    LEADER = "leader"
    """Started the flight; its own ``fn`` ran."""
    FOLLOWER = "follower"
    """Joined a flight another caller started; its ``fn`` did not run."""
    ALONE = "alone"
    """Joined a flight, gave up after ``max_wait`` and ran its own ``fn`` outside coalescing."""


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """The final value of a call and how it was obtained."""

    value: T
    role: Role

    @property
    def shared(self) -> bool:
        """True when the value came from another caller's execution."""
        return self.role is Role.FOLLOWER


class _Flight(Generic[T, C]):
    """One execution: its task, its append-only chunk buffer, and how many waiters hold it.

    A flight started by a follower that gave up is not registered under any key (``registry`` is
    None), so nobody else can join it; everything else about it is the same.
    """

    def __init__(
        self, key: Hashable, registry: dict[Hashable, _Flight[T, C]] | None, fn: Work[C, T]
    ) -> None:
        loop = asyncio.get_running_loop()
        self.chunks: list[C] = []
        self.waiters = 0
        self._key = key
        self._registry = registry
        self._next_chunk: asyncio.Future[None] = loop.create_future()
        self.task: asyncio.Task[T] = loop.create_task(self._run(fn))
        self.task.add_done_callback(self._on_done)

    async def _run(self, fn: Work[C, T]) -> T:
        try:
            return await fn(self.emit)
        finally:
            # Before the task's result is visible, so a new call never joins a finished flight.
            self._drop()

    def _on_done(self, task: asyncio.Task[T]) -> None:
        # Mark the exception retrieved: when the last waiter left just as fn failed, nobody
        # reads it, and asyncio would log "Task exception was never retrieved".
        if not task.cancelled():
            task.exception()
        self._drop()  # also covers a task cancelled from outside before its first step

    def emit(self, chunk: C) -> None:
        self.chunks.append(chunk)
        if not self._next_chunk.done():
            self._next_chunk.set_result(None)

    def next_chunk(self) -> asyncio.Future[None]:
        """A future that resolves at the next ``emit``."""
        if self._next_chunk.done():
            self._next_chunk = self._next_chunk.get_loop().create_future()
        return self._next_chunk

    def leave(self) -> None:
        """One waiter leaves; the last one cancels the execution and drops the entry."""
        self.waiters -= 1
        if self.waiters == 0 and not self.task.done():
            self.task.cancel()
            self._drop()  # a task cancelled before its first step never runs _run's finally

    def _drop(self) -> None:
        if self._registry is not None and self._registry.get(self._key) is self:
            del self._registry[self._key]


class Subscription(Generic[T, C]):
    """One caller's place in a flight: its own read cursor into the shared chunk buffer.

    Iterate it for the chunks (emitted ones in order, then live ones), await ``result()`` for the
    final value, or both; close it to leave (the last open one keeps the execution alive). A
    follower that sees neither a chunk nor the end within ``max_wait`` runs its own ``fn`` as a
    private flight (``role`` ALONE); after any progress it stays, since chunks handed out cannot
    be taken back.
    """

    def __init__(
        self,
        flight: _Flight[T, C],
        role: Role,
        fn: Work[C, T],
        max_wait: float | None,
    ) -> None:
        self.role = role
        self._flight = flight
        self._fn = fn
        self._cursor = 0
        self._closed = False
        self._deadline: float | None = None
        if role is Role.FOLLOWER and max_wait is not None:
            self._deadline = flight.task.get_loop().time() + max_wait
        flight.waiters += 1

    @property
    def shared(self) -> bool:
        """True while reading another caller's execution."""
        return self.role is Role.FOLLOWER

    def __aiter__(self) -> Subscription[T, C]:
        return self

    async def __anext__(self) -> C:
        chunk = await self.next_chunk()
        if chunk is None:
            self._flight.task.result()  # raises the execution's exception, if any
            raise StopAsyncIteration
        return chunk

    async def next_chunk(self) -> C | None:
        """The next chunk, or None once the execution has finished, however it finished
        (chunks are never None). Unlike iteration it never raises the execution's exception,
        so a caller with a fallback can ask :meth:`settled` instead of catching it."""
        while True:
            flight = self._checked_flight()
            if self._cursor < len(flight.chunks):
                self._cursor += 1
                return flight.chunks[self._cursor - 1]
            if flight.task.done():
                return None
            await self._wait(flight.task, flight.next_chunk())

    async def settled(self) -> bool:
        """Wait for the execution to finish; True when it returned a value, False when it
        raised or was cancelled (then :meth:`result` raises that)."""
        while not (flight := self._checked_flight()).task.done():
            await self._wait(flight.task)
        task = flight.task
        return not task.cancelled() and task.exception() is None

    async def result(self) -> T:
        """The execution's final value, or its exception (the same object for every waiter)."""
        while not (flight := self._checked_flight()).task.done():
            await self._wait(flight.task)
        return flight.task.result()

    async def aclose(self) -> None:
        """Leave the flight (idempotent); the execution is cancelled if nobody else waits."""
        if not self._closed:
            self._closed = True
            self._flight.leave()

    async def __aenter__(self) -> Subscription[T, C]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _checked_flight(self) -> _Flight[T, C]:
        if self._closed:
            raise RuntimeError("the subscription is closed")
        return self._flight

    async def _wait(self, *events: asyncio.Future[Any]) -> None:
        """Wait for any of ``events`` without cancelling them; go alone at the deadline."""
        flight = self._flight
        if self._deadline is not None and (flight.chunks or flight.task.done()):
            self._deadline = None  # the flight showed progress: stay with it
        timeout = None
        if self._deadline is not None:
            timeout = max(0.0, self._deadline - flight.task.get_loop().time())
        # asyncio.wait is the shield: cancelling this waiter never cancels the shared task.
        done, _ = await asyncio.wait(events, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if done or flight.chunks:
            return
        flight.leave()
        self._flight = _Flight(None, None, self._fn)
        self._flight.waiters += 1
        self._cursor = 0
        self._deadline = None
        self.role = Role.ALONE


class Coalescer(Generic[T, C]):
    """Single-flight: concurrent calls with one key share one execution (as Go's singleflight).

    - At most one execution per key is in flight; every waiter sees the same value or the same
      exception object. The entry is dropped when it completes: nothing is cached here.
    - The execution runs as its own task, in the caller's ``contextvars`` context; waiters await
      it shielded, so a cancelled waiter only leaves, and the last one leaving cancels it.
    - ``max_wait`` (seconds, None = unlimited) bounds how long a follower waits on a flight that
      shows no progress before it runs its own ``fn`` alone (``Role.ALONE``); the leader never
      gives up.
    - Streaming fan-out: ``fn`` receives ``emit``; chunks go to one append-only buffer per flight
      that subscribers read through their own cursors. ``emit`` never waits, so a slow
      subscriber never blocks the producer or the others.

    Time is the event loop's clock, as asyncio's own timeouts use it.
    """

    def __init__(self, *, max_wait: float | None = None) -> None:
        if max_wait is not None and not max_wait >= 0:
            raise ConfigError(f"max_wait must be None or >= 0 seconds, got {max_wait!r}")
        self._max_wait = max_wait
        self._flights: dict[Hashable, _Flight[T, C]] = {}

    def subscribe(self, key: Hashable, fn: Work[C, T]) -> Subscription[T, C]:
        """Join the flight for ``key``, or start it with ``fn``; must run on the event loop."""
        flight = self._flights.get(key)
        if flight is not None:
            return Subscription(flight, Role.FOLLOWER, fn, self._max_wait)
        flight = self._flights[key] = _Flight(key, self._flights, fn)
        return Subscription(flight, Role.LEADER, fn, self._max_wait)

    def join(self, key: Hashable, fn: Work[C, T]) -> Subscription[T, C] | None:
        """Follow the flight for ``key`` if one is in flight, else None (never starts one): for a
        caller that chose a flight by another key (an in-flight paraphrase). ``fn`` runs only if the
        follower gives up after ``max_wait``.
        """
        flight = self._flights.get(key)
        if flight is None:
            return None
        return Subscription(flight, Role.FOLLOWER, fn, self._max_wait)

    async def do(self, key: Hashable, fn: Work[C, T]) -> Outcome[T]:
        """The final value of the flight for ``key`` (joined or started with ``fn``)."""
        async with self.subscribe(key, fn) as subscription:
            value = await subscription.result()
            return Outcome(value, subscription.role)

    def waiters(self, key: Hashable) -> int:
        """How many callers (its leader included) wait on the flight for ``key``; 0: none."""
        flight = self._flights.get(key)
        return 0 if flight is None else flight.waiters

    def in_flight(self) -> int:
        """Number of keys with an execution in flight."""
        return len(self._flights)

    def waiting(self) -> int:
        """Number of callers in a flight now, leaders included (what a test waits for before
        it lets a held execution finish, instead of guessing how long joining takes)."""
        return sum(flight.waiters for flight in self._flights.values())
