"""The achievable frontier: for each δ, what each scorer can guarantee on these labels.

One run over a labeled pair set, as ``semcache calibrate`` does it:

1. split the pairs, seeded and stratified, into a calibration half and an untouched held-out
   half; split the calibration half into a fitting part (``fit_fraction``) and a testing
   part (:mod:`semcache.eval.ltt` says why two parts and what each may see);
2. score every pair with each candidate scorer: ``cosine:<embedder>`` (the similarity
   alone), ``guard:<embedder>`` (the similarity, with pairs the answer guard rejects never
   hits), and ``learned`` (a model over all embedders' cosines, lexical features and the
   guard's per-rule mismatches, fit on the fitting part; :mod:`.scorer_fit`);
3. for each δ and each scorer, plan the test sequence on the fitting part and walk it on
   the testing part (a valid guarantee for that scorer at that δ); then report the held-out
   half at the certified threshold;
4. for each δ, the *chosen* configuration is picked on the fitting part alone (the scorer
   whose planned walk certifies the most recall on average when simulated on resamples of
   the fitting part), before its walk, so choosing does not spend the guarantee. Only the
   chosen one's walk backs the saved threshold; the other rows show what each scorer
   would have given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .ltt import (
    PairsNeeded,
    TestSequence,
    WalkResult,
    counts_at,
    fixed_sequence,
    pairs_needed,
    plan_sequence,
)
from .scorer_fit import FittedScorer, ModelKind, fit_scorer
from .splits import stratified_split

DELTAS = (0.01, 0.02, 0.05, 0.10, 0.20)
DEFAULT_FIT_FRACTION = 1 / 3
"""Share of the calibration half that fits and plans; the rest tests. A third, because the
guarantee's power is the count of hits in the testing part, while a model over ~25
features is fit well by a few hundred pairs."""


@dataclass(frozen=True)
class Parts:
    """Indices (into the whole pair set) of the fitting, testing and held-out parts."""

    fit: np.ndarray
    test: np.ndarray
    held_out: np.ndarray


def split_parts(
    labels: np.ndarray, seed: int = 0, fit_fraction: float = DEFAULT_FIT_FRACTION
) -> Parts:
    calibration, held_out = stratified_split(labels, seed)
    fit_rel, test_rel = stratified_split(labels[calibration], seed + 1, fit_fraction)
    return Parts(calibration[fit_rel], calibration[test_rel], held_out)


@dataclass(frozen=True)
class ScoredParts:
    """One scorer's scores on the three parts (fitting part: out-of-fold for a learned one)."""

    name: str
    fit: np.ndarray
    test: np.ndarray
    held_out: np.ndarray
    extra: dict[str, object] = field(default_factory=dict)


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


@dataclass(frozen=True)
class Certified:
    """One scorer at one δ: the walk, and what its threshold does on the held-out half."""

    scorer: str
    delta: float
    plan: TestSequence
    walk: WalkResult
    testing: Outcome | None
    held_out: Outcome | None

    @property
    def threshold(self) -> float | None:
        return self.walk.threshold

    @property
    def holds(self) -> bool | None:
        """Held-out false hits at most δ x hits (None when no threshold was certified)."""
        if self.held_out is None:
            return None
        return self.held_out.false_hits <= self.delta * self.held_out.hits


def certify(
    scored: ScoredParts,
    labels: np.ndarray,
    parts: Parts,
    delta: float,
    alpha: float,
    plan: TestSequence | None = None,
) -> Certified:
    """Plan on the fitting part (unless ``plan`` is given) and walk it on the testing part."""
    if plan is None:
        plan = plan_sequence(scored.fit, labels[parts.fit], len(parts.test), delta, alpha)
    walk = fixed_sequence(scored.test, labels[parts.test], plan.thresholds, delta, alpha)
    if walk.threshold is None:
        return Certified(scored.name, delta, plan, walk, None, None)
    return Certified(
        scored.name, delta, plan, walk,
        outcome(scored.test, labels[parts.test], walk.threshold),
        outcome(scored.held_out, labels[parts.held_out], walk.threshold),
    )  # fmt: skip


def predicted_recall(plan: TestSequence, labels: np.ndarray, parts: Parts) -> float:
    """The choice key, from the fitting part alone (no testing labels): the recall the
    planned walk certifies on average in simulation (:func:`plan_sequence`)."""
    positives = max(int((labels[parts.fit] == 1).sum()), 1)
    scale = len(parts.test) / max(len(parts.fit), 1)
    return plan.expected_true_hits / (positives * scale)


