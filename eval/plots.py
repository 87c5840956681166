"""PNG plots of a sweep per dataset: ``<dataset>_thresholds.png`` (false-hit rate and recall
against the threshold, Wilson interval shaded) and ``<dataset>_pr.png`` (precision-recall).
matplotlib (the ``eval`` extra) is imported on first use with the Agg backend.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from semcache.errors import MissingDependency

from .sweep import SweepResult


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependency("matplotlib", "eval") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _file_stem(dataset: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", dataset).strip("_") or "dataset"


def _label(result: SweepResult) -> str:
    return (
        result.embedder if result.verifier == "none" else f"{result.embedder} + {result.verifier}"
    )


def plot_thresholds(results: Sequence[SweepResult], path: Path) -> Path:
    """False-hit rate and recall against threshold for one dataset's results."""
    plt = _pyplot()
    figure, (fhr_axis, recall_axis) = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
    for result in results:
        table = result.table
        line = fhr_axis.plot(
            table.thresholds, table.false_hit_rate, marker="o", label=_label(result)
        )
        colour = line[0].get_color()
        fhr_axis.fill_between(
            table.thresholds,
            table.false_hit_rate_lo,
            table.false_hit_rate_hi,
            color=colour,
            alpha=0.15,
        )
        recall_axis.plot(
            table.thresholds, table.recall, marker="o", color=colour, label=_label(result)
        )
        recall_axis.fill_between(
            table.thresholds, table.recall_lo, table.recall_hi, color=colour, alpha=0.15
        )
    fhr_axis.set(xlabel="threshold (cosine, hit when >=)", ylabel="false-hit rate (false / hits)")
    recall_axis.set(
        xlabel="threshold (cosine, hit when >=)", ylabel="recall (true hits / positives)"
    )
    for axis in (fhr_axis, recall_axis):
        axis.set_ylim(0, 1)
        axis.grid(alpha=0.3)
    fhr_axis.legend(fontsize="small")
    figure.suptitle(f"{results[0].dataset}: false-hit rate and recall (95% Wilson bands)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def plot_pr(results: Sequence[SweepResult], path: Path) -> Path:
    """Precision-recall curves (all distinct scores) for one dataset's results."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(5.5, 4.5))
    for result in results:
        curve = result.curve
        axis.plot(curve.recall, curve.precision, label=_label(result))
    axis.set(xlabel="recall", ylabel="precision (1 - false-hit rate)", xlim=(0, 1), ylim=(0, 1.02))
    axis.grid(alpha=0.3)
    axis.legend(fontsize="small")
    axis.set_title(f"{results[0].dataset}: precision-recall")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write_plots(results: Sequence[SweepResult], out_dir: Path) -> list[Path]:
    """Both plots for every dataset in ``results``; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    by_dataset: dict[str, list[SweepResult]] = {}
    for result in results:
        by_dataset.setdefault(result.dataset, []).append(result)
    paths = []
    for dataset, group in by_dataset.items():
        stem = _file_stem(dataset)
        paths.append(plot_thresholds(group, out_dir / f"{stem}_thresholds.png"))
        paths.append(plot_pr(group, out_dir / f"{stem}_pr.png"))
    return paths
