"""The achievable frontier: for each δ, what each scorer can guarantee on these labels.

The pairs are split (:func:`~semcache.eval.parts.split_parts`) into a fitting and a testing
part; every candidate scorer (``cosine:<embedder>``, ``guard:<embedder>``, ``learned``,
``learned+guard``) is ranked per δ on the fitting part alone (:func:`predicted_recall`; a
learned scorer must beat the best fixed one by :data:`LEARNED_MARGIN`), α is split over the
ranking (Bonferroni), and each scorer's walk is tested on the testing part. Every certified
cell holds simultaneously, so the chosen one may be the one with most testing recall. With
nothing certified, :mod:`semcache.eval.needed` says how many pairs would likely do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .ltt import TestSequence, WalkResult, counts_at, fixed_sequence, plan_sequence
from .needed import PairsNeeded, simulate_needed
from .parts import (
    BAND_MARGIN,
    BAND_QUANTILE,
    DEFAULT_FIT_FRACTION,
    LearnedParts,
    Outcome,
    Parts,
    ScoredParts,
    band_floor,
    guarded,
    learned_parts,
    outcome,
    scored_parts,
    split_parts,
)

__all__ = [
    "BAND_MARGIN",
    "BAND_QUANTILE",
    "DEFAULT_FIT_FRACTION",
    "DELTAS",
    "FIRST_SHARE",
    "LEARNED_MARGIN",
    "Certified",
    "Frontier",
    "LearnedParts",
    "Outcome",
    "Parts",
    "ScoredParts",
    "band_floor",
    "certify",
    "choose",
    "frontier",
    "guarded",
    "hindsight",
    "learned_parts",
    "outcome",
    "predicted_recall",
    "rank",
    "scored_parts",
    "split_parts",
]

DELTAS = (0.01, 0.02, 0.05, 0.10, 0.20)

FIRST_SHARE: float | None = 0.8
"""Share of α the first-ranked scorer's walk tests at, the others sharing the rest; None:
every scorer at α/k. On the 8 dev sets (8 seeds, 1,000 and 3,000 pairs, a tenth fitting)
equal shares certified no more in all (at 3,000: 1.88 / 4.12 / 6.88 sets at δ = 5 / 10 /
20% against 2.25 / 4.12 / 6.62; at 1,000: 0.25 / 3.25 / 5.38 against 0.38 / 3.38 / 5.62)."""

LEARNED_MARGIN = 0.02
"""Predicted certified recall (fitting part) a learned scorer must add over the best fixed
scorer to rank above it."""


@dataclass(frozen=True)
class Certified:
    """One scorer at one δ: its level, the walk, and its threshold on the testing part and
    (with a holdout) on the held-out part."""

    scorer: str
    delta: float
    alpha: float
    plan: TestSequence
    walk: WalkResult
    testing: Outcome | None
    held_out: Outcome | None

    @property
    def threshold(self) -> float | None:
        return self.walk.threshold

    @property
    def holds(self) -> bool | None:
        """Held-out false hits at most δ x hits (None: no holdout or nothing certified)."""
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
        return Certified(scored.name, delta, alpha, plan, walk, None, None)
    held = None
    if len(parts.held_out):
        held = outcome(scored.held_out, labels[parts.held_out], walk.threshold)
    return Certified(
        scored.name,
        delta,
        alpha,
        plan,
        walk,
        outcome(scored.test, labels[parts.test], walk.threshold),
        held,
    )


def predicted_recall(plan: TestSequence, labels: np.ndarray, parts: Parts) -> float:
    """The ranking key, from the fitting part alone (no testing labels): the recall the
    planned walk certifies on average in simulation (:func:`plan_sequence`)."""
    positives = max(int((labels[parts.fit] == 1).sum()), 1)
    scale = len(parts.test) / max(len(parts.fit), 1)
    return plan.expected_true_hits / (positives * scale)


def rank(
    scorers: Sequence[ScoredParts],
    labels: np.ndarray,
    parts: Parts,
    delta: float,
    alpha: float,
    *,
    margin: float = LEARNED_MARGIN,
) -> tuple[list[str], dict[str, float]]:
    """Scorer names, most promising first, and each one's predicted recall (fitting part
    only). A learned scorer that does not beat the best fixed one by ``margin`` ranks after
    every fixed scorer; of two with the same prediction, one under the guard's veto first."""
    keys = {}
    for s in scorers:
        plan = plan_sequence(s.fit, labels[parts.fit], len(parts.test), delta, alpha)
        keys[s.name] = predicted_recall(plan, labels, parts)
    kinds = {s.name: s.kind for s in scorers}
    vetoes = {s.name: s.vetoes for s in scorers}
    fixed = [keys[n] for n in keys if kinds[n] != "learned"]
    best_fixed = max(fixed, default=-1.0)

    def order(name: str) -> tuple[int, float, bool]:
        demoted = kinds[name] == "learned" and keys[name] < best_fixed + margin
        # on an exact tie (the veto removed nothing the plan counted on), the scorer under
        # the guard's veto first: the fitting part cannot tell them apart, and the pairs a
        # veto removes are the ones the guard finds differing
        return (0 if demoted else 1, keys[name], vetoes[name])

    return sorted(keys, key=order, reverse=True), keys