def choose(
    scorers: Sequence[ScoredParts],
    labels: np.ndarray,
    parts: Parts,
    delta: float,
    alpha: float,
    plans: dict[str, TestSequence] | None = None,
) -> str:
    """The scorer the fitting part predicts to certify the most recall at δ."""
    plans = {} if plans is None else plans
    keys = {}
    for s in scorers:
        plan = plans.get(s.name)
        if plan is None:
            plan = plan_sequence(s.fit, labels[parts.fit], len(parts.test), delta, alpha)
        keys[s.name] = predicted_recall(plan, labels, parts)
    return max(keys, key=keys.__getitem__)


def hindsight(scores: np.ndarray, labels: np.ndarray, delta: float) -> Outcome:
    """The most recall any threshold gives on these pairs with false-hit rate at most δ.
    A ceiling chosen by looking at the answers: never a configuration to ship."""
    scores = np.asarray(scores, np.float64)
    grid = np.unique(scores[np.isfinite(scores)])[::-1]
    hits, wrong = counts_at(scores, labels, grid)
    ok = wrong <= delta * hits
    positives = int((labels == 1).sum())
    if not ok.any():
        return Outcome(0, 0, positives)
    best = int(np.argmax(np.where(ok, hits - wrong, -1)))
    return Outcome(int(hits[best]), int(wrong[best]), positives)


@dataclass(frozen=True)
class Frontier:
    """Every scorer at every δ, the choice per δ, and labeled pairs a failing δ would need."""

    deltas: tuple[float, ...]
    alpha: float
    parts: Parts
    rows: dict[tuple[str, float], Certified]
    chosen: dict[float, str]
    needed: dict[tuple[str, float], PairsNeeded]

    def chosen_result(self, delta: float) -> Certified:
        return self.rows[(self.chosen[delta], delta)]

    @property
    def tightest(self) -> float | None:
        """The smallest δ whose chosen configuration was certified."""
        passing = [d for d in self.deltas if self.chosen_result(d).threshold is not None]
        return min(passing) if passing else None


def frontier(
    scorers: Sequence[ScoredParts],
    labels: np.ndarray,
    parts: Parts,
    *,
    deltas: Sequence[float] = DELTAS,
    alpha: float = 0.05,
    total_pairs: int | None = None,
) -> Frontier:
    """Certify every scorer at every δ; choose per δ on the fitting part."""
    labels = np.asarray(labels)
    rows: dict[tuple[str, float], Certified] = {}
    needed: dict[tuple[str, float], PairsNeeded] = {}
    chosen: dict[float, str] = {}
    total = len(labels) if total_pairs is None else total_pairs
    test_share = len(parts.test) / total
    calibration = np.concatenate([parts.fit, parts.test])
    for delta in deltas:
        plans = {
            s.name: plan_sequence(s.fit, labels[parts.fit], len(parts.test), delta, alpha)
            for s in scorers
        }
        chosen[delta] = choose(scorers, labels, parts, delta, alpha, plans)
        for scored in scorers:
            result = certify(scored, labels, parts, delta, alpha, plans[scored.name])
            rows[(scored.name, delta)] = result
            if result.threshold is None:
                both = np.concatenate([scored.fit, scored.test])
                needed[(scored.name, delta)] = pairs_needed(
                    both, labels[calibration], delta, alpha, test_share
                )
    return Frontier(tuple(deltas), alpha, parts, rows, chosen, needed)


def scored_parts(name: str, scores: np.ndarray, parts: Parts, **extra: object) -> ScoredParts:
    """A fixed (not learned) scorer's scores cut into the three parts."""
    scores = np.asarray(scores, np.float64)
    return ScoredParts(
        name, scores[parts.fit], scores[parts.test], scores[parts.held_out], dict(extra)
    )


def guarded(similarities: np.ndarray, verdicts: np.ndarray) -> np.ndarray:
    """Similarities with guard-rejected pairs at -inf: never a hit."""
    return np.where(np.asarray(verdicts, bool), np.asarray(similarities, np.float64), -np.inf)


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
        {"kind": fitted.model.kind, "cv_ap": fitted.cv_average_precision},
    )
    return LearnedParts(scored, fitted, tuple(embedders), primary, lo)
