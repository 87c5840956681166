"""Streams handed to callers: chunks produced on semcache's loop, consumed from anywhere."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from typing import Any

from litellm.types.utils import ModelResponseStream

from semcache.runtime.loop import LoopThread
from semcache.stats import CacheInfo


class AsyncCacheStream:
    """Async iterator over a streamed answer; ``cache_info`` is set once the first chunk is out.

    The chunks are produced on semcache's loop and handed over one by one, so a caller on
    any loop can consume them; closing the stream (or cancelling its consumer) leaves the
    flight, which keeps running for the other subscribers.
    """

    def __init__(
        self, source: AsyncGenerator[ModelResponseStream | CacheInfo, None], loop: LoopThread
    ) -> None:
        self._source = source
        self._loop = loop
        self._reading: asyncio.Task[Any] | None = None  # the loop-side read in progress
        self.cache_info: CacheInfo | None = None

    def __aiter__(self) -> AsyncCacheStream:
        return self

    async def _next(self) -> ModelResponseStream:
        self._reading = asyncio.current_task()
        try:
            while True:
                item = await self._source.__anext__()
                if isinstance(item, CacheInfo):
                    self.cache_info = item
                    continue
                return item
        finally:
            self._reading = None

    async def _close(self) -> None:
        # A consumer that went away mid-read leaves that read running here; finish it first,
        # since an async generator cannot be closed while it runs.
        reading = self._reading
        if reading is not None and not reading.done():
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)
        await self._source.aclose()

    async def __anext__(self) -> ModelResponseStream:
        return await self._loop.arun(self._next())

    def next_blocking(self) -> ModelResponseStream:
        return self._loop.run(self._next())

    async def aclose(self) -> None:
        await self._loop.arun(self._close())

    def close_blocking(self) -> None:
        self._loop.run(self._close())


class ReplayStream:
    """A memory-tier answer replayed on the caller's side: its chunks, or a protocol's event
    batches (same contract as :class:`AsyncCacheStream`, ``cache_info`` set at once).

    Nothing in it waits, so nothing crosses to semcache's loop: each crossing is a thread
    switch, and a streamed hit made of them cost several times a plain one.
    """

    def __init__(self, items: Iterable[Any], info: CacheInfo | None) -> None:
        self._items = iter(items)
        self.cache_info = info

    def __aiter__(self) -> ReplayStream:
        return self

    async def __anext__(self) -> Any:
        return self.next_blocking()

    def next_blocking(self) -> Any:
        item = next(self._items, _END)
        if item is _END:
            raise StopAsyncIteration
        return item

    def drain(self) -> list[Any]:
        """Every item not yet taken, at once (a writer can send them as one body)."""
        items = list(self._items)
        self.close_blocking()
        return items

    async def aclose(self) -> None:
        self.close_blocking()

    def close_blocking(self) -> None:
        self._items = iter(())


_END = object()


def unwound(items: AsyncIterator[Any]) -> list[Any]:
    """Every item of ``items``, an async iterator that never waits (a replay translated by a
    protocol), stepped here without an event loop; RuntimeError if it does wait."""
    out: list[Any] = []
    while True:
        step = items.__anext__()
        try:
            step.send(None)  # type: ignore[attr-defined]
        except StopIteration as done:
            out.append(done.value)
            continue
        except StopAsyncIteration:
            return out
        step.close()  # type: ignore[attr-defined]
        raise RuntimeError("a replayed stream waited")


class SyncCacheStream:
    """Iterator over a streamed answer for the sync API (same contract as the async one)."""

    def __init__(self, stream: AsyncCacheStream | ReplayStream) -> None:
        self._stream = stream

    @property
    def cache_info(self) -> CacheInfo | None:
        return self._stream.cache_info

    def __iter__(self) -> SyncCacheStream:
        return self

    def __next__(self) -> ModelResponseStream:
        try:
            return self._stream.next_blocking()
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        self._stream.close_blocking()


class AsyncBatchStream:
    """Async iterator over items semcache's loop produces in batches (a protocol's stream
    events, one batch per chat chunk), one item at a time.

    A batch crosses from semcache's loop in one hand-over, not one per item: the hand-over is
    a thread switch, and a protocol turns one chat chunk into several events. ``next_batch``
    gives the items ready now, for a writer that sends them together.
    """

    def __init__(self, batches: AsyncCacheStream | ReplayStream) -> None:
        self._batches = batches
        self._pending: deque[Any] = deque()

    @property
    def cache_info(self) -> CacheInfo | None:
        return self._batches.cache_info

    def __aiter__(self) -> AsyncBatchStream:
        return self

    async def __anext__(self) -> Any:
        while not self._pending:
            self._pending.extend(await self._batches.__anext__())
        return self._pending.popleft()

    def replayed(self) -> list[Any] | None:
        """Every item at once when this is a memory hit's replay (nothing to wait for), for a
        writer that sends them as one body; None for a stream still being made."""
        if not isinstance(self._batches, ReplayStream):
            return None
        items = [*self._pending, *(i for batch in self._batches.drain() for i in batch)]
        self._pending.clear()
        return items

    async def next_batch(self) -> list[Any]:
        """The items left of the current batch, else the next batch (StopAsyncIteration at
        the end)."""
        if self._pending:
            batch = list(self._pending)
            self._pending.clear()
            return batch
        return list(await self._batches.__anext__())

    async def aclose(self) -> None:
        self._pending.clear()
        await self._batches.aclose()


class SyncBatchStream:
    """Iterator over batched items for the sync API (same contract as the async one)."""

    def __init__(self, batches: AsyncCacheStream | ReplayStream) -> None:
        self._batches = batches
        self._pending: deque[Any] = deque()

    @property
    def cache_info(self) -> CacheInfo | None:
        return self._batches.cache_info

    def __iter__(self) -> SyncBatchStream:
        return self

    def __next__(self) -> Any:
        while not self._pending:
            try:
                self._pending.extend(self._batches.next_blocking())
            except StopAsyncIteration:
                raise StopIteration from None
        return self._pending.popleft()

    def close(self) -> None:
        self._pending.clear()
        self._batches.close_blocking()
