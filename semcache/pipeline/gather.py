"""The gathering window: how long a miss waits before its upstream call.

Coalescing and merging share a call only while it is in flight; a miss held a little before
it calls upstream lets near-simultaneous duplicates and paraphrases arrive and join it. The
hold is added to the leader's latency, so it is off by default; ``adaptive`` sizes it as a
fraction of the upstream latency the cache observes, because what a hold costs is best
judged against how long the call itself takes.
"""

from __future__ import annotations

from collections.abc import Callable

from semcache.errors import ConfigError


class GatherWindow:
    """``delay_s()`` is the hold for the next miss.

    ``fixed_s``: a constant hold (seconds, >= 0), or None for the adaptive window:
    ``fraction`` of ``upstream_s()`` (the observed upstream p50 in seconds, None before the
    first answer), at most ``max_s``; 0 while it is None, so the first misses are never held
    on a guess.
    """

    def __init__(
        self,
        *,
        fixed_s: float | None,
        fraction: float = 0.1,
        max_s: float = 1.0,
        upstream_s: Callable[[], float | None] = lambda: None,
    ) -> None:
        if fixed_s is not None and not 0 <= fixed_s < float("inf"):
            raise ConfigError(f"window must be finite seconds >= 0, got {fixed_s!r}")
        if not 0 < fraction <= 1:
            raise ConfigError(f"window fraction must be in (0, 1], got {fraction!r}")
        if not 0 <= max_s < float("inf"):
            raise ConfigError(f"window maximum must be finite seconds >= 0, got {max_s!r}")
        self._fixed_s = fixed_s
        self._fraction = fraction
        self._max_s = max_s
        self._upstream_s = upstream_s

    @property
    def adaptive(self) -> bool:
        return self._fixed_s is None

    def delay_s(self) -> float:
        """Seconds the next miss waits before calling upstream."""
        if self._fixed_s is not None:
            return self._fixed_s
        latency = self._upstream_s()
        if latency is None:
            return 0.0
        return min(self._max_s, self._fraction * latency)
