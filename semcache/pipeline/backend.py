"""The semantic tier's lazy start: load the model and open the store once, retry after failure.

The exact-store, semantic and write-behind stages share one ``SemanticBackend``, so the model
loads once and a failing store is retried on one schedule. Until it is up every request goes
upstream (fail-open), which is why setup has its own generous timeout and, after a failure, is
retried only every ``retry_s`` instead of on every request.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from semcache._failopen import FailOpen
from semcache.semantic import SemanticTier


class SemanticBackend:
    """``ready()`` is the semantic tier once set up, or None (disabled, or failing for now)."""

    def __init__(
        self,
        tier: SemanticTier | None,
        failopen: FailOpen,
        *,
        setup_timeout_s: float = 120.0,
        retry_s: float = 30.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tier = tier
        self._failopen = failopen
        self._setup_timeout_s = setup_timeout_s
        self._retry_s = retry_s
        self._monotonic = monotonic
        self._failed_at: float | None = None

    @property
    def started(self) -> SemanticTier | None:
        """The tier if it is already set up (never starts it)."""
        tier = self.tier
        return tier if tier is not None and tier.store is not None else None

    async def ready(self) -> SemanticTier | None:
        tier = self.tier
        if tier is None or tier.store is not None:
            return tier
        failed_at = self._failed_at
        if failed_at is not None and self._monotonic() - failed_at < self._retry_s:
            return None
        store = await self._failopen.call(
            "semantic_setup", tier.setup, None, timeout_s=self._setup_timeout_s
        )
        if store is None:
            self._failed_at = self._monotonic()
            return None
        return tier

    async def close(self) -> None:
        if self.tier is not None:
            await self.tier.close()
