"""The gathering window: how long a miss waits before its upstream call.

Coalescing and merging share a call only while it is in flight; a miss held a little before
it calls upstream lets near-simultaneous duplicates and paraphrases arrive and join it. The
hold is added to the leader's latency, so it is off by default; ``adaptive`` sizes it as a
fraction of the mean upstream latency seen so far (an exponentially weighted mean), because
what a hold costs is best judged against how long the call itself takes.
"""

from __future__ import annotations

from semcache.errors import ConfigError

#: Weight of the newest observation in the adaptive window's mean upstream latency.
_EWMA_WEIGHT = 0.2


class GatherWindow:
    """``delay_s()`` is the hold for the next miss; ``observe`` feeds it upstream latencies.

    ``fixed_s``: a constant hold (seconds, >= 0), or None for the adaptive window:
    ``fraction`` of the mean observed upstream latency, at most ``max_s`` (0 before the first
    observation, so the first misses are never held on a guess).
    """

    def __init__(self, *, fixed_s: float | None, fraction: float = 0.1, max_s: float = 1.0) -> None:
        if fixed_s is not None and not 0 <= fixed_s < float("inf"):
            raise ConfigError(f"window must be finite seconds >= 0, got {fixed_s!r}")
        if not 0 < fraction <= 1:
            raise ConfigError(f"window fraction must be in (0, 1], got {fraction!r}")
        if not 0 <= max_s < float("inf"):
            raise ConfigError(f"window maximum must be finite seconds >= 0, got {max_s!r}")
        self._fixed_s = fixed_s
        self._fraction = fraction
        self._max_s = max_s
        self._mean_s: float | None = None

    @property
    def adaptive(self) -> bool:
        return self._fixed_s is None

    def delay_s(self) -> float:
        """Seconds the next miss waits before calling upstream."""
        if self._fixed_s is not None:
            return self._fixed_s
        if self._mean_s is None:
            return 0.0
        return min(self._max_s, self._fraction * self._mean_s)

    def observe(self, seconds: float) -> None:
        """One upstream call took ``seconds`` (ignored by a fixed window)."""
        if self._fixed_s is not None or not seconds >= 0:
            return
        mean = self._mean_s
        self._mean_s = seconds if mean is None else mean + _EWMA_WEIGHT * (seconds - mean)
