"""Choosing a threshold that keeps the false-hit rate under a target, with a confidence bound.

Procedure (:func:`calibrate`):

1. Split the pairs in half, seeded and stratified by label: a calibration half and a held-out
   half.
2. On the calibration half, for every threshold of a grid (default 0.0000..1.0000 step
   0.0001, cosine similarity, a hit when >= threshold), take the one-sided upper confidence
   bound on the false-hit rate (false hits / hits) — Clopper–Pearson by default, exact and
   never under-covering; Wilson on request. Choose the LOWEST threshold whose bound is at
   most δ: the most hits among thresholds that pass.
3. Report what that threshold does on the held-out half (false-hit rate and recall with 95%
   Wilson intervals) and whether the held-out false-hit rate is at most δ.

The bound holds per threshold, not simultaneously over the grid, and the lowest passing
threshold is the one most likely to pass by luck; the held-out check is the honest measure.
A walk from strict to lenient that stops at the first failure (fixed-sequence testing, as in
Learn-then-Test) would make the guarantee simultaneous, and was tried: on the dev sets it
chose the same thresholds, but one early false hit among the first few dozen hits ends the
walk, and on clean synthetic data (a negative 3.6 sigma out in its tail) it found no
threshold where the per-point rule found one with 668 hits and 2 false. Adjacent grid points
share almost all their hits, so the per-point rule's multiplicity is far smaller than the
grid's size.

The grid is fine because embedders differ in how they spread similarity: multilingual-e5
puts most pairs above 0.95, so a 0.001 step there moves hundreds of hits at once.

Small data: a bound at most δ needs many hits even with zero false hits — Clopper–Pearson at
95% needs at least ln(0.05) / ln(1 - δ) hits (149 for δ = 0.02, 59 for δ = 0.05). With too few
pairs no threshold passes and the result is ``threshold=None`` with a reason, never a guessed
number.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semcache.errors import ConfigError

from .metrics import BoundMethod, count_hits, upper_bound

DEFAULT_GRID = np.round(np.arange(10001) / 10000, 4)
THRESHOLD_KEY = "SEMCACHE_SEMANTIC__THRESHOLD"
NAMESPACE_KEY = "SEMCACHE_SEMANTIC__NAMESPACE_THRESHOLDS"
EMBEDDER_KEY = "SEMCACHE_SEMANTIC__EMBEDDER"


@dataclass(frozen=True)
class SplitStats:
    """What one threshold does on one split (rates with 95% Wilson intervals)."""

    pairs: int
    hits: int
    true_hits: int
    false_hits: int
    false_hit_rate: float
    false_hit_rate_lo: float
    false_hit_rate_hi: float
    recall: float
    recall_lo: float
    recall_hi: float


@dataclass(frozen=True)
class CalibrationResult:
    """The chosen threshold (None when no threshold meets the target) and its evidence."""

    target: float
    confidence: float
    method: BoundMethod
    seed: int
    threshold: float | None
    reason: str | None
    calibration_pairs: int
    held_out_pairs: int
    bound: float | None
    calibration: SplitStats | None
    held_out: SplitStats | None

    @property
    def holds(self) -> bool | None:
        """Held-out false hits at most ``target`` x hits (vacuously True with no hits)."""
        if self.held_out is None:
            return None
        return self.held_out.false_hits <= self.target * self.held_out.hits


def stratified_split(
    labels: np.ndarray, seed: int = 0, fraction: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(calibration, held_out)``: ``fraction`` of each label's pairs go to calibration."""
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    calibration: list[np.ndarray] = []
    held_out: list[np.ndarray] = []
    for value in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == value))
        cut = round(len(members) * fraction)
        calibration.append(members[:cut])
        held_out.append(members[cut:])
    return np.sort(np.concatenate(calibration)), np.sort(np.concatenate(held_out))


def split_stats(scores: np.ndarray, labels: np.ndarray, threshold: float) -> SplitStats:
    """Counts and rates of ``threshold`` on the given pairs."""
    table = count_hits(scores, labels, np.array([threshold]))
    return SplitStats(
        pairs=len(scores),
        hits=int(table.hits[0]),
        true_hits=int(table.true_hits[0]),
        false_hits=int(table.false_hits[0]),
        false_hit_rate=float(table.false_hit_rate[0]),
        false_hit_rate_lo=float(table.false_hit_rate_lo[0]),
        false_hit_rate_hi=float(table.false_hit_rate_hi[0]),
        recall=float(table.recall[0]),
        recall_lo=float(table.recall_lo[0]),
        recall_hi=float(table.recall_hi[0]),
    )


def hits_needed(target: float, confidence: float) -> int:
    """Fewest hits (all correct) whose Clopper–Pearson upper bound is at most ``target``."""
    return math.ceil(math.log(1.0 - confidence) / math.log(1.0 - target))


