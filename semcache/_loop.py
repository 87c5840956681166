"""semcache's own event loop on a daemon thread.

All coalesced work runs here, so threads using the sync API and asyncio tasks on any loop
share one in-flight table. Callers reach it through ``run`` (blocking) or ``arun`` (awaitable
from another loop; cancelling the awaiting task cancels the work on this loop).

One loop serves every cache in the process (``shared_loop``) and is never closed: LiteLLM
keeps HTTP clients and background tasks bound to the loop they were made on, and closing
a loop under them leaves broken clients and "Event loop is closed" errors behind.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str = "semcache-loop") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

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
        """Await ``coro`` running on the private loop from any other loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()
        self._loop = self._thread = None


_shared: LoopThread | None = None
_shared_lock = threading.Lock()


def shared_loop() -> LoopThread:
    """The process-wide loop thread (started on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = LoopThread()
        return _shared
