"""``semcache calibrate --labels``: recalibrate from what the running cache recorded.

Input: labeled pairs the cache recorded (feedback, shadow verdicts), labeled near misses
(``semcache misses``), each with the cache's own cosine, plus any ``--data`` pairs. Recorded
rows are thinned (:func:`thin`) to an equal-probability sample of the traffic. The threshold
is certified with Learn-then-Test (:mod:`semcache.eval.ltt`) on a sequence fixed around the
current threshold (:func:`walk_thresholds`), which uses every pair for the test instead of
spending some on planning. It reports the change before saving; ``--apply`` serves it on the
proxy at ``--reload-url`` and reads it back, ``--save`` writes it to a ``.env`` file.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from semcache.config.settings import CacheSettings
from semcache.errors import ConfigError

from . import persist
from .calibrate import hits_needed, split_stats
from .data import Columns, PairDataError, _jsonl_rows, _label, _text, load_pairs
from .frontier import Parts, split_parts
from .ltt import WalkResult, fixed_sequence
from .proxy_admin import serve_threshold, served_threshold


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recorded row: the cache's cosine, the label, how the row came to be recorded
    (``probability``: a shadow verdict's sampling probability; None for a near miss, which
    is always recorded, or feedback), how many requests it stands for, and whether it is
    user feedback (which is no sample of traffic)."""

    similarity: float
    label: int
    probability: float | None
    count: int
    feedback: bool
    routed_to: str | None = None


def thin(rows: list[Recorded], rng: np.random.Generator) -> list[Recorded]:
    """A sample of ``rows`` in which every request was kept with one probability.

    Shadow rows were sampled with probability π and near misses all recorded, so keeping each
    shadow row with probability π_min/π and each miss request with π_min leaves an
    equal-probability sample of the traffic, which the certificate then speaks about. Feedback
    rows are kept whole; without shadow rows nothing is thinned.
    """
    sampled = [r.probability for r in rows if r.probability is not None]
    if not sampled:
        return rows
    floor = min(sampled)
    kept: list[Recorded] = []
    for row in rows:
        if row.feedback:
            kept.append(row)
        elif row.probability is not None:
            if rng.random() < floor / row.probability:
                kept.append(row)
        else:
            copies = int(rng.binomial(row.count, floor))
            kept += [row] * copies
    return kept


@dataclass(frozen=True)
class LabeledScores:
    """Labeled pairs reduced to what calibration needs: a cosine and a 0/1 label each."""

    similarities: np.ndarray
    labels: np.ndarray
    sources: dict[str, int]
    routed: dict[str, int] = field(default_factory=dict)  # rows left out, per fallback embedder


def read_recorded(path: str | Path) -> list[Recorded]:
    """Rows with ``text_a``, ``text_b``, ``label`` and ``similarity`` (the cache's cosine),
    and optionally ``sample_probability``, ``count`` and ``source``; a row whose label is
    still null stops loading with an error naming it."""
    path = Path(path)
    if not path.is_file():
        raise PairDataError(str(path), None, None, "no such file")
    rows: list[Recorded] = []
    where = str(path)
    for number, row in _jsonl_rows(path):
        _text(where, number, row, "text_a")
        _text(where, number, row, "text_b")
        if row.get("label") is None:
            raise PairDataError(where, number, "label", "is missing (label the row 0 or 1)")
        similarity = row.get("similarity")
        if isinstance(similarity, bool) or not isinstance(similarity, int | float):
            raise PairDataError(where, number, "similarity", "must be the cache's cosine")
        probability = row.get("sample_probability")
        if probability is not None and (
            isinstance(probability, bool)
            or not isinstance(probability, int | float)
            or not 0 < probability <= 1
        ):
            raise PairDataError(where, number, "sample_probability", "must be in (0, 1]")
        count = row.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise PairDataError(where, number, "count", "must be a positive integer")
        rows.append(
            Recorded(
                similarity=float(similarity),
                label=_label(where, number, row, "label"),
                probability=None if probability is None else float(probability),
                count=count,
                feedback=row.get("source") == "feedback",
                routed_to=_routed_to(where, number, row),
            )
        )
    if not rows:
        raise PairDataError(where, None, None, "contains no pairs")
    return rows


