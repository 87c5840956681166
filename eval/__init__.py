"""Evaluation harness: how often would a cache with this embedder serve a wrong answer?

Load labeled pairs (:func:`load_pairs`), sweep thresholds (:func:`evaluate`, :func:`sweep`),
certify a threshold (:func:`calibrate`), write reports. Plotting needs the ``eval`` extra.
"""

from semcache.eval.calibrate import CalibrationResult, calibrate
from semcache.eval.data import Columns, PairDataError, PairSet, load_pairs
from semcache.eval.metrics import (
    OperatingPoint,
    PRCurve,
    ThresholdTable,
    count_hits,
    upper_bound,
    wilson_interval,
)
from semcache.eval.persist import save_threshold
from semcache.eval.similarity import pair_similarities
from semcache.eval.sweep import (
    SweepResult,
    effective_scores,
    evaluate,
    sweep,
    sweep_verifiers,
    threshold_grid,
)

__all__ = [
    "CalibrationResult",
    "Columns",
    "OperatingPoint",
    "PRCurve",
    "PairDataError",
    "PairSet",
    "SweepResult",
    "ThresholdTable",
    "calibrate",
    "count_hits",
    "effective_scores",
    "evaluate",
    "load_pairs",
    "pair_similarities",
    "save_threshold",
    "sweep",
    "sweep_verifiers",
    "threshold_grid",
    "upper_bound",
    "wilson_interval",
]