def levels(
    ranked: Sequence[str], alpha: float, first_share: float | None = FIRST_SHARE
) -> dict[str, float]:
    """α per scorer (Bonferroni: the levels sum to α); equal when ``first_share`` is None."""
    if len(ranked) == 1:
        return {ranked[0]: alpha}
    if first_share is None:
        return {name: alpha / len(ranked) for name in ranked}
    rest = alpha * (1.0 - first_share) / (len(ranked) - 1)
    return {name: alpha * first_share if i == 0 else rest for i, name in enumerate(ranked)}


def choose(
    scorers: Sequence[ScoredParts], labels: np.ndarray, parts: Parts, delta: float, alpha: float
) -> str:
    """The scorer the fitting part ranks first at δ."""
    return rank(scorers, labels, parts, delta, alpha)[0][0]


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
    """Every scorer at every δ, the ranking and choice per δ, and, where nothing was
    certified, the labeled pairs the first-ranked scorer would likely need."""

    deltas: tuple[float, ...]
    alpha: float
    parts: Parts
    rows: dict[tuple[str, float], Certified]
    chosen: dict[float, str]
    ranked: dict[float, tuple[str, ...]]
    predicted: dict[tuple[str, float], float]
    needed: dict[float, PairsNeeded]
    total_pairs: int

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
    first_share: float | None = FIRST_SHARE,
    estimate_needed: bool = True,
) -> Frontier:
    """Rank on the fitting part, certify every scorer at its level, choose per δ."""

    labels = np.asarray(labels)
    total = len(labels) if total_pairs is None else total_pairs
    by_name = {s.name: s for s in scorers}
    rows: dict[tuple[str, float], Certified] = {}
    chosen: dict[float, str] = {}
    ranked: dict[float, tuple[str, ...]] = {}
    predicted: dict[tuple[str, float], float] = {}
    needed: dict[float, PairsNeeded] = {}
    for delta in deltas:
        order, keys = rank(scorers, labels, parts, delta, alpha)
        ranked[delta] = tuple(order)
        predicted |= {(name, delta): key for name, key in keys.items()}
        for name, level in levels(order, alpha, first_share).items():
            if level > 0.0:
                rows[(name, delta)] = certify(by_name[name], labels, parts, delta, level)
            else:  # no share of α: this scorer is not tested
                rows[(name, delta)] = Certified(
                    name,
                    delta,
                    0.0,
                    TestSequence(np.empty(0), 0.0, 0.0),
                    WalkResult(None, 0, 0, 0, None, None),
                    None,
                    None,
                )
        certified = [n for n in order if rows[(n, delta)].threshold is not None]
        if certified:
            chosen[delta] = max(certified, key=lambda n: rows[(n, delta)].testing.recall)  # type: ignore[union-attr]
            continue
        chosen[delta] = order[0]
        if estimate_needed:
            first = by_name[order[0]]
            needed[delta] = simulate_needed(
                np.concatenate([first.fit, first.test]),
                np.concatenate([labels[parts.fit], labels[parts.test]]),
                total,
                len(parts.test) / total,
                delta,
                rows[(order[0], delta)].alpha,
            )
    return Frontier(tuple(deltas), alpha, parts, rows, chosen, ranked, predicted, needed, total)
