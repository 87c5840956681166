"""Where a learned score can change the decision, in the cosine the search already computed.

:class:`ScoreBand` marks the cosine interval in which scoring (extra features, extra
embedders) is needed. Below ``lo`` a miss: ``calibrate`` fixes ``lo`` before testing, so the
tested rule is ``cosine >= lo and score >= threshold`` and the guarantee covers the cut. At
or above ``hi`` a hit: no value of the other features inside their declared bounds can pull
the score under the threshold (:func:`saturation_cosine`), an exact worst case, because the
part above ``hi`` skips the guard features and only a proof makes that safe.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from semcache.errors import ConfigError

from .model import BoostedTreesModel, HitModel, LogisticModel, Tree


@dataclass(frozen=True)
class ScoreBand:
    """Cosine interval ``[lo, hi)`` where a candidate is scored; ``hi > 1`` means never skip."""

    lo: float
    hi: float

    def __post_init__(self) -> None:
        if math.isnan(self.lo) or math.isnan(self.hi) or self.lo > self.hi:
            raise ConfigError(f"score band needs lo <= hi, got [{self.lo}, {self.hi})")


def _logit(probability: float) -> float:
    p = min(max(probability, 1e-15), 1.0 - 1e-15)
    return math.log(p / (1.0 - p))


def _logistic_floor(
    model: LogisticModel, primary: int, low: np.ndarray, high: np.ndarray, cosine: float
) -> float:
    weight = model.coef / model.scale
    const = model.intercept - float(weight @ model.mean)
    others = np.delete(np.arange(len(weight)), primary)
    floor = const + float(
        np.minimum(weight[others] * low[others], weight[others] * high[others]).sum()
    )
    w = float(weight[primary])
    return floor + (w * cosine if w >= 0 else w * float(high[primary]))


def _tree_floor(tree: Tree, low: np.ndarray, high: np.ndarray) -> float:
    best = math.inf
    stack = [0]
    while stack:
        node = stack.pop()
        if tree.left[node] < 0:
            best = min(best, float(tree.value[node]))
            continue
        feature, cut = tree.feature[node], tree.threshold[node]
        if low[feature] <= cut:
            stack.append(int(tree.left[node]))
        if high[feature] > cut:
            stack.append(int(tree.right[node]))
    return best


def _trees_floor(
    model: BoostedTreesModel, primary: int, low: np.ndarray, high: np.ndarray, cosine: float
) -> float:
    low = low.copy()
    low[primary] = cosine
    return model.init + model.learning_rate * sum(_tree_floor(t, low, high) for t in model.trees)


def saturation_cosine(
    model: HitModel,
    primary: int,
    threshold: float,
    low: np.ndarray,
    high: np.ndarray,
) -> float:
    """Lowest primary cosine at which every feature row within ``[low, high]`` scores at least
    ``threshold`` (a probability); ``math.inf`` when no cosine up to 1 is enough."""
    floor: Callable[[float], float]
    if isinstance(model, LogisticModel):
        floor = lambda c: _logistic_floor(model, primary, low, high, c)  # noqa: E731
    elif isinstance(model, BoostedTreesModel):
        floor = lambda c: _trees_floor(model, primary, low, high, c)  # noqa: E731
    else:
        return math.inf
    target = _logit(threshold)
    if floor(1.0) < target:
        return math.inf
    lo, hi = -1.0, 1.0
    if floor(lo) >= target:
        return lo
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if floor(mid) >= target else (mid, hi)
    return hi
