"""Hit counting against labels, and confidence intervals on the rates that matter.

A *score* is a cosine; a pair is a hit at ``t`` when ``score >= t`` (the cache's rule), and a
verifier's rejection is ``-inf``. ``false_hit_rate = false_hits / hits`` (NaN with no hits),
``recall = true_hits / positives``, ``fpr = false_hits / negatives``. Intervals are two-sided
Wilson score intervals, since the rates sit near 0 and 1 where the normal one collapses.
Pure numpy over whole arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal, cast

import numpy as np

from semcache.core.intervals import wilson_bounds

BoundMethod = Literal["clopper-pearson", "wilson"]


def _z(tail_probability: float) -> float:
    """Standard normal quantile leaving ``tail_probability`` in the upper tail."""
    return NormalDist().inv_cdf(1.0 - tail_probability)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def _wilson(k: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(n > 0, k / n, 0.0)
    return wilson_bounds(rate, n, z)


def wilson_interval(
    successes: np.ndarray | int, trials: np.ndarray | int, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Wilson score interval ``(lower, upper)`` for ``successes / trials``.

    With no trials the interval is the uninformative ``(0, 1)``.
    """
    _check_confidence(confidence)
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    return _wilson(k, n, _z((1.0 - confidence) / 2.0))


def upper_bound(
    successes: np.ndarray | int,
    trials: np.ndarray | int,
    confidence: float = 0.95,
    method: BoundMethod = "clopper-pearson",
) -> np.ndarray:
    """One-sided upper confidence bound on the rate ``successes / trials`` (1 with no trials).

    ``clopper-pearson`` (default) is exact: coverage at least ``confidence`` for every true
    rate, which "never serve more than δ wrong answers" needs; ``wilson`` is the score bound.
    """
    _check_confidence(confidence)
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    if method == "wilson":
        return _wilson(k, n, _z(1.0 - confidence))[1]
    if method != "clopper-pearson":
        raise ValueError(f"unknown bound method {method!r}: expected 'clopper-pearson' or 'wilson'")
    from scipy.special import betaincinv  # scipy comes with sentence-transformers

    with np.errstate(divide="ignore", invalid="ignore"):
        bound = betaincinv(k + 1.0, np.maximum(n - k, 1.0), confidence)
    return np.where(k >= n, 1.0, bound)


@dataclass(frozen=True)
class ThresholdTable:
    """Counts and rates at each threshold of a sweep; every array is aligned with ``thresholds``."""

    thresholds: np.ndarray
    positives: int
    negatives: int
    hits: np.ndarray
    true_hits: np.ndarray
    false_hits: np.ndarray
    false_hit_rate: np.ndarray
    false_hit_rate_lo: np.ndarray
    false_hit_rate_hi: np.ndarray
    recall: np.ndarray
    recall_lo: np.ndarray
    recall_hi: np.ndarray
    fpr: np.ndarray
    fpr_lo: np.ndarray
    fpr_hi: np.ndarray


def _count_at_least(sorted_scores: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """How many of the ascending ``sorted_scores`` are ``>= t`` for each threshold."""
    return len(sorted_scores) - np.searchsorted(sorted_scores, thresholds, side="left")


def _ratio(numerator: np.ndarray, denominator: np.ndarray | int) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(denominator) > 0, numerator / denominator, np.nan)


