"""How many labeled pairs a δ would likely need, by simulating the certification itself.

Runs the procedure of :mod:`semcache.eval.frontier` on more pairs drawn with replacement from
the scored calibration pairs: N is the smallest total, searched upward from the pairs given,
at which the planned walk's first test rejects in at least half of the simulated runs, so it
is never at or under the pairs given when nothing certified. An estimate: it assumes new
pairs look like these. ``floor_rate``: the lowest false-hit rate of any threshold with >= 20
hits; at or above δ, more pairs of this traffic cannot certify δ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ltt import counts_at, plan_sequence, rejection_limit, threshold_grid

LIKELY = 0.5
GROWTH = 1.5
MAX_FACTOR = 200


@dataclass(frozen=True)
class PairsNeeded:
    """Labeled pairs in all that would likely certify δ (None: not within 200x the given)."""

    pairs: int | None
    given: int
    chance: float | None  # share of simulated runs at ``pairs`` that certify
    floor_rate: float


def floor_rate(scores: np.ndarray, labels: np.ndarray, min_hits: int = 20) -> float:
    """Lowest false-hit rate among thresholds with at least ``min_hits`` hits."""
    grid = threshold_grid(np.asarray(scores, np.float64), 400)
    hits, wrong = counts_at(np.asarray(scores, np.float64), np.asarray(labels), grid)
    rates = wrong[hits >= min_hits] / hits[hits >= min_hits]
    return float(rates.min()) if len(rates) else 1.0


def certify_chance(
    scores: np.ndarray,
    labels: np.ndarray,
    test_size: int,
    delta: float,
    alpha: float,
    *,
    draws: int = 200,
    seed: int = 0,
) -> float:
    """Share of simulated testing parts of ``test_size`` pairs (drawn from these) on which
    the sequence planned for that size certifies something (its first test rejects)."""
    plan = plan_sequence(scores, labels, test_size, delta, alpha, draws=30)
    if not len(plan.thresholds):
        return 0.0
    hits, wrong = counts_at(scores, labels, plan.thresholds[:1])
    share, rate = hits[0] / len(scores), (wrong[0] / hits[0] if hits[0] else 1.0)
    rng = np.random.default_rng(seed)
    h = rng.binomial(test_size, share, draws)
    k = rng.binomial(h, rate)
    return float(np.mean(k <= rejection_limit(h, delta, alpha)))


def simulate_needed(
    scores: np.ndarray,
    labels: np.ndarray,
    given: int,
    test_share: float,
    delta: float,
    alpha: float,
) -> PairsNeeded:
    """The estimate described in the module docstring, for one scorer's calibration scores."""
    scores, labels = np.asarray(scores, np.float64), np.asarray(labels)
    floor = floor_rate(scores, labels)
    if floor >= delta or given < 1:
        return PairsNeeded(None, given, None, floor)
    total = float(given)
    while total <= given * MAX_FACTOR:
        total *= GROWTH
        n = int(np.ceil(total))
        chance = certify_chance(scores, labels, max(1, round(n * test_share)), delta, alpha)
        if chance >= LIKELY:
            return PairsNeeded(n, given, chance, floor)
    return PairsNeeded(None, given, None, floor)
