"""A threshold on one scorer's scores, certified with a valid guarantee, checked on held-out.

:func:`calibrate` is the single-scorer form of :mod:`semcache.eval.frontier` (``semcache eval
--calibrate``): on seeded stratified halves, Learn-then-Test (:mod:`semcache.eval.ltt`)
certifies the loosest threshold whose false-hit rate is at most δ with probability at least
``confidence``, simultaneously over the thresholds tested; the held-out half reports what it
does. With too few pairs (:func:`hits_needed`) the result is ``threshold=None`` with a
reason, never a guess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from semcache.errors import ConfigError

from .frontier import certify, scored_parts, split_parts
from .ltt import upper_bound
from .metrics import count_hits
from .needed import simulate_needed
from .splits import stratified_split

METHOD = "fixed-sequence binomial (Learn-then-Test)"

__all__ = [
    "METHOD",
    "CalibrationResult",
    "SplitStats",
    "calibrate",
    "hits_needed",
    "split_stats",
    "stratified_split",
]


@dataclass(frozen=True)
class SplitStats:
    """What one threshold does on one split (rates with 95% Wilson intervals)."""

    pairs: int
    hits: int
    true_hits: int
    false_hits: int
    false_hit_rate: float
    false_hit_rate_lo: float
    false_hit_rate_hi: float
    recall: float
    recall_lo: float
    recall_hi: float


class _Common(TypedDict):
    """The fields every :class:`CalibrationResult` of one run shares."""

    target: float
    confidence: float
    method: str
    seed: int
    calibration_pairs: int
    held_out_pairs: int


@dataclass(frozen=True)
class CalibrationResult:
    """The certified threshold (None when none could be) and its evidence.

    ``calibration`` is the testing part of the calibration half (where the test ran) and
    ``bound`` the Clopper–Pearson upper bound there; ``held_out`` the untouched half.
    """

    target: float
    confidence: float
    method: str
    seed: int
    threshold: float | None
    reason: str | None
    calibration_pairs: int
    held_out_pairs: int
    bound: float | None
    calibration: SplitStats | None
    held_out: SplitStats | None

    @property
    def holds(self) -> bool | None:
        """Held-out false hits at most ``target`` x hits (vacuously True with no hits)."""
        if self.held_out is None:
            return None
        return self.held_out.false_hits <= self.target * self.held_out.hits


def split_stats(scores: np.ndarray, labels: np.ndarray, threshold: float) -> SplitStats:
    """Counts and rates of ``threshold`` on the given pairs."""
    table = count_hits(scores, labels, np.array([threshold]))
    return SplitStats(
        pairs=len(scores),
        hits=int(table.hits[0]),
        true_hits=int(table.true_hits[0]),
        false_hits=int(table.false_hits[0]),
        false_hit_rate=float(table.false_hit_rate[0]),
        false_hit_rate_lo=float(table.false_hit_rate_lo[0]),
        false_hit_rate_hi=float(table.false_hit_rate_hi[0]),
        recall=float(table.recall[0]),
        recall_lo=float(table.recall_lo[0]),
        recall_hi=float(table.recall_hi[0]),
    )


def hits_needed(target: float, confidence: float) -> int:
    """Fewest hits (all correct) whose test rejects 'false-hit rate > target'."""
    return math.ceil(math.log(1.0 - confidence) / math.log(1.0 - target))


def calibrate(
    scores: np.ndarray,
    labels: np.ndarray,
    target: float,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    fit_fraction: float = 1 / 3,
    holdout: float = 0.5,
) -> CalibrationResult:
    """Certify a threshold for fixed ``scores`` (a hit when score >= threshold; ``-inf``: never).
    By default half the pairs are held out to check it, since ``eval --calibrate`` is a report.
    """
    if not 0.0 < target < 1.0:
        raise ConfigError(f"target false-hit rate must be in (0, 1), got {target}")
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence}")
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels)
    parts = split_parts(labels, seed, fit_fraction, holdout)
    alpha = 1.0 - confidence
    result = certify(scored_parts("scores", scores, parts), labels, parts, target, alpha)
    calibration_pairs = len(parts.fit) + len(parts.test)
    common: _Common = {
        "target": target,
        "confidence": confidence,
        "method": METHOD,
        "seed": seed,
        "calibration_pairs": calibration_pairs,
        "held_out_pairs": len(parts.held_out),
    }
    if result.threshold is None:
        return CalibrationResult(
            **common,
            threshold=None,
            reason=_reason(scores, labels, parts, result, target, alpha),
            bound=None,
            calibration=None,
            held_out=None,
        )
    t = result.threshold
    return CalibrationResult(
        **common,
        threshold=t,
        reason=None,
        bound=upper_bound(result.walk.false_hits, result.walk.hits, alpha),
        calibration=split_stats(scores[parts.test], labels[parts.test], t),
        held_out=split_stats(scores[parts.held_out], labels[parts.held_out], t)
        if len(parts.held_out)
        else None,
    )


def _reason(scores, labels, parts, result, target: float, alpha: float) -> str:  # type: ignore[no-untyped-def]
    calibration = np.concatenate([parts.fit, parts.test])
    need = simulate_needed(
        scores[calibration],
        labels[calibration],
        len(labels),
        len(parts.test) / len(labels),
        target,
        alpha,
    )
    walk = result.walk
    first = (
        "" if walk.stopped_at is None else f" (the first test, at {walk.stopped_at:.4g}, failed)"
    )
    text = (
        f"no threshold certified at false-hit rate <= {target:g} with {1 - alpha:.0%} "
        f"confidence on {len(parts.test)} testing pairs{first}. Even with no false hit the test "
        f"needs {hits_needed(target, 1 - alpha)} hits."
    )
    if need.pairs is not None:
        text += (
            f" Simulating the same procedure on pairs like these, about {need.pairs} labeled "
            f"pairs in all ({need.pairs - len(labels)} more) would likely certify it."
        )
    elif need.floor_rate >= target:
        text += (
            f" No threshold with >= 20 hits shows a false-hit rate under {target:g} (lowest "
            f"{need.floor_rate:.1%}): more pairs of this traffic will not help; a larger target "
            "or a better scorer would."
        )
    else:
        text += " Even 200x these pairs would likely not certify it."
    return text