def count_hits(
    scores: np.ndarray, labels: np.ndarray, thresholds: np.ndarray, confidence: float = 0.95
) -> ThresholdTable:
    """Hits, true and false hits and their rates (with Wilson intervals) at each threshold."""
    scores = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(labels) == 1
    thresholds = np.asarray(thresholds, dtype=np.float64)
    true_hits = _count_at_least(np.sort(scores[positive]), thresholds)
    false_hits = _count_at_least(np.sort(scores[~positive]), thresholds)
    hits = true_hits + false_hits
    positives = int(positive.sum())
    negatives = len(scores) - positives
    fhr_lo, fhr_hi = wilson_interval(false_hits, hits, confidence)
    recall_lo, recall_hi = wilson_interval(true_hits, positives, confidence)
    fpr_lo, fpr_hi = wilson_interval(false_hits, negatives, confidence)
    return ThresholdTable(
        thresholds=thresholds,
        positives=positives,
        negatives=negatives,
        hits=hits,
        true_hits=true_hits,
        false_hits=false_hits,
        false_hit_rate=_ratio(false_hits, hits),
        false_hit_rate_lo=fhr_lo,
        false_hit_rate_hi=fhr_hi,
        recall=_ratio(true_hits, positives),
        recall_lo=recall_lo,
        recall_hi=recall_hi,
        fpr=_ratio(false_hits, negatives),
        fpr_lo=fpr_lo,
        fpr_hi=fpr_hi,
    )


@dataclass(frozen=True)
class PRCurve:
    """Precision and recall at every distinct finite score, thresholds descending.

    Row ``i`` is the operating point "hit when score >= thresholds[i]".
    """

    thresholds: np.ndarray
    hits: np.ndarray
    true_hits: np.ndarray
    positives: int

    @property
    def false_hits(self) -> np.ndarray:
        return cast(np.ndarray, self.hits - self.true_hits)

    @property
    def precision(self) -> np.ndarray:
        return cast(np.ndarray, self.true_hits / self.hits)

    @property
    def false_hit_rate(self) -> np.ndarray:
        return cast(np.ndarray, self.false_hits / self.hits)

    @property
    def recall(self) -> np.ndarray:
        return _ratio(self.true_hits, self.positives)

    @property
    def f1(self) -> np.ndarray:
        return _ratio(2 * self.true_hits, self.hits + self.positives)


def pr_curve(scores: np.ndarray, labels: np.ndarray) -> PRCurve:
    """The precision-recall curve over all distinct finite scores (vetoed pairs excluded)."""
    scores = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(labels) == 1
    finite = np.isfinite(scores)
    order = np.argsort(-scores[finite], kind="stable")
    ranked = scores[finite][order]
    cumulative_true = np.cumsum(positive[finite][order])
    # the last row of each run of equal scores holds that threshold's counts
    last_of_run = np.append(ranked[1:] != ranked[:-1], True) if len(ranked) else np.array([], bool)
    rows = np.flatnonzero(last_of_run)
    return PRCurve(
        thresholds=ranked[rows],
        hits=rows + 1,
        true_hits=cumulative_true[rows],
        positives=int(positive.sum()),
    )


@dataclass(frozen=True)
class OperatingPoint:
    """One threshold and what it achieves on the pairs it was measured on."""

    threshold: float
    hits: int
    true_hits: int
    false_hits: int
    false_hit_rate: float
    recall: float
    f1: float


def _point(curve: PRCurve, row: int) -> OperatingPoint:
    return OperatingPoint(
        threshold=float(curve.thresholds[row]),
        hits=int(curve.hits[row]),
        true_hits=int(curve.true_hits[row]),
        false_hits=int(curve.false_hits[row]),
        false_hit_rate=float(curve.false_hit_rate[row]),
        recall=float(curve.recall[row]),
        f1=float(curve.f1[row]),
    )


def best_f1(curve: PRCurve) -> OperatingPoint | None:
    """The threshold with the highest F1 (the highest such threshold on ties); None if no hits."""
    if len(curve.thresholds) == 0 or curve.positives == 0:
        return None
    return _point(curve, int(np.nanargmax(curve.f1)))


def recall_at_false_hit_rate(curve: PRCurve, delta: float) -> OperatingPoint | None:
    """The lowest distinct-score threshold whose false-hit rate is at most ``delta`` (the highest
    recall reachable there), or None. An in-sample point estimate: optimistic, unlike
    :mod:`semcache.eval.calibrate`.
    """
    meets = np.flatnonzero(curve.false_hit_rate <= delta)
    if len(meets) == 0:
        return None
    return _point(curve, int(meets[-1]))
