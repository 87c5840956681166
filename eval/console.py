"""Rich tables and progress for the eval and calibrate commands (terminal output only)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .calibrate import CalibrationResult
from .kinds import KindCounts
from .report import GroupKey, key_of
from .similarity import Progress as ProgressCallback
from .sweep import SweepResult


def _name_column(table: Table, header: str, values: Sequence[str]) -> None:
    """A column of names that is never cut or wrapped (numbers wrap instead): an embedder or
    dataset name shortened to fit an 80-column terminal could name the wrong thing."""
    width = max([len(header), *(len(v) for v in values)])
    table.add_column(header, no_wrap=True, min_width=width, overflow="ignore")


def _rate(value: float, lo: float, hi: float) -> str:
    if math.isnan(value):
        return "–"
    return f"{value:.1%} [{lo:.1%}, {hi:.1%}]"


def sweep_table(result: SweepResult) -> Table:
    """One dataset x embedder x verifier, a row per threshold."""
    table = Table(
        title=f"{result.dataset} · {result.embedder} · verifier {result.verifier}",
        caption=f"{result.pairs} pairs, {result.table.positives} positive; "
        "hit when cosine >= threshold; 95% Wilson intervals",
    )
    for column in ("threshold", "hits", "true", "false", "false-hit rate", "recall", "fpr"):
        table.add_column(column, justify="right")
    t = result.table
    for i, threshold in enumerate(t.thresholds):
        table.add_row(
            f"{threshold:.3f}",
            str(t.hits[i]),
            str(t.true_hits[i]),
            str(t.false_hits[i]),
            _rate(t.false_hit_rate[i], t.false_hit_rate_lo[i], t.false_hit_rate_hi[i]),
            _rate(t.recall[i], t.recall_lo[i], t.recall_hi[i]),
            _rate(t.fpr[i], t.fpr_lo[i], t.fpr_hi[i]),
        )
    return table


def headline_table(
    results: Sequence[SweepResult], calibrations: Mapping[GroupKey, CalibrationResult]
) -> Table:
    """Recall at each false-hit target, best F1 and calibration, a row per group."""
    deltas = list(results[0].recall_at) if results else []
    table = Table(title="headline: recall at the lowest threshold with false-hit rate <= δ")
    for column, values in (
        ("dataset", [r.dataset for r in results]),
        ("embedder", [r.embedder for r in results]),
        ("verifier", [r.verifier for r in results]),
    ):
        _name_column(table, column, values)
    for delta in deltas:
        table.add_column(f"δ={delta:g}", justify="right")
    table.add_column("best F1", justify="right")
    if calibrations:
        table.add_column("calibrated threshold (held-out false-hit rate)", justify="right")
    for result in results:
        cells = [result.dataset, result.embedder, result.verifier]
        for delta in deltas:
            point = result.recall_at[delta]
            cells.append("none" if point is None else f"{point.recall:.1%} @ {point.threshold:.3f}")
        best = result.best_f1
        cells.append("none" if best is None else f"{best.f1:.3f} @ {best.threshold:.3f}")
        if calibrations:
            cells.append(calibration_cell(calibrations.get(key_of(result))))
        table.add_row(*cells)
    return table


def kind_table(key: GroupKey, threshold: float, rows: Sequence[KindCounts]) -> Table:
    """Wrong answers and paraphrases served per kind of pair at the cache's threshold."""
    dataset, embedder, verifier = key
    table = Table(
        title=f"{dataset} · {embedder} · verifier {verifier}: served at threshold {threshold:g}",
        caption="wrong answers: label-0 pairs over the threshold and not vetoed; paraphrases: "
        "label-1 pairs served",
    )
    _name_column(table, "kind", [row.kind for row in rows])
    for column in ("wrong answers served", "paraphrases served"):
        table.add_column(column, justify="right")
    for row in rows:
        share = "" if math.isnan(row.paraphrase_share) else f" ({row.paraphrase_share:.0%})"
        table.add_row(
            row.kind,
            f"{row.wrong_served} of {row.negatives}",
            f"{row.paraphrases_served} of {row.positives}{share}",
        )
    return table


def calibration_cell(result: CalibrationResult | None) -> str:
    if result is None:
        return "–"
    if result.threshold is None or result.held_out is None:
        return "none"
    held = result.held_out
    verdict = "holds" if result.holds else "FAILS"
    return f"{result.threshold:.4f} ({held.false_hit_rate:.1%}, {verdict})"


@contextmanager
def embedding_progress(console: Console, description: str) -> Iterator[ProgressCallback]:
    """A progress bar for one embedding run; yields the callback to pass to the harness."""
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("texts"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(description, total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield advance
