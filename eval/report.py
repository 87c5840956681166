"""Evaluation outputs: ``results.json``, ``summary.json`` and ``report.md``.

``results.json``: one flat record per dataset x embedder x verifier x threshold, counts and
rates with 95% Wilson bounds (``*_lo`` / ``*_hi``; undefined rates are ``null``).
``summary.json``: one record per dataset x embedder x verifier (headline, timing,
calibration, ``frontier`` with ``--frontier``, ``by_kind`` for sets with kinds).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from .calibrate import CalibrationResult
from .metrics import OperatingPoint
from .sweep import SweepResult

RATE_FIELDS = (
    "false_hit_rate",
    "false_hit_rate_lo",
    "false_hit_rate_hi",
    "recall",
    "recall_lo",
    "recall_hi",
    "fpr",
    "fpr_lo",
    "fpr_hi",
)
RESULT_FIELDS = (
    "dataset",
    "embedder",
    "verifier",
    "threshold",
    "pairs",
    "positives",
    "negatives",
    "hits",
    "true_hits",
    "false_hits",
    *RATE_FIELDS,
)

GroupKey = tuple[str, str, str]
"""(dataset, embedder, verifier)."""


@dataclass(frozen=True)
class Timing:
    """Time to embed one dataset with one embedder.

    ``cpu_seconds`` is the process's CPU time over all its threads: on a shared machine wall
    time depends on the neighbours, CPU time much less.
    """

    dataset: str
    embedder: str
    pairs: int
    texts: int
    seconds: float
    cpu_seconds: float


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _jsonable(value: Any) -> Any:
    """``value`` with NaN as None, through dicts and lists (JSON has no NaN)."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float):
        return _number(value)
    return value


def key_of(result: SweepResult) -> GroupKey:
    return (result.dataset, result.embedder, result.verifier)


def threshold_records(result: SweepResult) -> list[dict[str, Any]]:
    """One flat record per threshold of ``result`` (keys: :data:`RESULT_FIELDS`)."""
    table = result.table
    records = []
    for i, threshold in enumerate(table.thresholds):
        record: dict[str, Any] = {
            "dataset": result.dataset,
            "embedder": result.embedder,
            "verifier": result.verifier,
            "threshold": float(threshold),
            "pairs": result.pairs,
            "positives": table.positives,
            "negatives": table.negatives,
            "hits": int(table.hits[i]),
            "true_hits": int(table.true_hits[i]),
            "false_hits": int(table.false_hits[i]),
        }
        for name in RATE_FIELDS:
            record[name] = _number(getattr(table, name)[i])
        records.append(record)
    return records


def _point(point: OperatingPoint | None) -> dict[str, Any] | None:
    return None if point is None else _jsonable(asdict(point))


def _calibration(result: CalibrationResult) -> dict[str, Any]:
    return cast(dict[str, Any], _jsonable({**asdict(result), "holds": result.holds}))


