"""Evaluation harness: how often would a cache with this embedder serve a wrong answer?

Load labeled pairs (:func:`load_pairs`), sweep similarity thresholds (:func:`evaluate`,
:func:`sweep`), pick a threshold with a confidence bound (:func:`calibrate`), write reports.
The ``semcache eval`` / ``semcache calibrate`` commands are :func:`semcache.eval.cli.eval_main`
and :func:`semcache.eval.calibrate_cli.calibrate_main`. Plotting needs the ``eval`` extra
(matplotlib).
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
