"""The live false-hit rate: a weighted estimate from sampled shadow verdicts, with an interval.

Shadow verification samples hits near the threshold more often, so each verdict is weighted
by the inverse of its sampling probability (the Hájek ratio p̂ = Σ w_i y_i / Σ w_i,
w_i = 1 / π_i). The 95% interval is Wilson's at Kish's effective sample size
(Σ w_i)² / Σ w_i², since false hits are rare and a normal interval collapses there. Feedback
labels are not used: they are not a sample with known probabilities.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from semcache.core.intervals import wilson_bounds

#: Normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Estimate:
    """The false-hit rate of one namespace's semantic hits (wrong / served), 95% interval.

    ``alert`` is True only on evidence that ``delta`` is exceeded (the interval's lower end above
    it), so never with no wrong verdict; "not yet shown at most δ" is ``high > delta``.
    """

    rate: float
    low: float
    high: float
    verdicts: int
    wrong: int
    effective_n: float
    delta: float

    @property
    def alert(self) -> bool:
        return self.low > self.delta


def wilson(rate: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``rate`` observed on ``n`` (may be fractional)."""
    low, high = wilson_bounds(rate, n, z)
    return float(low), float(high)


def weighted_rate(verdicts: Iterable[tuple[bool, float]], delta: float, z: float = Z95) -> Estimate:
    """The Hájek estimate and Kish–Wilson interval of ``(wrong, probability)`` verdicts."""
    total = squares = wrong_weight = 0.0
    count = wrong = 0
    for is_wrong, probability in verdicts:
        if not 0.0 < probability <= 1.0:
            raise ValueError(f"sampling probability must be in (0, 1], got {probability}")
        weight = 1.0 / probability
        total += weight
        squares += weight * weight
        count += 1
        if is_wrong:
            wrong += 1
            wrong_weight += weight
    if count == 0:
        return Estimate(0.0, 0.0, 1.0, 0, 0, 0.0, delta)
    rate = wrong_weight / total
    n_eff = total * total / squares
    low, high = wilson(rate, n_eff, z)
    return Estimate(rate, low, high, count, wrong, n_eff, delta)


class FalseHitMonitor:
    """The most recent ``window`` shadow verdicts per namespace, and their estimates."""

    def __init__(self, *, delta: float, window: int) -> None:
        self.delta = delta
        self._window = window
        self._verdicts: dict[str, deque[tuple[bool, float]]] = {}
        self._lock = threading.Lock()

    def add(self, namespace: str, *, wrong: bool, probability: float) -> None:
        if not 0.0 < probability <= 1.0:
            raise ValueError(f"sampling probability must be in (0, 1], got {probability}")
        with self._lock:
            window = self._verdicts.setdefault(namespace, deque(maxlen=self._window))
            window.append((wrong, probability))

    def estimates(self) -> Mapping[str, Estimate]:
        """One estimate per namespace that has verdicts."""
        with self._lock:
            current = {ns: list(v) for ns, v in self._verdicts.items()}
        return {ns: weighted_rate(v, self.delta) for ns, v in sorted(current.items())}
