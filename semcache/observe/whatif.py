"""The dashboard's what-if: what each threshold would do on the labeled pairs, and the
threshold ``semcache calibrate --labels`` would certify from them.

The rows are the cache's recorded labels (feedback, shadow verdicts, near misses an
operator labeled), read as ``calibrate --labels`` reads its file: the fallback lane's rows
left out (their cosine is on another scale), thinned to an equal-probability sample, then
walked with Learn-then-Test from the served threshold (:func:`walk_thresholds`, the same
code, the same defaults). The per-threshold rows are on the labeled pairs, not on all
traffic: the share of them a threshold serves, and the wrong answers among those (95%
Wilson interval).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from semcache.tuning.records import LabeledPair, Source

#: The most the certified threshold may move from the served one (``calibrate --max-change``).
MAX_CHANGE = 0.15
#: Thresholds shown: the served one, ``ABOVE`` steps over it and ``BELOW`` under it (as far
#: as the certified one may move), ``STEP`` apart, and the certified one.
STEP = 0.01
ABOVE = 5
BELOW = 15


@dataclass(frozen=True, slots=True)
class ThresholdRow:
    """What ``threshold`` does on the labeled pairs (rates None when it serves none)."""

    threshold: float
    served: float
    hits: int
    wrong: int
    wrong_rate: float | None
    wrong_low: float | None
    wrong_high: float | None


@dataclass(frozen=True, slots=True)
class WhatIf:
    """The rows, the certified threshold (None: none certified on these labels), and what
    the certificate is for: wrong-answer rate <= ``target`` at ``confidence``."""

    current: float
    pairs: int
    rows: tuple[ThresholdRow, ...]
    certified: float | None
    target: float
    confidence: float
    left_out: int


def what_if(
    pairs: Sequence[LabeledPair],
    current: float,
    *,
    target: float,
    confidence: float = 0.95,
    seed: int = 0,
) -> WhatIf:
    """The what-if of ``pairs`` around the served threshold ``current``."""
    from semcache.eval.calibrate import hits_needed, split_stats
    from semcache.eval.recalibrate import (
        LabeledScores,
        Recorded,
        primary_lane,
        thin,
        walk_thresholds,
    )

    recorded = [
        Recorded(
            similarity=float(p.similarity),
            label=p.label,
            probability=p.sample_probability,
            count=1,
            feedback=p.source is Source.FEEDBACK,
            routed_to=p.routed_to,
        )
        for p in pairs
        if p.similarity is not None
    ]
    kept, routed = primary_lane(recorded)
    kept = thin(kept, np.random.default_rng(seed))
    sims = np.asarray([r.similarity for r in kept], dtype=np.float64)
    labels = np.asarray([r.label for r in kept], dtype=np.int64)
    certified = None
    if len(kept) >= hits_needed(target, confidence):
        walk, _ = walk_thresholds(
            LabeledScores(sims, labels, {}), current, target, 1.0 - confidence, seed, MAX_CHANGE
        )
        certified = walk.threshold
    grid = {round(current + STEP * k, 6) for k in range(ABOVE, -BELOW - 1, -1)}
    grid |= {current} | ({certified} if certified is not None else set())
    rows = []
    for threshold in sorted((t for t in grid if 0.0 <= t <= 1.0), reverse=True):
        stats = split_stats(sims, labels, threshold)
        rows.append(
            ThresholdRow(
                threshold=threshold,
                served=stats.hits / stats.pairs if stats.pairs else 0.0,
                hits=stats.hits,
                wrong=stats.false_hits,
                wrong_rate=_rate(stats.false_hit_rate),
                wrong_low=_rate(stats.false_hit_rate_lo),
                wrong_high=_rate(stats.false_hit_rate_hi),
            )
        )
    return WhatIf(
        current=current,
        pairs=len(kept),
        rows=tuple(rows),
        certified=certified,
        target=target,
        confidence=confidence,
        left_out=sum(routed.values()),
    )


def _rate(value: float) -> float | None:
    return None if math.isnan(value) else value