def summary_record(
    result: SweepResult,
    timing: Timing | None = None,
    calibration: CalibrationResult | None = None,
    frontier: Mapping[str, Any] | None = None,
    by_kind: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Headline figures of one dataset x embedder x verifier; ``frontier`` (with ``eval
    --frontier``) is the dataset's, the same in each of its records; ``by_kind`` the group's
    per-kind counts."""
    return {
        "dataset": result.dataset,
        "embedder": result.embedder,
        "verifier": result.verifier,
        "pairs": result.pairs,
        "positives": result.table.positives,
        "negatives": result.table.negatives,
        "vetoed": result.vetoed,
        "best_f1": _point(result.best_f1),
        "recall_at_false_hit_rate": {str(d): _point(p) for d, p in result.recall_at.items()},
        "embed_seconds": None if timing is None else timing.seconds,
        "embed_cpu_seconds": None if timing is None else timing.cpu_seconds,
        "distinct_texts": None if timing is None else timing.texts,
        "calibration": None if calibration is None else _calibration(calibration),
        "frontier": None if frontier is None else dict(frontier),
        "by_kind": None if by_kind is None else dict(by_kind),
    }


def _interval(value: float, lo: float, hi: float) -> str:
    """``12.3% [10.1, 14.8]``; a dash for an undefined rate."""
    if math.isnan(value):
        return "–"
    return f"{value:.1%} [{lo * 100:.1f}, {hi * 100:.1f}]"


def _at(point: OperatingPoint | None) -> str:
    return "none" if point is None else f"{point.recall:.1%} @ {point.threshold:.3f}"


def _calibration_cell(calibration: CalibrationResult | None) -> str:
    if calibration is None:
        return "–"
    if calibration.threshold is None or calibration.held_out is None:
        return "no threshold"
    held = calibration.held_out
    verdict = "holds" if calibration.holds else "FAILS"
    return (
        f"{calibration.threshold:.4f}: held-out false-hit "
        f"{_interval(held.false_hit_rate, held.false_hit_rate_lo, held.false_hit_rate_hi)}, "
        f"recall {held.recall:.1%} ({verdict})"
    )


def _group_section(result: SweepResult, calibration: CalibrationResult | None) -> list[str]:
    table = result.table
    lines = [
        f"### {result.dataset} · {result.embedder} · verifier {result.verifier}",
        "",
        f"{result.pairs} pairs ({table.positives} positive, {table.negatives} negative)"
        + (f"; verifier vetoed {result.vetoed}" if result.verifier != "none" else ""),
        "",
        "| threshold | hits | true | false | false-hit rate [95% CI] | recall [95% CI] "
        "| fpr [95% CI] |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    t = table
    for i, threshold in enumerate(t.thresholds):
        fhr = _interval(t.false_hit_rate[i], t.false_hit_rate_lo[i], t.false_hit_rate_hi[i])
        recall = _interval(t.recall[i], t.recall_lo[i], t.recall_hi[i])
        fpr = _interval(t.fpr[i], t.fpr_lo[i], t.fpr_hi[i])
        lines.append(
            f"| {threshold:.3f} | {t.hits[i]} | {t.true_hits[i]} | {t.false_hits[i]} "
            f"| {fhr} | {recall} | {fpr} |"
        )
    best = result.best_f1
    lines += [
        "",
        f"- best F1: {'none' if best is None else f'{best.f1:.3f} @ {best.threshold:.3f}'}",
    ]
    lines += [f"- recall at false-hit rate ≤ {d:g}: {_at(p)}" for d, p in result.recall_at.items()]
    if calibration is not None:
        lines.append(f"- calibration (δ={calibration.target:g}): {_calibration_cell(calibration)}")
        if calibration.reason is not None:
            lines.append(f"  - {calibration.reason}")
    return [*lines, ""]


def _kind_section(key: GroupKey, counts: Mapping[str, Any]) -> list[str]:
    lines = [
        f"{' · '.join(key)} at threshold {counts['threshold']:g}:",
        "",
        "| kind | wrong answers served | paraphrases served |",
        "|---|---:|---:|",
    ]
    for row in counts["kinds"]:
        lines.append(
            f"| {row['kind']} | {row['wrong_served']} of {row['negatives']} "
            f"| {row['paraphrases_served']} of {row['positives']} |"
        )
    return [*lines, ""]


def render_markdown(
    results: Sequence[SweepResult],
    timings: Mapping[tuple[str, str], Timing] | None = None,
    calibrations: Mapping[GroupKey, CalibrationResult] | None = None,
    plots: Sequence[Path] = (),
    by_kind: Mapping[GroupKey, Mapping[str, Any]] | None = None,
) -> str:
    """The whole ``report.md``: headline table, per-kind counts, timings, plots, then one
    section per group."""
    timings = {} if timings is None else timings
    calibrations = {} if calibrations is None else calibrations
    deltas = list(results[0].recall_at) if results else []
    lines = [
        "# semcache evaluation",
        "",
        "A pair is a hit when cosine similarity >= threshold (and the verifier, if any, accepts "
        "it). False-hit rate = false hits / hits; recall = true hits / positives; fpr = false "
        'hits / negatives; intervals are 95% Wilson. "Recall at false-hit rate ≤ δ" is the '
        "recall at the lowest threshold, among all distinct scores, whose in-sample false-hit "
        "rate is at most δ. Calibration: lowest threshold whose one-sided upper bound on the "
        "false-hit rate is ≤ δ on a stratified half, checked on the other half.",
        "",
        "## Headline",
        "",
        "| dataset | embedder | verifier | pairs | "
        + " | ".join(f"recall @ fhr ≤ {d:g}" for d in deltas)
        + " | best F1 | calibration |",
        "|---|---|---|---:|" + "---:|" * len(deltas) + "---:|---|",
    ]
    for result in results:
        best = result.best_f1
        lines.append(
            f"| {result.dataset} | {result.embedder} | {result.verifier} | {result.pairs} | "
            + " | ".join(_at(result.recall_at[d]) for d in deltas)
            + f" | {'none' if best is None else f'{best.f1:.3f} @ {best.threshold:.3f}'}"
            f" | {_calibration_cell(calibrations.get(key_of(result)))} |"
        )
    if by_kind:
        lines += ["", "## Served per kind", ""]
        for key, counts in by_kind.items():
            lines += _kind_section(key, counts)
    if timings:
        lines += [
            "",
            "## Embedding time",
            "",
            "| dataset | embedder | pairs | distinct texts | wall s | CPU s | pairs/s (wall) |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        for t in timings.values():
            rate = t.pairs / t.seconds if t.seconds > 0 else math.inf
            lines.append(
                f"| {t.dataset} | {t.embedder} | {t.pairs} | {t.texts} "
                f"| {t.seconds:.1f} | {t.cpu_seconds:.1f} | {rate:.0f} |"
            )
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    lines += ["", "## Per dataset", ""]
    for result in results:
        lines += _group_section(result, calibrations.get(key_of(result)))
    return "\n".join(lines)


def write_outputs(
    out_dir: Path,
    results: Sequence[SweepResult],
    timings: Mapping[tuple[str, str], Timing] | None = None,
    calibrations: Mapping[GroupKey, CalibrationResult] | None = None,
    plots: Sequence[Path] = (),
    frontiers: Mapping[str, Mapping[str, Any]] | None = None,
    by_kind: Mapping[GroupKey, Mapping[str, Any]] | None = None,
) -> list[Path]:
    """Write results.json, summary.json and report.md into ``out_dir``; return their paths.

    Each file is written beside its final name and renamed into place, so a run stopped
    while writing (the eval rewrites them after every group) leaves the previous complete
    files, never a torn one."""
    out_dir.mkdir(parents=True, exist_ok=True)
    timings = {} if timings is None else timings
    calibrations = {} if calibrations is None else calibrations
    records = [record for result in results for record in threshold_records(result)]
    summary = [
        summary_record(
            result,
            timings.get((result.dataset, result.embedder)),
            calibrations.get(key_of(result)),
            (frontiers or {}).get(result.dataset),
            (by_kind or {}).get(key_of(result)),
        )
        for result in results
    ]
    paths = [out_dir / "results.json", out_dir / "summary.json", out_dir / "report.md"]
    _replace(paths[0], json.dumps(records, indent=1, allow_nan=False))
    _replace(paths[1], json.dumps(summary, indent=1, allow_nan=False))
    _replace(paths[2], render_markdown(results, timings, calibrations, plots, by_kind))
    return paths


def _replace(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
