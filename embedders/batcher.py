"""Micro-batching: concurrent single-text lookups share one embedder call.

An embedder call has a fixed cost besides its per-text cost, so the questions that arrive
within a few milliseconds are embedded in one batch. Contract of :class:`MicroBatcher`:

- Every submitted text is embedded exactly once, in a batch of at most ``max_batch`` texts
  (``max_load_batch`` when more are queued), sent when full or when its oldest text has
  waited ``max_wait_ms``; one batch per event loop in flight, each loop with its own queue.
- The embedder runs in a worker thread, never on the event loop, in the context
  (``contextvars``) of the batch's first caller, so what that context carries (its trace)
  follows its text into the embedder. Each caller gets its own row (a copy) or the
  exception raised for its batch; a caller cancelled before its batch is sent drops its
  text. Nothing is cached here.
- ``background`` texts (store writes) go after every waiting foreground text (lookups);
  while lookups are arriving, a batch takes only the background texts its fitted cost line
  (:class:`BatchCost`) says fit in ``max_background_ms`` (at least one), so a write backlog
  delays a lookup by at most one batch.
- ``expected_wait_s(unqueued)``: how long a foreground text submitted now would wait for
  its vector because of queued work; ``backlog()`` gives the raw figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from semcache.errors import ConfigError, EmbedderError

from ._common import as_text_list
from .base import Embedder
from .batch_cost import BatchCost


@dataclass(slots=True)
class _Waiting:
    text: str
    future: asyncio.Future[np.ndarray]
    queued_at: float
    context: contextvars.Context


@dataclass(slots=True)
class _LoopQueue:
    """The queue and worker task of one event loop; touched only from that loop's thread."""

    items: deque[_Waiting] = field(default_factory=deque)
    later: deque[_Waiting] = field(default_factory=deque)  # background texts

    def __len__(self) -> int:
        return len(self.items) + len(self.later)

    full: asyncio.Event = field(default_factory=asyncio.Event)
    worker: asyncio.Task[None] | None = None


