"""Fitted hit models as plain numbers: evaluated with numpy, saved as JSON.

``logistic`` (standardise, dot product, sigmoid) and ``boosted-trees`` (scikit-learn's
gradient-boosted trees exported node by node), both fit by ``semcache calibrate``. JSON, not
pickle: loading a pickle runs arbitrary code, and a scorer file is configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol, cast

import numpy as np

from semcache.errors import ConfigError


class HitModel(Protocol):
    """A fitted model: a probability per feature row."""

    @property
    def kind(self) -> str:
        """The family's name in a scorer file (``logistic``, ``boosted-trees``)."""
        ...

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Probability (0..1) that one answer serves both texts, one per row."""
        ...

    def to_json(self) -> dict[str, Any]: ...


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return cast(np.ndarray, 1.0 / (1.0 + np.exp(-np.clip(z, -500.0, 500.0))))


@dataclass(frozen=True)
class LogisticModel:
    """``sigmoid(((rows - mean) / scale) @ coef + intercept)``."""

    coef: np.ndarray
    intercept: float
    mean: np.ndarray
    scale: np.ndarray
    kind: str = "logistic"

    def logit(self, rows: np.ndarray) -> np.ndarray:
        standard = (np.atleast_2d(rows) - self.mean) / self.scale
        return cast(np.ndarray, standard @ self.coef + self.intercept)

    def predict(self, rows: np.ndarray) -> np.ndarray:
        return _sigmoid(self.logit(rows))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "coef": self.coef.tolist(),
            "intercept": float(self.intercept),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], width: int) -> LogisticModel:
        model = cls(
            coef=_vector(data, "coef", width),
            intercept=float(data["intercept"]),
            mean=_vector(data, "mean", width),
            scale=_vector(data, "scale", width),
        )
        if np.any(model.scale <= 0):
            raise ConfigError("logistic model: every 'scale' must be > 0")
        return model


@dataclass(frozen=True)
class Tree:
    """One regression tree in scikit-learn's array layout (a leaf has ``left == -1``).

    Row ``x`` goes left at node ``i`` when ``x[feature[i]] <= threshold[i]``.
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray

    @cached_property
    def _lists(self) -> tuple[list[int], list[float], list[int], list[int], list[float]]:
        return (
            self.feature.tolist(),
            self.threshold.tolist(),
            self.left.tolist(),
            self.right.tolist(),
            self.value.tolist(),
        )

    def apply_one(self, row: list[float]) -> float:
        """One row, in plain Python: ~100x faster than numpy for the lookup path."""
        feature, threshold, left, right, value = self._lists
        node = 0
        while left[node] >= 0:
            node = left[node] if row[feature[node]] <= threshold[node] else right[node]
        return value[node]

    def apply(self, rows: np.ndarray) -> np.ndarray:
        node = np.zeros(len(rows), dtype=np.int64)
        active = self.left[node] >= 0
        while active.any():
            at = node[active]
            go_left = rows[active, self.feature[at]] <= self.threshold[at]
            node[active] = np.where(go_left, self.left[at], self.right[at])
            active = self.left[node] >= 0
        return self.value[node]


@dataclass(frozen=True)
class BoostedTreesModel:
    """``sigmoid(init + learning_rate * sum(tree(rows)))``."""

    init: float
    learning_rate: float
    trees: tuple[Tree, ...]
    kind: str = "boosted-trees"

    def logit(self, rows: np.ndarray) -> np.ndarray:
        rows = np.atleast_2d(rows)
        if len(rows) == 1:
            row = rows[0].tolist()
            return np.array(
                [self.init + self.learning_rate * sum(t.apply_one(row) for t in self.trees)]
            )
        total = np.full(len(rows), self.init)
        for tree in self.trees:
            total += self.learning_rate * tree.apply(rows)
        return total

    def predict(self, rows: np.ndarray) -> np.ndarray:
        return _sigmoid(self.logit(rows))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "init": float(self.init),
            "learning_rate": float(self.learning_rate),
            "trees": [
                {
                    "feature": t.feature.tolist(),
                    "threshold": t.threshold.tolist(),
                    "left": t.left.tolist(),
                    "right": t.right.tolist(),
                    "value": t.value.tolist(),
                }
                for t in self.trees
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], width: int) -> BoostedTreesModel:
        trees = []
        for raw in data["trees"]:
            tree = Tree(
                feature=np.asarray(raw["feature"], dtype=np.int64),
                threshold=np.asarray(raw["threshold"], dtype=np.float64),
                left=np.asarray(raw["left"], dtype=np.int64),
                right=np.asarray(raw["right"], dtype=np.int64),
                value=np.asarray(raw["value"], dtype=np.float64),
            )
            if not _consistent(tree, width):
                raise ConfigError("boosted-trees model: a tree's arrays are inconsistent")
            trees.append(tree)
        return cls(
            init=float(data["init"]), learning_rate=float(data["learning_rate"]), trees=tuple(trees)
        )


def _consistent(tree: Tree, width: int) -> bool:
    """Equal-length arrays, and every inner node names a feature and two nodes that exist
    (a crafted file must not index out of range); children come after their parent, as in
    scikit-learn's depth-first layout, so a walk always ends at a leaf."""
    nodes = len(tree.left)
    if not nodes or any(
        len(a) != nodes for a in (tree.feature, tree.threshold, tree.right, tree.value)
    ):
        return False
    inner = np.flatnonzero(tree.left >= 0)
    children = np.concatenate([tree.left[inner], tree.right[inner]])
    return bool(
        np.all((tree.feature[inner] >= 0) & (tree.feature[inner] < width))
        and np.all(children >= 0)
        and np.all(children < nodes)
        and np.all(tree.left[inner] > inner)
        and np.all(tree.right[inner] > inner)
    )


def _vector(data: dict[str, Any], key: str, width: int) -> np.ndarray:
    value = np.asarray(data[key], dtype=np.float64)
    if value.shape != (width,):
        raise ConfigError(f"logistic model: {key!r} has shape {value.shape}, expected ({width},)")
    return value


def model_from_json(data: dict[str, Any], width: int) -> HitModel:
    """The model a scorer file's ``model`` object describes, for rows of ``width`` features."""
    kind = data.get("kind")
    try:
        if kind == "logistic":
            return LogisticModel.from_json(data, width)
        if kind == "boosted-trees":
            return BoostedTreesModel.from_json(data, width)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"scorer model of kind {kind!r} is malformed: {exc}") from exc
    raise ConfigError(f"unknown scorer model kind {kind!r}; expected 'logistic' or 'boosted-trees'")
