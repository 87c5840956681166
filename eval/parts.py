"""The parts a labeled pair set is cut into, and each candidate scorer's scores on them.

``split_parts`` cuts, seeded and stratified: an optional held-out part (a report only), then a
fitting part (``fit_fraction``) and a testing part (the rest, whose size is the test's power;
docs/calibration.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .ltt import counts_at
from .scorer_fit import FittedScorer, ModelKind, fit_scorer
from .splits import stratified_split

DEFAULT_FIT_FRACTION = 0.2
"""Share of the calibration pairs that fit and plan; the rest tests. A fifth: the
guarantee's power is the count of hits in the testing part, while a model over ~25 features
is fit well by a few hundred pairs (on the dev sets 0.2 certified more than 0.3 or 1/3)."""

DEFAULT_HOLDOUT = 0.0


@dataclass(frozen=True)
class Parts:
    """Indices (into the whole pair set) of the fitting, testing and held-out parts
    (``held_out`` is empty without ``--holdout``)."""

    fit: np.ndarray
    test: np.ndarray
    held_out: np.ndarray


def split_parts(
    labels: np.ndarray,
    seed: int = 0,
    fit_fraction: float = DEFAULT_FIT_FRACTION,
    holdout: float = DEFAULT_HOLDOUT,
) -> Parts:
    """Held-out part (``holdout`` of each label, possibly none), then of the rest the
    fitting part (``fit_fraction``) and the testing part."""
    labels = np.asarray(labels)
    if holdout > 0.0:
        calibration, held_out = stratified_split(labels, seed, 1.0 - holdout)
    else:
        calibration, held_out = np.arange(len(labels)), np.empty(0, dtype=np.int64)
    fit_rel, test_rel = stratified_split(labels[calibration], seed + 1, fit_fraction)
    return Parts(calibration[fit_rel], calibration[test_rel], held_out)


@dataclass(frozen=True)
class ScoredParts:
    """One scorer's scores on the three parts (fitting part: out-of-fold for a learned one).

    ``kind`` is ``cosine``, ``guard``, ``learned`` or a plug-in's kind: the choice keeps a
    learned scorer only when it beats every fixed one on the fitting part by a margin."""

    name: str
    fit: np.ndarray
    test: np.ndarray
    held_out: np.ndarray
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return str(self.extra.get("kind_of", self.name.partition(":")[0]))

    @property
    def vetoes(self) -> bool:
        """Whether a pair the answer guard rejects is never a hit under this scorer."""
        return self.kind == "guard" or "veto" in self.extra


@dataclass(frozen=True)
class Outcome:
    """Counts of one threshold on one part."""

    hits: int
    false_hits: int
    positives: int

    @property
    def recall(self) -> float:
        return (self.hits - self.false_hits) / self.positives if self.positives else 0.0

    @property
    def false_hit_rate(self) -> float:
        return self.false_hits / self.hits if self.hits else 0.0


def outcome(scores: np.ndarray, labels: np.ndarray, threshold: float) -> Outcome:
    hits, wrong = counts_at(np.asarray(scores, np.float64), labels, np.array([threshold]))
    return Outcome(int(hits[0]), int(wrong[0]), int((labels == 1).sum()))


def scored_parts(name: str, scores: np.ndarray, parts: Parts, **extra: object) -> ScoredParts:
    """A fixed (not learned) scorer's scores cut into the three parts."""
    scores = np.asarray(scores, np.float64)
    return ScoredParts(
        name, scores[parts.fit], scores[parts.test], scores[parts.held_out], dict(extra)
    )


def guarded(similarities: np.ndarray, verdicts: np.ndarray) -> np.ndarray:
    """Similarities with guard-rejected pairs at -inf: never a hit."""
    return np.where(np.asarray(verdicts, bool), np.asarray(similarities, np.float64), -np.inf)


GUARD_SUFFIX = "+guard"


def vetoed(scored: ScoredParts, verdicts: np.ndarray, parts: Parts, veto: str) -> ScoredParts:
    """A learned scorer under the answer guard's veto (``learned+guard``): a pair the guard rejects
    is never a hit, whatever the model says. A candidate of its own because a model fit on a few
    hundred pairs cannot make one flag decisive the way a veto is; the cache runs the same veto.
    """
    ok = np.asarray(verdicts, bool)

    def cut(scores: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return np.where(ok[idx], scores, -np.inf)

    return ScoredParts(
        scored.name + GUARD_SUFFIX,
        cut(scored.fit, parts.fit),
        cut(scored.test, parts.test),
        cut(scored.held_out, parts.held_out),
        scored.extra | {"veto": veto},
    )


BAND_PROBABILITY = 0.5
BAND_QUANTILE = 0.01
BAND_MARGIN = 0.02


def band_floor(primary: np.ndarray, out_of_fold: np.ndarray) -> float:
    """The cosine under which a learned scorer's candidates are misses without scoring.

    From the fitting part only: the 1st percentile of the primary cosine among pairs the
    out-of-fold model scores at least 0.5, less 0.02. The learned scores every later step
    sees are already cut at this floor, so the guarantee covers the cut."""
    likely = primary[out_of_fold >= BAND_PROBABILITY]
    if not len(likely):
        return -1.0
    return max(-1.0, float(np.quantile(likely, BAND_QUANTILE)) - BAND_MARGIN)


@dataclass(frozen=True)
class LearnedParts:
    """A learned scorer's scores on the parts plus what saving it needs."""

    scored: ScoredParts
    fitted: FittedScorer
    embedders: tuple[str, ...]
    primary: str
    band_lo: float


def learned_parts(
    name: str,
    rows: np.ndarray,
    labels: np.ndarray,
    parts: Parts,
    embedders: Sequence[str],
    primary: str,
    *,
    kind: ModelKind | Literal["auto"] = "auto",
    seed: int = 0,
) -> LearnedParts:
    """Fit on the fitting part; score the fitting part out of fold and the others with the
    refit model; cut every score below the band floor (cosine of ``primary``)."""
    fitted = fit_scorer(rows[parts.fit], labels[parts.fit], kind, seed)
    column = list(embedders).index(primary)
    lo = band_floor(rows[parts.fit, column], fitted.out_of_fold)

    def cut(scores: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return np.where(rows[idx, column] >= lo, scores, -np.inf)

    # the plan reads the fitting part's out-of-fold ranking (honest about labels) on the
    # refit model's scale (its in-sample scores, rank for rank), so that a planned threshold
    # cuts the testing part's refit scores at the hit share the plan expected
    in_sample = np.sort(fitted.model.predict(rows[parts.fit]))
    ranks = np.argsort(np.argsort(fitted.out_of_fold, kind="stable"), kind="stable")
    scored = ScoredParts(
        name,
        cut(in_sample[ranks], parts.fit),
        cut(fitted.model.predict(rows[parts.test]), parts.test),
        cut(fitted.model.predict(rows[parts.held_out]), parts.held_out),
        {"kind": fitted.model.kind, "kind_of": "learned", "cv_ap": fitted.cv_average_precision},
    )
    return LearnedParts(scored, fitted, tuple(embedders), primary, lo)