class MicroBatcher:
    """Gathers concurrent ``embed_one`` calls into batched ``embedder.embed`` calls.

    ``executor`` runs the embedder; by default the batcher owns a one-thread pool (one
    batch runs at a time anyway) and shuts it down in :meth:`close`. A caller's executor is
    left running.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        max_batch: int = 64,
        max_wait_ms: float = 2.0,
        executor: Executor | None = None,
        max_load_batch: int | None = None,
        max_background_ms: float = 20.0,
    ) -> None:
        if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
            raise ConfigError(f"max_batch must be an int >= 1, got {max_batch!r}")
        if not max_wait_ms >= 0:  # also refuses NaN
            raise ConfigError(f"max_wait_ms must be >= 0 milliseconds, got {max_wait_ms!r}")
        self._embedder = embedder
        self._max_batch = max_batch
        self._max_load_batch = max(max_batch, max_load_batch or 4 * max_batch)
        self._running = 0  # texts in the batch being embedded now
        self._running_since = 0.0  # loop time the running batch started
        self._loop_time: asyncio.AbstractEventLoop | None = None  # the loop that runs it
        self.cost = BatchCost()
        self._max_wait_s = max_wait_ms / 1000.0
        self._max_background_s = max_background_ms / 1000.0
        self._last_foreground = -float("inf")  # loop time a lookup was last submitted
        self._owns_executor = executor is None
        self._executor = executor or ThreadPoolExecutor(1, thread_name_prefix="semcache-embed")
        self._queues: dict[asyncio.AbstractEventLoop, _LoopQueue] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    @property
    def closed(self) -> bool:
        return self._closed

    def backlog(self) -> tuple[int, float | None]:
        """(texts queued or being embedded, observed seconds per text or None before the
        first batch). Read from any thread; approximate while batches come and go."""
        return self._foreground_queued() + self._running, self.cost.per_text_s()

    def expected_wait_s(self, unqueued: int = 0) -> float | None:
        """Seconds a foreground text submitted now would wait for its vector beyond its own one-text
        batch on an idle batcher (None before the first batch). ``unqueued``: foreground texts about
        to be submitted, counted as queued before it; background texts never count.
        """
        self._lookup_about()
        cost = self.cost
        if not cost.known:
            return None
        running = self._running
        queued = self._foreground_queued() + max(0, unqueued)
        wait = 0.0
        if running:
            loop = self._loop_time
            elapsed = loop.time() - self._running_since if loop is not None else 0.0
            wait = max(0.0, cost.seconds(running) - elapsed)
        texts = queued + 1  # the batches that take the queue, then this text
        while texts > 0:
            size = min(texts, self._max_load_batch if texts > self._max_batch else self._max_batch)
            wait += cost.seconds(size)
            texts -= size
        return max(0.0, wait - cost.seconds(1))  # its own embedding is no queue

    def _lookup_about(self) -> None:
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to note
            self._last_foreground = asyncio.get_running_loop().time()

    def _foreground_queued(self) -> int:
        return sum(len(queue.items) for queue in list(self._queues.values()))

    async def embed_one(
        self,
        text: str,
        *,
        background: bool = False,
        queued: Callable[[], None] | None = None,
    ) -> np.ndarray:
        """The vector of one text, shape (dim,), batched with whatever else is waiting
        (``background``: after every foreground text). ``queued`` is called once the text
        is in the queue (admission control then counts it as the batcher's own)."""
        (future,) = self._submit(as_text_list([text]), background=background)
        if queued is not None:
            queued()
        return await future

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of several texts, shape (len(texts), dim), batched like single calls."""
        texts = as_text_list(texts)
        if not texts:
            self._refuse_if_closed()
            loop = asyncio.get_running_loop()
            dim = await loop.run_in_executor(self._executor, _dim_of, self._embedder)
            return np.zeros((0, dim), dtype=np.float32)
        outcomes = await asyncio.gather(*self._submit(texts), return_exceptions=True)
        vectors = []
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
            vectors.append(outcome)
        return np.stack(vectors)

    def close(self) -> None:
        """Refuse new texts and fail queued ones with EmbedderError; idempotent, any thread.

        A batch already running completes and its callers get their vectors.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            queues = list(self._queues.items())
            self._queues.clear()
        for loop, queue in queues:
            with contextlib.suppress(RuntimeError):  # that loop is already closed
                loop.call_soon_threadsafe(self._fail_queued, queue)
        if self._owns_executor:
            self._executor.shutdown(wait=False)

    # -- on the event loop ---------------------------------------------------------------
    def _submit(
        self, texts: list[str], *, background: bool = False
    ) -> list[asyncio.Future[np.ndarray]]:
        loop = asyncio.get_running_loop()
        queue = self._queue_for(loop)
        now = loop.time()
        futures: list[asyncio.Future[np.ndarray]] = []
        context = contextvars.copy_context()
        for text in texts:
            future: asyncio.Future[np.ndarray] = loop.create_future()
            (queue.later if background else queue.items).append(
                _Waiting(text, future, now, context)
            )
            futures.append(future)
        if not background:
            self._last_foreground = now
        if len(queue) >= self._max_batch:
            queue.full.set()
        if queue.worker is None:
            queue.worker = loop.create_task(self._drain(loop, queue))
        return futures

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise EmbedderError("the MicroBatcher is closed")

    def _queue_for(self, loop: asyncio.AbstractEventLoop) -> _LoopQueue:
        with self._lock:
            self._refuse_if_closed()
            queue = self._queues.get(loop)
            if queue is None:
                for old in [old for old in self._queues if old.is_closed()]:
                    del self._queues[old]
                queue = self._queues[loop] = _LoopQueue()
            return queue

    async def _drain(self, loop: asyncio.AbstractEventLoop, queue: _LoopQueue) -> None:
        """The worker: send batches until the queue is empty, then end (a new one starts later)."""
        try:
            while len(queue):
                await self._wait_to_fill(loop, queue)
                batch = self._take_batch(queue, loop.time())
                if batch:
                    await self._run(loop, batch)
        finally:
            queue.worker = None
            for pending in (queue.items, queue.later):  # cancelled: nobody would answer these
                for waiting in pending:
                    waiting.future.cancel()
                pending.clear()

    async def _wait_to_fill(self, loop: asyncio.AbstractEventLoop, queue: _LoopQueue) -> None:
        oldest = min(pending[0].queued_at for pending in (queue.items, queue.later) if pending)
        deadline = oldest + self._max_wait_s
        while len(queue) < self._max_batch:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            queue.full.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await queue.full.wait()

    def _take_batch(self, queue: _LoopQueue, now: float) -> list[_Waiting]:
        batch: list[_Waiting] = []
        busy = len(queue.items) > self._max_batch
        limit = self._max_load_batch if busy else self._max_batch
        while queue.items and len(batch) < limit:
            waiting = queue.items.popleft()
            if not waiting.future.done():  # skip callers cancelled while queued
                batch.append(waiting)
        room = min(limit - len(batch), self.background_room(now))
        while queue.later and room > 0:
            waiting = queue.later.popleft()
            if not waiting.future.done():
                batch.append(waiting)
                room -= 1
        return batch

    def background_room(self, now: float) -> int:
        """Background texts one batch may take at loop time ``now`` (see the contract)."""
        fixed, per_text = self.cost.line()
        if now - self._last_foreground > 2.0 or per_text <= 0.0:
            return self._max_batch
        fits = int((self._max_background_s - fixed) / per_text)
        return max(1, min(self._max_batch, fits))

    async def _run(self, loop: asyncio.AbstractEventLoop, batch: list[_Waiting]) -> None:
        texts = [waiting.text for waiting in batch]
        started = loop.time()
        self._loop_time, self._running_since = loop, started
        self._running = len(texts)
        try:
            job = loop.run_in_executor(
                self._executor, batch[0].context.copy().run, _embed_checked, self._embedder, texts
            )
        except RuntimeError as exc:  # the executor was shut down by close()
            job = loop.create_future()
            job.set_exception(EmbedderError(f"the MicroBatcher is closed ({exc})"))
        try:
            await asyncio.wait([job])
        except asyncio.CancelledError:
            for waiting in batch:
                waiting.future.cancel()
            raise
        finally:
            self._running = 0
        if job.cancelled():
            error: BaseException | None = EmbedderError("the embedding batch was cancelled")
        else:
            error = job.exception()
        if error is None:
            vectors, seconds = job.result()
            self.cost.observe(len(texts), seconds)
        for row, waiting in enumerate(batch):
            if waiting.future.done():
                continue
            if error is not None:
                waiting.future.set_exception(error)
            else:
                waiting.future.set_result(vectors[row].copy())

    def _fail_queued(self, queue: _LoopQueue) -> None:
        while len(queue):
            waiting = (queue.items or queue.later).popleft()
            if not waiting.future.done():
                waiting.future.set_exception(EmbedderError("the MicroBatcher was closed"))


# -- in the worker thread ----------------------------------------------------------------
def _embed_checked(embedder: Embedder, texts: list[str]) -> tuple[np.ndarray, float]:
    """The vectors, and the seconds the embedder took, timed in this thread: the event loop
    noticing the result late is not embedder work (a busy loop made every batch look slow
    and shed lookups a shed would not have made any faster)."""
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    seconds = time.perf_counter() - started
    if not isinstance(vectors, np.ndarray) or vectors.ndim != 2 or len(vectors) != len(texts):
        shape = getattr(vectors, "shape", type(vectors).__name__)
        raise EmbedderError(f"{embedder.name} returned {shape} for {len(texts)} texts")
    return vectors, seconds


def _dim_of(embedder: Embedder) -> int:
    return embedder.dim
