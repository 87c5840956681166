"""Fitting a learned hit scorer on labeled pairs (scikit-learn), exported as plain numbers.

Logistic regression and gradient-boosted trees are compared by 5-fold cross-validated
average precision (it weighs the high-score end where a cache operates); under
:data:`TREES_MIN_PAIRS` ``auto`` fits logistic regression only. The out-of-fold
probabilities are what the threshold planner sees, so the plan is not fooled by in-sample
optimism; the model that ships is refit on all the fitting pairs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from semcache.errors import ConfigError
from semcache.scoring.model import BoostedTreesModel, HitModel, LogisticModel, Tree

ModelKind = Literal["logistic", "boosted-trees"]
KINDS: tuple[ModelKind, ...] = ("logistic", "boosted-trees")

TREES_MIN_PAIRS = 1000
"""Fewest fitting pairs with which ``auto`` lets the trees compete. Below it ``auto`` fits
logistic regression only: with a few hundred pairs, 200 trees chosen by a 5-fold
cross-validation can win on the fold noise and lose on new pairs (figures in
docs/benchmarks.md)."""


def fit_logistic(rows: np.ndarray, labels: np.ndarray, seed: int = 0) -> LogisticModel:
    from sklearn.linear_model import LogisticRegression

    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale < 1e-12] = 1.0
    clf = LogisticRegression(C=1.0, max_iter=5000, random_state=seed)
    clf.fit((rows - mean) / scale, labels)
    return LogisticModel(
        coef=clf.coef_[0].astype(np.float64),
        intercept=float(clf.intercept_[0]),
        mean=mean,
        scale=scale,
    )


def fit_boosted(rows: np.ndarray, labels: np.ndarray, seed: int = 0) -> BoostedTreesModel:
    from sklearn.ensemble import GradientBoostingClassifier

    clf = GradientBoostingClassifier(
        n_estimators=200,
        max_depth=3,
        learning_rate=0.05,
        subsample=0.8,
        min_samples_leaf=20,
        random_state=seed,
    )
    clf.fit(rows, labels)
    trees = tuple(
        Tree(
            feature=t.tree_.feature.astype(np.int64),
            threshold=t.tree_.threshold.astype(np.float64),
            left=t.tree_.children_left.astype(np.int64),
            right=t.tree_.children_right.astype(np.int64),
            value=t.tree_.value[:, 0, 0].astype(np.float64),
        )
        for t in clf.estimators_[:, 0]
    )
    partial = BoostedTreesModel(init=0.0, learning_rate=clf.learning_rate, trees=trees)
    probe = rows[:1]
    init = float(clf.decision_function(probe)[0] - partial.logit(probe)[0])
    return BoostedTreesModel(init=init, learning_rate=clf.learning_rate, trees=trees)


_FITTERS: dict[ModelKind, Callable[[np.ndarray, np.ndarray, int], HitModel]] = {
    "logistic": fit_logistic,
    "boosted-trees": fit_boosted,
}


def out_of_fold(
    kind: ModelKind, rows: np.ndarray, labels: np.ndarray, folds: int = 5, seed: int = 0
) -> np.ndarray:
    """Each pair's probability from a model fit on the other folds (stratified, seeded)."""
    from sklearn.model_selection import StratifiedKFold

    folds = min(folds, int(np.bincount(labels, minlength=2).min()))
    if folds < 2:
        raise ConfigError("fitting a scorer needs at least 2 pairs of each label")
    oof = np.empty(len(labels))
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for train, held in splitter.split(rows, labels):
        oof[held] = _FITTERS[kind](rows[train], labels[train], seed).predict(rows[held])
    return oof


def average_precision(scores: np.ndarray, labels: np.ndarray) -> float:
    from sklearn.metrics import average_precision_score

    return float(average_precision_score(labels, scores))


@dataclass(frozen=True)
class FittedScorer:
    """The shipped model, the out-of-fold probabilities on its fitting pairs, and evidence."""

    model: HitModel
    out_of_fold: np.ndarray
    cv_average_precision: dict[ModelKind, float]
    seconds: float


def fit_scorer(
    rows: np.ndarray,
    labels: np.ndarray,
    kind: ModelKind | Literal["auto"] = "auto",
    seed: int = 0,
) -> FittedScorer:
    """Fit ``kind`` (``auto``: whichever family has the higher cross-validated average
    precision, trees competing only from :data:`TREES_MIN_PAIRS` pairs) on ``rows``;
    return it with its out-of-fold probabilities."""
    if kind != "auto" and kind not in KINDS:
        raise ConfigError(f"unknown scorer model {kind!r}; expected auto, {', '.join(KINDS)}")
    labels = np.asarray(labels).astype(np.int64)
    started = time.perf_counter()
    if kind != "auto":
        kinds: tuple[ModelKind, ...] = (kind,)
    else:
        kinds = KINDS if len(labels) >= TREES_MIN_PAIRS else ("logistic",)
    oofs = {k: out_of_fold(k, rows, labels, seed=seed) for k in kinds}
    ap = {k: average_precision(oof, labels) for k, oof in oofs.items()}
    best = max(ap, key=ap.__getitem__)
    model = _FITTERS[best](rows, labels, seed)
    return FittedScorer(model, oofs[best], ap, time.perf_counter() - started)
