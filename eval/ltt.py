"""A threshold with a valid guarantee: Learn-then-Test fixed-sequence testing.

For "hit when score >= t" with false-hit rate R(t) = P(label 0 | score >= t), :func:`certify`
returns a threshold t̂ (or none) with P(R(t̂) <= δ) >= 1 - α over every threshold it looked at.
The calibration half is split into a fitting part (:func:`plan_sequence`: trains the scorer,
fixes thresholds from strict to loose and the start that certifies the most true hits on
average, :func:`simulated_true_hits`) and a testing part (:func:`fixed_sequence`: exact
binomial p-values walked from the start until the first p > α; Angelopoulos et al. 2021,
"Learn then Test"). The sequence depends only on the fitting part, which is independent of
the testing part, so the p-values stay valid; starting at the strictest threshold would end
the walk at once where hits are few. :func:`hits_needed`: the hits a δ needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from semcache.errors import ConfigError


def p_value(false_hits: int, hits: int, delta: float) -> float:
    """P(Binomial(hits, δ) <= false_hits): small when a false-hit rate above δ is unlikely."""
    from scipy.stats import binom  # scipy.stats costs ~1 s to import: only when used

    if hits <= 0:
        return 1.0
    return float(binom.cdf(false_hits, hits, delta))


def counts_at(
    scores: np.ndarray, labels: np.ndarray, thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Hits and false hits at each threshold (a hit when score >= threshold)."""
    order = np.argsort(-scores, kind="stable")
    ranked, wrong = scores[order], (labels[order] == 0).astype(np.int64)
    cum_wrong = np.concatenate([[0], np.cumsum(wrong)])
    hits = np.searchsorted(-ranked, -np.asarray(thresholds), side="right")
    return hits, cum_wrong[hits]


@dataclass(frozen=True)
class TestSequence:
    """Thresholds to test, strict to loose, fixed before the testing part is looked at."""

    thresholds: np.ndarray
    pass_chance: float  # predicted chance that the first test rejects
    expected_true_hits: float  # simulated mean true hits the walk certifies


def threshold_grid(scores: np.ndarray, points: int = 400) -> np.ndarray:
    """Distinct score quantiles of ``scores`` (finite only), from highest to lowest."""
    finite = scores[np.isfinite(scores)]
    if not len(finite):
        return np.empty(0)
    return np.unique(np.quantile(finite, np.linspace(0.0, 1.0, points + 1)))[::-1]


def rejection_limit(hits: np.ndarray, delta: float, alpha: float) -> np.ndarray:
    """Most false hits among ``hits`` that still reject 'rate > δ' at α (-1: none can)."""
    from scipy.stats import binom  # scipy.stats costs ~1 s to import: only when used

    hits = np.asarray(hits, dtype=np.int64)
    limit = binom.ppf(alpha, hits, delta).astype(np.int64)
    limit = np.where(binom.cdf(limit, hits, delta) > alpha, limit - 1, limit)
    return np.where(hits > 0, limit, -1)


def pass_probability(
    fit_hits: np.ndarray, fit_wrong: np.ndarray, test_hits: np.ndarray, delta: float, alpha: float
) -> np.ndarray:
    """Predicted chance the test at each threshold rejects, from the fitting part's counts: a
    Jeffreys posterior on the false-hit rate, a beta-binomial count of the testing part's false
    hits, rejection at :func:`rejection_limit`. A few clean fitting hits give a wide posterior,
    not a sure pass.
    """
    from scipy.stats import betabinom  # scipy.stats costs ~1 s to import: only when used

    test_hits = np.asarray(test_hits, dtype=np.int64)
    limit = rejection_limit(test_hits, delta, alpha)
    a = np.asarray(fit_wrong, np.float64) + 0.5
    b = np.asarray(fit_hits, np.float64) - np.asarray(fit_wrong, np.float64) + 0.5
    chance = betabinom.cdf(limit, np.maximum(test_hits, 1), a, b)
    return np.where(limit >= 0, chance, 0.0)


