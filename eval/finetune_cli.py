"""``semcache finetune``: fine-tune the local embedder on labeled pairs (:mod:`.finetune`).

Exit status: 0 success, 2 bad arguments or unusable data (one line naming the file, line
and field; nothing is written).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from semcache.embedders.base import Embedder
from semcache.embedders.finetuned import HELD_OUT
from semcache.embedders.sentence_transformer import SentenceTransformerEmbedder
from semcache.errors import ConfigError, SemcacheError

from .data import load_pairs
from .finetune import Figures, Result, TrainOptions, check_out, finetune, free_cores
from .options import columns_of, fraction, positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``semcache finetune``'s options on the one ``semcache`` parser (:mod:`semcache.cli`)."""
    parser.description = (
        "Fine-tune a sentence-transformers embedder on labeled pairs (CoSENT), keeping "
        "--holdout of them aside (never trained on; pairs sharing a text stay together), and "
        "report cosine AUC and best F1 on that part before and after. The directory it "
        "writes is an embedder: --embedder DIR, semantic.embedder = DIR."
    )
    parser.add_argument("--data", required=True, help=".jsonl/.csv/.tsv labeled pairs")
    parser.add_argument("--out", type=Path, required=True, help="new directory for the model")
    parser.add_argument(
        "--base",
        default="minilm",
        help="embedder to start from: 'minilm' (default, bundled all-MiniLM-L6-v2), a "
        "sentence-transformers hub name or a model directory (another fine-tune too)",
    )
    parser.add_argument("--epochs", type=positive_int, default=2, help="passes over the pairs")
    parser.add_argument(
        "--batch-size", type=positive_int, default=16, help="pairs per training step (16)"
    )
    parser.add_argument(
        "--learning-rate", type=float, default=2e-5, help="AdamW peak learning rate (2e-5)"
    )
    parser.add_argument(
        "--holdout",
        type=fraction,
        default=0.3,
        metavar="FRACTION",
        help=f"share of the pairs never trained on (0.3), written to DIR/{HELD_OUT}",
    )
    parser.add_argument(
        "--max-pairs", type=positive_int, help="use a seeded random N pairs of the file"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample, split, order")
    parser.add_argument(
        "--device", default="auto", help="auto (cuda, then mps, then cpu), cpu, cuda, ..."
    )
    parser.add_argument(
        "--threads",
        type=positive_int,
        help="torch CPU threads (default: the cores not already busy, at least 1)",
    )
    parser.add_argument("--text-a", default="text_a", help="column of the first text")
    parser.add_argument("--text-b", default="text_b", help="column of the second text")
    parser.add_argument("--label", default="label", help="column of the 0/1 label")


def _load(name: str) -> Embedder:
    from semcache.embedders import load_embedder

    return load_embedder(name, runtime="torch", precision="float32")


def _base(args: argparse.Namespace) -> SentenceTransformerEmbedder:
    from semcache.embedders import load_embedder

    base = load_embedder(
        args.base,
        device=args.device,
        runtime="torch",
        precision="float32",
        threads=args.threads if args.threads is not None else free_cores(),
    )
    if not isinstance(base, SentenceTransformerEmbedder):
        raise ConfigError(
            f"--base {args.base!r} is not a sentence-transformers model; fine-tune 'minilm', "
            "a hub name or a model directory"
        )
    return base


def _source(data: str) -> str:
    """The data file as an absolute path (an ``hf:`` source as given)."""
    path = Path(data)
    return str(path.resolve()) if path.is_file() else data


def _cell(before: float | None, after: float | None) -> tuple[str, str, str]:
    if before is None or after is None:
        return ("n/a", "n/a", "")
    return (f"{before:.3f}", f"{after:.3f}", f"{after - before:+.3f}")


def _table(result: Result) -> Table:
    table = Table(title=f"held-out pairs ({result.held_out_pairs}): cosine as a hit score")
    for header in ("", "base", "fine-tuned", "change"):
        table.add_column(header, justify="left" if not header else "right")
    b, a = result.before, result.after
    table.add_row("ROC AUC", *_cell(b.auc, a.auc))
    table.add_row("best F1", *_cell(b.best_f1, a.best_f1))
    return table


def _threshold(figures: Figures) -> str:
    return "n/a" if figures.best_f1_threshold is None else f"{figures.best_f1_threshold:.3f}"


def run(args: argparse.Namespace) -> int:
    """Fine-tune; the exit status (module docstring)."""
    out, err = Console(soft_wrap=True), Console(stderr=True, soft_wrap=True)
    started = time.perf_counter()
    try:
        check_out(args.out)
        pairs = load_pairs(args.data, columns=columns_of(args))
        ids = np.arange(len(pairs))
        if args.max_pairs is not None and args.max_pairs < len(pairs):
            rng = np.random.default_rng(args.seed)
            ids = np.sort(rng.choice(len(pairs), args.max_pairs, replace=False))
            pairs = pairs.take(ids)
        options = TrainOptions(args.epochs, args.batch_size, args.learning_rate, args.seed)
        base = _base(args)
        columns = (
            TextColumn("fine-tuning"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("steps, loss {task.fields[loss]}"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=err, transient=True) as progress:
            task = progress.add_task("fine-tuning", total=None, loss="-")

            def step(done: int, total: int, loss: float) -> None:
                progress.update(task, completed=done, total=total, loss=f"{loss:.3f}")
                if not err.is_terminal and done * 10 // total != (done - 1) * 10 // total:
                    err.print(f"fine-tuning: step {done}/{total}, loss {loss:.3f}")  # a log

            result = finetune(
                pairs,
                ids,
                base,
                args.base,
                args.out,
                holdout=args.holdout,
                options=options,
                load=_load,
                on_step=step,
                record={"data": _source(args.data)},
            )
    except SemcacheError as exc:
        err.print(f"[red]semcache finetune: error:[/red] {escape(str(exc))}", highlight=False)
        return 2
    out.print(_table(result))
    out.print(
        f"trained on {result.train_pairs} pairs in {time.perf_counter() - started:.0f} s; "
        f"best-F1 threshold {_threshold(result.before)} -> {_threshold(result.after)}"
    )
    out.print(f"embedder {result.name!r} saved to {escape(str(result.out))}")
    out.print(
        "next: semcache calibrate --data "
        f"{escape(str(result.out / HELD_OUT))} --embedder {escape(str(result.out))} --target 0.1"
    )
    return 0
