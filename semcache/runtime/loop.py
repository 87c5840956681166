"""semcache's own event loop on a daemon thread.

All coalesced work runs here, so threads using the sync API and asyncio tasks on any loop
share one in-flight table. Callers reach it through ``run`` (blocking) or ``arun`` (awaitable
from another loop; cancelling the awaiting task cancels the work on this loop).

One loop serves every cache in the process (``shared_loop``) and is never closed: LiteLLM
keeps HTTP clients and background tasks bound to the loop they were made on, and closing
a loop under them leaves broken clients and "Event loop is closed" errors behind.

What it does at process exit instead: the tasks still pending on it are cancelled and
awaited, bounded by :data:`EXIT_TIMEOUT_S` (:func:`end_shared_tasks`, an ``atexit`` hook
registered when this module is first imported, so that it usually runs after LiteLLM's own
exit hooks, which may schedule work on this loop), and the loop is left running until the
interpreter stops its daemon thread. The
task this is for is LiteLLM's logging worker (``LoggingWorker._worker_loop``, started on
this loop by the first async LiteLLM call, waiting on its queue for ever). When LiteLLM is
also called on another loop, the worker moves there and drops its task on this one
uncancelled; that orphan, still pending, was collected during interpreter shutdown and
printed "Task was destroyed but it is pending!" (a collection before the exit still reports
it mid-run: that is LiteLLM's loop switch, out of semcache's reach).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import sys
import threading
import weakref
from collections import deque
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: Seconds the exit hook waits for the shared loop's cancelled tasks to finish.
EXIT_TIMEOUT_S = 2.0


class LoopThread:
    def __init__(self, name: str = "semcache-loop") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._mailboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Mailbox] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            with self._lock:
                if self._loop is None:
                    loop = asyncio.new_event_loop()
                    ready = threading.Event()

                    def run() -> None:
                        asyncio.set_event_loop(loop)
                        loop.call_soon(ready.set)
                        loop.run_forever()

                    self._thread = threading.Thread(target=run, name=self._name, daemon=True)
                    self._thread.start()
                    ready.wait()
                    self._loop = loop
        return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the private loop and block until it finishes."""
        if self._thread is not None and threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("the sync API cannot be called from semcache's own loop")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` running on the private loop from any other loop.

        Results come back through the caller loop's :class:`_Mailbox`, not one
        ``call_soon_threadsafe`` per call: when a flight's 1,000 followers finish together,
        that is one wake-up of the caller's loop instead of 1,000 (each a self-pipe write and
        a thread switch), which was most of a follower's latency after the leader's answer.
        """
        caller = asyncio.get_running_loop()
        waiter: asyncio.Future[T] = caller.create_future()
        mailbox = self._mailbox(caller)
        started: list[asyncio.Task[T]] = []

        def start() -> None:
            if waiter.cancelled():  # the caller gave up before the work began
                coro.close()
                return
            task = asyncio.ensure_future(coro)
            started.append(task)
            task.add_done_callback(lambda done: mailbox.post(waiter, done))

        self.loop.call_soon_threadsafe(start)
        try:
            return await waiter
        except asyncio.CancelledError:
            self.loop.call_soon_threadsafe(lambda: [task.cancel() for task in started])
            raise

    def _mailbox(self, caller: asyncio.AbstractEventLoop) -> _Mailbox:
        with self._lock:
            mailbox = self._mailboxes.get(caller)
            if mailbox is None:
                mailbox = self._mailboxes[caller] = _Mailbox(caller)
            return mailbox

    def end_tasks(self, timeout_s: float) -> None:
        """Cancel every task pending on the loop and wait up to ``timeout_s`` for them to
        finish (what ``asyncio.run`` does before closing its loop); the loop keeps running.

        A task that outlives the bound is left as it is; so is everything when the loop is
        not running or is the caller's own.
        """
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        if threading.current_thread() is thread:
            return
        ended = asyncio.run_coroutine_threadsafe(_cancel_pending(timeout_s), loop)
        try:
            ended.result(timeout=timeout_s + 1.0)
        except concurrent.futures.TimeoutError:  # the loop is blocked: leave it be
            ended.cancel()

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        self.end_tasks(EXIT_TIMEOUT_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()
        self._loop = self._thread = None


class _Mailbox:
    """Finished work for one caller loop, handed over in batches.

    ``post`` runs on semcache's loop: it queues the finished task and wakes the caller's
    loop only if no drain is already scheduled there; ``_drain`` runs on the caller's loop
    and settles every queued waiter. The flag is read and written under a lock, so a post
    either lands before a scheduled drain takes the queue or schedules the next one.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._items: deque[tuple[asyncio.Future[Any], asyncio.Task[Any]]] = deque()
        self._lock = threading.Lock()
        self._scheduled = False

    def post(self, waiter: asyncio.Future[Any], task: asyncio.Task[Any]) -> None:
        with self._lock:
            self._items.append((waiter, task))
            if self._scheduled:
                return
            self._scheduled = True
        try:
            self._loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the caller's loop is closed: nobody is left to answer
            with self._lock:
                self._items.clear()
                self._scheduled = False

    def _drain(self) -> None:
        with self._lock:
            items, self._items = self._items, deque()
            self._scheduled = False
        for waiter, task in items:
            if waiter.done():
                continue
            if task.cancelled():
                waiter.cancel()
            elif (exc := task.exception()) is not None:
                waiter.set_exception(exc)
            else:
                waiter.set_result(task.result())


async def _cancel_pending(timeout_s: float) -> None:
    me = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not me]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=timeout_s)


_shared: LoopThread | None = None
_shared_lock = threading.Lock()


def shared_loop() -> LoopThread:
    """The process-wide loop thread (started on first use; its tasks end at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = LoopThread()
        return _shared


def end_shared_tasks(timeout_s: float = EXIT_TIMEOUT_S) -> None:
    """Cancel and await what is pending on the shared loop (nothing when it never started);
    the exit hook, also for a test runner ending its session before the interpreter exits."""
    with _shared_lock:
        shared = _shared
    if shared is not None:
        shared.end_tasks(timeout_s)


_exiting = threading.Event()


def interpreter_exiting() -> bool:
    """True once the interpreter has begun to exit: its thread pools refuse new work from
    then on, so what an unclosed cache still had pending fails (and is counted) without
    being a degradation worth a warning."""
    return _exiting.is_set() or sys.is_finalizing()


# Python's thread pools shut down in these hooks, which run before ``atexit`` ones.
threading._register_atexit(_exiting.set)  # type: ignore[attr-defined]
atexit.register(_exiting.set)
atexit.register(end_shared_tasks)