def simulated_true_hits(
    fit_scores: np.ndarray,
    fit_labels: np.ndarray,
    grid: np.ndarray,
    test_size: int,
    delta: float,
    alpha: float,
    *,
    draws: int = 100,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """For each grid index as the start, the mean true hits a walk from there would certify on a
    testing part of ``test_size`` pairs, simulated by Bayesian-bootstrap resamples of the
    fitting part: a strict start can die at the first bunch of false hits, a loose one at once.
    """
    fit_scores = np.asarray(fit_scores, np.float64)
    fit_labels = np.asarray(fit_labels)
    rng = np.random.default_rng(seed)
    order = np.argsort(-fit_scores, kind="stable")
    rank = np.empty(len(fit_scores), dtype=np.int64)
    rank[order] = np.arange(len(fit_scores))
    wrong_pair = (fit_labels == 0).astype(np.float64)
    # pairs at or above each grid threshold, as a prefix of the score order
    cut = np.searchsorted(-fit_scores[order], -grid, side="right")
    hits = np.empty((draws, len(grid)), dtype=np.int64)
    wrong = np.empty_like(hits)
    for d in range(draws):
        # Bayesian bootstrap: the fitting part's shares are uncertain too, which matters
        # when the testing part is several times larger (a strict threshold's few fitting
        # hits must not be mistaken for a sure share of the testing part)
        weights = rng.dirichlet(np.ones(len(fit_scores)))
        drawn = rng.multinomial(test_size, weights).astype(np.float64)
        counted = np.bincount(rank, weights=drawn, minlength=len(fit_scores) + 1)
        bad = np.bincount(rank, weights=drawn * wrong_pair, minlength=len(fit_scores) + 1)
        hits[d] = np.concatenate([[0], np.cumsum(counted)])[cut].astype(np.int64)
        wrong[d] = np.concatenate([[0], np.cumsum(bad)])[cut].astype(np.int64)
    distinct, where = np.unique(hits, return_inverse=True)
    passes = wrong <= rejection_limit(distinct, delta, alpha)[where.reshape(hits.shape)]
    true_hits = (hits - wrong).astype(np.float64)
    # reach[:, j]: true hits at the last passing index of a walk started at j (0: fails)
    reach = np.zeros((draws, len(grid) + 1))
    following = np.zeros(draws, dtype=bool)
    for j in range(len(grid) - 1, -1, -1):
        reach[:, j] = np.where(
            passes[:, j], np.where(following, reach[:, j + 1], true_hits[:, j]), 0.0
        )
        following = passes[:, j]
    return cast(np.ndarray, reach[:, :-1].mean(axis=0)), passes.mean(axis=0)


SAFE_START = 0.9
"""The walk starts where it passes in at least this share of simulated testing parts (or
as often as any start does): certifying something is worth more to a user than a little
more expected recall bought with a coin flip on certifying nothing."""


def plan_sequence(
    fit_scores: np.ndarray,
    fit_labels: np.ndarray,
    test_size: int,
    delta: float,
    alpha: float,
    *,
    points: int = 400,
    draws: int = 100,
) -> TestSequence:
    """The testing sequence from the fitting part alone: it starts at the grid threshold whose walk
    certifies the most true hits on average (:func:`simulated_true_hits`) among those whose
    first test passes in :data:`SAFE_START` of the simulations, and walks to the loosest.
    """
    fit_scores = np.asarray(fit_scores, dtype=np.float64)
    grid = threshold_grid(fit_scores, points)
    if not len(grid):
        return TestSequence(grid, 0.0, 0.0)
    expected, passing = simulated_true_hits(
        fit_scores, fit_labels, grid, test_size, delta, alpha, draws=draws
    )
    safe = passing >= min(SAFE_START, float(passing.max()))
    start = int(np.argmax(np.where(safe, expected, -1.0)))
    hits, wrong = counts_at(fit_scores, np.asarray(fit_labels), grid[start : start + 1])
    scaled = np.round(hits * test_size / max(len(fit_scores), 1)).astype(np.int64)
    chance = pass_probability(hits, wrong, scaled, delta, alpha)
    return TestSequence(grid[start:], float(chance[0]), float(expected[start]))


@dataclass(frozen=True)
class WalkResult:
    """The loosest threshold whose null was rejected (None: the first test failed)."""

    threshold: float | None
    tested: int
    hits: int
    false_hits: int
    p_value: float | None
    stopped_at: float | None  # the threshold whose test failed (None: sequence exhausted)
    stopped_counts: tuple[int, int] | None = None  # (hits, false hits) where it failed


def fixed_sequence(
    scores: np.ndarray, labels: np.ndarray, sequence: np.ndarray, delta: float, alpha: float
) -> WalkResult:
    """Test ``sequence`` in order on the testing part; stop at the first p-value above α."""
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"target false-hit rate must be in (0, 1), got {delta}")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha}")
    hits, wrong = counts_at(np.asarray(scores, np.float64), np.asarray(labels), sequence)
    chosen: WalkResult = WalkResult(None, 0, 0, 0, None, None)
    for j, threshold in enumerate(sequence):
        p = p_value(int(wrong[j]), int(hits[j]), delta)
        if p > alpha:
            return WalkResult(
                chosen.threshold,
                j + 1,
                chosen.hits,
                chosen.false_hits,
                chosen.p_value,
                float(threshold),
                (int(hits[j]), int(wrong[j])),
            )
        chosen = WalkResult(float(threshold), j + 1, int(hits[j]), int(wrong[j]), p, None)
    return chosen


def upper_bound(false_hits: int, hits: int, alpha: float) -> float:
    """One-sided Clopper–Pearson upper bound on the false-hit rate at level 1 - α."""
    from scipy.stats import beta  # scipy.stats costs ~1 s to import: only when used

    if hits <= 0:
        return 1.0
    if false_hits >= hits:
        return 1.0
    return float(beta.ppf(1.0 - alpha, false_hits + 1, hits - false_hits))


def hits_needed(rate: float, delta: float, alpha: float, cap: int = 10_000_000) -> int | None:
    """Fewest hits at a true false-hit rate ``rate`` whose expected count of false hits
    (rounded down) passes the test at δ; None when ``rate >= δ`` or beyond ``cap``."""
    if rate >= delta:
        return None

    def passes(n: int) -> bool:
        return p_value(math.floor(rate * n), n, delta) <= alpha

    lo, hi = 1, 2
    while not passes(hi):
        lo, hi = hi, hi * 2
        if hi > cap:
            return None
    # p-values are not monotone in n (floor); bisect to the first passing n in a passing run
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    return hi
