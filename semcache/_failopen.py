"""The one place where a cache failure becomes a miss.

Every store and embedder call on the request path goes through ``FailOpen.call``: an error
or a timeout is counted by kind, logged once per kind (then at debug level, so a dead store
does not flood the log), and the caller gets the fallback value and goes upstream.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from semcache.stats import Stats

T = TypeVar("T")
log = logging.getLogger("semcache")


class FailOpen:
    def __init__(self, stats: Stats, *, timeout_s: float) -> None:
        self._stats = stats
        self._timeout_s = timeout_s
        self._logged: set[str] = set()

    async def call(
        self,
        kind: str,
        fn: Callable[[], Awaitable[T]],
        fallback: T,
        *,
        timeout_s: float | None = None,
    ) -> T:
        try:
            return await asyncio.wait_for(fn(), timeout_s or self._timeout_s)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.record(kind, exc)
            return fallback

    def record(self, kind: str, exc: BaseException) -> None:
        self._stats.error(kind)
        reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        level = logging.DEBUG if kind in self._logged else logging.WARNING
        self._logged.add(kind)
        log.log(level, "semcache %s failed (%s); serving as a cache miss", kind, reason)
