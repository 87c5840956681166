"""Seeded, stratified splits of labeled pairs (the halves and parts calibration uses)."""

from __future__ import annotations

import numpy as np


def stratified_split(
    labels: np.ndarray, seed: int = 0, fraction: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(first, rest)``: ``fraction`` of each label's pairs go to ``first``."""
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    first: list[np.ndarray] = []
    rest: list[np.ndarray] = []
    for value in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == value))
        cut = round(len(members) * fraction)
        first.append(members[:cut])
        rest.append(members[cut:])
    return np.sort(np.concatenate(first)), np.sort(np.concatenate(rest))
