"""Seeded splits of labeled pairs: stratified (the halves and parts calibration uses) and
grouped by shared text (the part a fine-tune never trains on)."""

from __future__ import annotations

from collections.abc import Sequence

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


def _same_text(text: str) -> str:
    """Texts that differ only in case or spacing count as one text."""
    return " ".join(text.casefold().split())


def text_groups(text_a: Sequence[str], text_b: Sequence[str]) -> list[list[int]]:
    """Pair indices grouped so that pairs sharing a text, directly or through other pairs,
    are in one group (connected components; texts compared up to case and spacing)."""
    parent: dict[str, str] = {}

    def root(text: str) -> str:
        parent.setdefault(text, text)
        while parent[text] != text:
            parent[text] = parent[parent[text]]
            text = parent[text]
        return text

    for a, b in zip(text_a, text_b, strict=True):
        parent[root(_same_text(a))] = root(_same_text(b))
    groups: dict[str, list[int]] = {}
    for index, a in enumerate(text_a):
        groups.setdefault(root(_same_text(a)), []).append(index)
    return list(groups.values())


def grouped_split(
    text_a: Sequence[str], text_b: Sequence[str], fraction: float, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(rest, held_out)``: about ``fraction`` of the pairs held out, never a text
    on both sides (a model trained on one side has not seen any text of the other).

    Whole groups of :func:`text_groups` go to the held-out side in a seeded order while they
    fit under ``round(fraction * n)`` pairs, so the held-out side may fall a little short.
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must be strictly between 0 and 1, got {fraction}")
    groups = text_groups(text_a, text_b)
    target = round(fraction * len(text_a))
    held_out: list[int] = []
    for group in np.random.default_rng(seed).permutation(len(groups)):
        if len(held_out) + len(groups[group]) <= target:
            held_out.extend(groups[group])
    chosen = np.zeros(len(text_a), dtype=bool)
    chosen[held_out] = True
    return np.flatnonzero(~chosen), np.flatnonzero(chosen)