def choose_threshold(
    scores: np.ndarray,
    labels: np.ndarray,
    target: float,
    *,
    confidence: float = 0.95,
    method: BoundMethod = "clopper-pearson",
    grid: np.ndarray = DEFAULT_GRID,
) -> tuple[float | None, float | None, str | None]:
    """``(threshold, its bound, None)``, or ``(None, None, reason)`` when none passes."""
    table = count_hits(scores, labels, grid)
    bounds = upper_bound(table.false_hits, table.hits, confidence, method)
    passing = np.flatnonzero(bounds <= target)
    if len(passing):
        row = int(passing[0])
        return float(grid[row]), float(bounds[row]), None
    tightest = int(np.argmin(bounds))
    reason = (
        f"no threshold in [{grid[0]:g}, {grid[-1]:g}] has a {confidence:.0%} upper bound on "
        f"the false-hit rate <= {target:g} on {len(scores)} calibration pairs; the tightest is "
        f"threshold {grid[tightest]:g}: {table.false_hits[tightest]} false of "
        f"{table.hits[tightest]} hits, bound {bounds[tightest]:.4f}. Even with no false hits "
        f"the bound needs about {hits_needed(target, confidence)} hits: use more pairs, a "
        f"larger target, or an embedder that separates this traffic better"
    )
    return None, None, reason


def calibrate(
    scores: np.ndarray,
    labels: np.ndarray,
    target: float,
    *,
    confidence: float = 0.95,
    method: BoundMethod = "clopper-pearson",
    seed: int = 0,
    grid: np.ndarray = DEFAULT_GRID,
) -> CalibrationResult:
    """Calibrate on a seeded stratified half of the pairs and check on the other half.

    ``scores`` are cosine similarities (``-inf`` for pairs a verifier rejected).
    """
    if not 0.0 < target < 1.0:
        raise ConfigError(f"target false-hit rate must be in (0, 1), got {target}")
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence}")
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels)
    calibration, held_out = stratified_split(labels, seed)
    threshold, bound, reason = choose_threshold(
        scores[calibration],
        labels[calibration],
        target,
        confidence=confidence,
        method=method,
        grid=grid,
    )
    chosen = threshold is not None
    return CalibrationResult(
        target=target,
        confidence=confidence,
        method=method,
        seed=seed,
        threshold=threshold,
        reason=reason,
        calibration_pairs=len(calibration),
        held_out_pairs=len(held_out),
        bound=bound,
        calibration=split_stats(scores[calibration], labels[calibration], threshold)
        if chosen
        else None,
        held_out=split_stats(scores[held_out], labels[held_out], threshold) if chosen else None,
    )


_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$")


def _env_value(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw


def save_threshold(
    path: str | os.PathLike[str], threshold: float, namespace: str | None = None
) -> None:
    """Write ``threshold`` into the ``.env``-style settings file at ``path``.

    Without ``namespace`` it sets ``SEMCACHE_SEMANTIC__THRESHOLD``; with one it adds or
    replaces that namespace in the JSON of ``SEMCACHE_SEMANTIC__NAMESPACE_THRESHOLDS``,
    keeping the other namespaces. Every other line of the file is kept as it was.
    """
    if not -1.0 <= threshold <= 1.0:
        raise ConfigError(f"threshold {threshold} is not a cosine similarity in [-1, 1]")
    file = Path(path)
    key = THRESHOLD_KEY if namespace is None else NAMESPACE_KEY
    lines, existing = _read_env(file, key)
    if namespace is None:
        new_line = f"{key}={float(threshold)!r}"
    else:
        overrides: dict[str, float] = {}
        if existing:
            raw = _env_value(_ENV_LINE.match(lines[existing[-1]])[2])  # type: ignore[index]
            try:
                overrides = json.loads(raw) if raw else {}
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{file}: {key} is not valid JSON: {raw!r}") from exc
            if not isinstance(overrides, dict):
                raise ConfigError(f"{file}: {key} must be a JSON object, got {raw!r}")
        overrides[namespace] = float(threshold)
        new_line = f"{key}='{json.dumps(overrides, sort_keys=True)}'"
    _write_line(file, lines, existing, new_line)


def save_embedder(path: str | os.PathLike[str], name: str) -> None:
    """Write ``SEMCACHE_SEMANTIC__EMBEDDER=name`` into the ``.env``-style file at ``path``.

    A threshold only means something for the embedder it was calibrated with, so
    ``semcache calibrate`` saves both when it chose among several embedders.
    """
    file = Path(path)
    lines, existing = _read_env(file, EMBEDDER_KEY)
    _write_line(file, lines, existing, f"{EMBEDDER_KEY}={name}")


def _read_env(file: Path, key: str) -> tuple[list[str], list[int]]:
    """The file's lines (none if it does not exist) and the indices of those setting ``key``."""
    lines = file.read_text(encoding="utf-8").splitlines() if file.exists() else []
    existing = [i for i, line in enumerate(lines) if (m := _ENV_LINE.match(line)) and m[1] == key]
    return lines, existing


def _write_line(file: Path, lines: list[str], existing: list[int], new_line: str) -> None:
    """Replace the last of the ``existing`` lines (dropping the others) or append."""
    if existing:
        lines[existing[-1]] = new_line
        lines = [line for i, line in enumerate(lines) if i not in existing[:-1]]
    else:
        lines.append(new_line)
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
