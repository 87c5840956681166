"""Threshold sweeps: what a cache with a given embedder (and verifier) would serve, and how
often it would be wrong.

A pair is a hit at ``t`` when its cosine is ``>= t`` and the verifier (asked once per pair)
accepts it; rejections become the score ``-inf``. Similarities stay float32 and are compared
with the float64 threshold as the cache compares a store's score. Headline per set and δ:
:func:`semcache.eval.metrics.recall_at_false_hit_rate`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from semcache.embedders.base import Embedder
from semcache.guard import HitVerifier

from .data import PairSet
from .metrics import OperatingPoint, PRCurve, ThresholdTable, best_f1, count_hits, pr_curve
from .metrics import recall_at_false_hit_rate as _recall_at
from .similarity import DEFAULT_CHUNK_SIZE, Progress, pair_similarities

NO_VERIFIER = "none"
DEFAULT_DELTAS: tuple[float, ...] = (0.01, 0.02, 0.05)


def threshold_grid(start: float, stop: float, step: float) -> np.ndarray:
    """``start, start + step, ..., stop`` inclusive, rounded to the step's decimals.

    Rounding keeps 0.95 exactly 0.95 rather than 0.9500000000000001, so "similarity >= 0.95"
    means what it says.
    """
    if step <= 0 or stop < start:
        raise ValueError(f"bad threshold grid {start}:{stop}:{step}")
    count = int(np.floor((stop - start) / step + 1e-9)) + 1
    decimals = max(0, -int(np.floor(np.log10(step))) + 2)
    return np.round(start + step * np.arange(count), decimals)


DEFAULT_THRESHOLDS = threshold_grid(0.90, 0.99, 0.01)


@dataclass(frozen=True)
class SweepResult:
    """One dataset x embedder x verifier: the threshold table and the headline figures."""

    dataset: str
    embedder: str
    verifier: str
    pairs: int
    vetoed: int
    table: ThresholdTable
    curve: PRCurve
    best_f1: OperatingPoint | None
    recall_at: dict[float, OperatingPoint | None]


def verifier_decisions(verifier: HitVerifier, pairs: PairSet) -> np.ndarray:
    """``verifier.verify(text_a, text_b)`` for every pair, as a bool array."""
    return np.fromiter(
        (verifier.verify(a, b) for a, b in zip(pairs.text_a, pairs.text_b, strict=True)),
        dtype=bool,
        count=len(pairs),
    )


def effective_scores(similarities: np.ndarray, decisions: np.ndarray | None) -> np.ndarray:
    """Similarities with every vetoed pair set to ``-inf`` (never a hit)."""
    scores = np.asarray(similarities, dtype=np.float64)
    return scores if decisions is None else np.where(decisions, scores, -np.inf)


def sweep(
    similarities: np.ndarray,
    labels: np.ndarray,
    *,
    dataset: str,
    embedder: str,
    verifier: str = NO_VERIFIER,
    decisions: np.ndarray | None = None,
    thresholds: np.ndarray = DEFAULT_THRESHOLDS,
    deltas: Iterable[float] = DEFAULT_DELTAS,
    confidence: float = 0.95,
) -> SweepResult:
    """Sweep precomputed similarities (and optional verifier decisions) over ``thresholds``."""
    scores = effective_scores(similarities, decisions)
    curve = pr_curve(scores, labels)
    return SweepResult(
        dataset=dataset,
        embedder=embedder,
        verifier=verifier,
        pairs=len(scores),
        vetoed=0 if decisions is None else int((~decisions).sum()),
        table=count_hits(scores, labels, thresholds, confidence),
        curve=curve,
        best_f1=best_f1(curve),
        recall_at={delta: _recall_at(curve, delta) for delta in deltas},
    )


def sweep_verifiers(
    pairs: PairSet,
    similarities: np.ndarray,
    *,
    embedder: str,
    verifiers: Sequence[HitVerifier] = (),
    decisions: dict[str, np.ndarray] | None = None,
    thresholds: np.ndarray = DEFAULT_THRESHOLDS,
    deltas: Iterable[float] = DEFAULT_DELTAS,
    confidence: float = 0.95,
) -> list[SweepResult]:
    """The no-verifier baseline, then one sweep per verifier.

    ``decisions`` caches each verifier's answers by name; missing ones are computed and
    added, so a caller sweeping several embedders asks each verifier once per pair.
    """
    decisions = {} if decisions is None else decisions
    deltas = tuple(deltas)
    results = [
        sweep(
            similarities,
            pairs.labels,
            dataset=pairs.name,
            embedder=embedder,
            thresholds=thresholds,
            deltas=deltas,
            confidence=confidence,
        )
    ]
    for verifier in verifiers:
        if verifier.name not in decisions:
            decisions[verifier.name] = verifier_decisions(verifier, pairs)
        results.append(
            sweep(
                similarities,
                pairs.labels,
                dataset=pairs.name,
                embedder=embedder,
                verifier=verifier.name,
                decisions=decisions[verifier.name],
                thresholds=thresholds,
                deltas=deltas,
                confidence=confidence,
            )
        )
    return results


def evaluate(
    pairs: PairSet,
    embedder: Embedder,
    *,
    verifiers: Sequence[HitVerifier] = (),
    thresholds: np.ndarray = DEFAULT_THRESHOLDS,
    deltas: Iterable[float] = DEFAULT_DELTAS,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: Progress | None = None,
) -> list[SweepResult]:
    """Embed ``pairs`` with ``embedder`` and sweep the baseline and each verifier."""
    similarities = pair_similarities(pairs, embedder, chunk_size=chunk_size, progress=progress)
    return sweep_verifiers(
        pairs,
        similarities,
        embedder=embedder.name,
        verifiers=verifiers,
        thresholds=thresholds,
        deltas=deltas,
    )