def _routed_to(where: str, number: int, row: Mapping[str, Any]) -> str | None:
    value = row.get("routed_to")
    if value is not None and not (isinstance(value, str) and value):
        raise PairDataError(where, number, "routed_to", "must be an embedder name or null")
    return value


def primary_lane(rows: list[Recorded]) -> tuple[list[Recorded], dict[str, int]]:
    """The rows the primary embedder served, and how many each fallback embedder served.

    A hit or near miss of the fallback lane (``semantic.fallback_embedder``) carries that
    embedder's cosine, on another scale: walking the primary threshold over it would move
    the primary threshold for questions the primary never reads."""
    kept = [r for r in rows if r.routed_to is None]
    routed: dict[str, int] = {}
    for r in rows:
        if r.routed_to is not None:
            routed[r.routed_to] = routed.get(r.routed_to, 0) + 1
    return kept, routed


def gather(args: argparse.Namespace, columns: Columns) -> LabeledScores:
    sims: list[float] = []
    labels: list[int] = []
    sources: dict[str, int] = {}
    recorded: list[Recorded] = []
    routed: dict[str, int] = {}
    for file in args.labels or []:
        rows, left_out = primary_lane(read_recorded(file))
        recorded += rows
        sources[str(file)] = len(rows)
        for name, n in left_out.items():
            routed[name] = routed.get(name, 0) + n
        if not rows and args.data is None and len(args.labels) == 1:
            raise PairDataError(
                str(file),
                None,
                None,
                "holds only pairs the fallback embedder served "
                f"({', '.join(left_out)}): nothing to calibrate the primary threshold on",
            )
    if not args.no_thin:
        recorded = thin(recorded, np.random.default_rng(args.seed))
    sims += [r.similarity for r in recorded]
    labels += [r.label for r in recorded]
    for source in [] if args.data is None else [args.data]:
        from .resolve import resolve_embedder
        from .similarity import pair_similarities

        pairs = load_pairs(source, columns=columns, limit=args.limit, seed=args.seed)
        embedder = resolve_embedder(
            args.embedder[0],
            args.batch_size,
            args.runtime,
            threads=args.threads,
            precision=args.precision,
        )
        sims += [float(v) for v in pair_similarities(pairs, embedder)]
        labels += [int(v) for v in pairs.labels]
        sources[str(source)] = len(pairs)
    return LabeledScores(
        np.asarray(sims), np.asarray(labels, dtype=np.int64), sources, routed=routed
    )


def current_threshold(namespace: str | None) -> float:
    semantic = CacheSettings().semantic
    if namespace is not None and namespace in semantic.namespace_thresholds:
        return semantic.namespace_thresholds[namespace]
    return semantic.threshold


#: Cosine step of the test sequence.
STEP = 0.0025


def walk_thresholds(
    data: LabeledScores,
    current: float,
    target: float,
    alpha: float,
    seed: int,
    max_change: float,
    holdout: float = 0.0,
) -> tuple[WalkResult, Parts]:
    """Learn-then-Test over a sequence fixed from the current threshold alone: ``current +
    max_change`` down to ``current - max_change`` in steps of :data:`STEP`, less leading
    thresholds with too few pairs for any test. It depends on no label, so no fitting part is
    needed: the walk tightens when only a stricter threshold is certified and loosens when a
    looser one is. ``holdout`` > 0 sets a share aside for the report.
    """
    parts = split_parts(data.labels, seed, 1 / 3, holdout=holdout)  # no fitting part needed
    calibration = np.concatenate([parts.fit, parts.test])
    steps = round(max_change / STEP)
    sequence = current + STEP * steps - STEP * np.arange(2 * steps + 1)
    sequence = np.round(sequence[(sequence >= 0.0) & (sequence <= 1.0)], 6)
    # Skip the leading thresholds too strict to reject anything even with no false hit:
    # a choice made from the similarities alone (no label), so the test stays valid.
    need = hits_needed(target, 1.0 - alpha)
    served = (data.similarities[calibration][None, :] >= sequence[:, None]).sum(axis=1)
    sequence = sequence[served >= need]
    walk = fixed_sequence(
        data.similarities[calibration], data.labels[calibration], sequence, target, alpha
    )
    return walk, parts


def _admin_key(args: argparse.Namespace) -> str | None:
    if args.admin_key_env is None:
        raise ConfigError("--reload-url needs --admin-key-env NAME (the admin key's variable)")
    return os.environ.get(args.admin_key_env)


def _before(args: argparse.Namespace) -> tuple[float, str]:
    """The threshold served now and where it was read: ``--current``, else the proxy at
    ``--reload-url`` (the one source of truth), else this shell's settings."""
    if args.current is not None:
        return float(args.current), "--current"
    if args.reload_url is not None:
        value = served_threshold(args.reload_url, _admin_key(args), args.namespace)
        return value, f"served by {args.reload_url}"
    return current_threshold(args.namespace), "this shell's settings (give --reload-url)"


def run_recalibrate(args: argparse.Namespace, columns: Columns, out: Console) -> int:
    if args.apply and args.save is None and args.reload_url is None:
        raise ConfigError("--apply needs --reload-url URL (a running proxy) or --save FILE")
    data = gather(args, columns)
    before, where = _before(args)
    alpha = 1.0 - args.confidence
    holdout = args.holdout or 0.0
    walk, parts = walk_thresholds(
        data, before, args.target, alpha, args.seed, args.max_change, holdout
    )
    sources = ", ".join(f"{name} ({n})" for name, n in data.sources.items())
    thinned = "" if args.no_thin else " after thinning to an equal-probability sample"
    out.print(f"labeled pairs: {len(data.labels)}{thinned}, from {sources}", highlight=False)
    out.print(f"current threshold {before:.4f} ({where})", highlight=False)
    for name, n in data.routed.items():
        out.print(
            f"left out: {n} pair(s) the fallback embedder {name} served (its own scale: "
            "they calibrate semantic.fallback_threshold, not this threshold)",
            highlight=False,
        )
    if walk.threshold is None:
        counts = walk.stopped_counts or (0, 0)
        out.print(
            f"no change: no threshold from {min(1.0, before + args.max_change):.4f} down is "
            f"certified at false-hit rate <= {args.target:g} with {args.confidence:.0%} "
            f"confidence on these pairs ({counts[1]} false of {counts[0]} hits at the "
            "strictest one tested). More labels may certify one; the live estimate "
            "(stats().tuning, semcache_false_hit_alert) says whether it serves too many "
            "wrong answers.",
            highlight=False,
        )
        return 1
    if len(parts.held_out):
        report_change(data, parts.held_out, "held-out", before, walk, args, out)
    else:
        every = np.concatenate([parts.fit, parts.test])
        report_change(
            data, every, "labeled (the walk's own; --holdout F checks)", before, walk, args, out
        )
    after = float(walk.threshold)
    if after == before:
        out.print("no change: the current threshold is the certified one", highlight=False)
        return 0
    if not args.apply:
        out.print("not applied (--apply --reload-url URL serves it)", highlight=False)
        return 0
    if args.save is not None:
        persist.save_threshold(args.save, after, args.namespace)
        out.print(f"saved to {args.save}", highlight=False)
    if args.reload_url is not None:
        served_before = serve_threshold(args.reload_url, _admin_key(args), after, args.namespace)
        out.print(
            f"proxy at {args.reload_url} now serves {after:.4f} (was {served_before:.4f}); "
            "a restart serves its configured threshold again: put the new value there too",
            highlight=False,
        )
    return 0


def report_change(
    data: LabeledScores,
    rows: np.ndarray,
    which: str,
    before: float,
    walk: WalkResult,
    args: argparse.Namespace,
    out: Console,
) -> None:
    sims, labels = data.similarities[rows], data.labels[rows]
    after = float(walk.threshold)  # type: ignore[arg-type]
    old, new = split_stats(sims, labels, before), split_stats(sims, labels, after)
    out.print(
        f"threshold {before:.4f} -> {after:.4f} (cosine, hit when >=; certified false-hit "
        f"rate <= {args.target:g} at {args.confidence:.0%} confidence: {walk.false_hits} "
        f"false of {walk.hits} hits, p={walk.p_value:.3g})",
        highlight=False,
    )
    for name, stats in (("before", old), ("after", new)):
        served = stats.hits / stats.pairs if stats.pairs else 0.0
        out.print(
            f"  {name}: served {served:.1%} of {stats.pairs} {which} pairs, "
            f"wrong-answer rate {stats.false_hit_rate:.1%} "
            f"[{stats.false_hit_rate_lo:.1%}, {stats.false_hit_rate_hi:.1%}]",
            highlight=False,
        )
