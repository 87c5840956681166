"""``semcache compress-eval``: A/B-test prompt compression against a model.

Prints totals per group and overall; writes ``results.jsonl``, ``summary.json`` and
``compress_eval.png`` (the ``eval`` extra) into ``--out``. Exit status: 0 done, 2 bad
arguments or unreadable data.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from semcache.cli import OneLineParser
from semcache.errors import ConfigError, MissingDependency

from .ab import ABRunner, PromptResult, Summary, load_prompts, result_row, summarise
from .settings import CompressionSettings, build_compressor


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="semcache compress-eval")
    add_arguments(parser)
    return parser


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``semcache compress-eval``'s options."""
    p.description = __doc__.split("\n")[0]
    p.add_argument("--data", required=True, type=Path, help="prompts, JSON lines")
    p.add_argument("--model", required=True, help="LiteLLM id of the model answering both")
    p.add_argument("--judge", help="LiteLLM id of a judge model (optional)")
    p.add_argument("--mode", choices=("rules", "model", "chain"), default="chain")
    p.add_argument("--rewrite-model", help="rewrite model for model/chain (default: --model)")
    p.add_argument("--min-tokens", type=int, default=0, help="compress messages this long+")
    p.add_argument("--target-ratio", type=float, default=0.5, help="rewrite budget share")
    p.add_argument("--api-base", help="OpenAI-compatible base URL for every call")
    p.add_argument("--api-key", help="API key (default: the provider's environment variable)")
    p.add_argument("--embedder", default="minilm", help="embeds answers; 'none' to skip")
    p.add_argument("--limit", type=int, help="first N prompts only")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--out", type=Path, help="directory for results.jsonl, summary.json, plot")
    p.add_argument("--no-plot", action="store_true")


def _groups(results: Sequence[PromptResult]) -> dict[str, list[PromptResult]]:
    groups: dict[str, list[PromptResult]] = {}
    for r in results:
        label = (
            f"{r.lang or '-'} {'verbose' if r.verbose else 'plain' if r.verbose is False else ''}"
        )
        groups.setdefault(label.strip(), []).append(r)
    groups["all"] = list(results)
    return groups


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def show(console: Console, summaries: dict[str, Summary]) -> None:
    table = Table(title="compress-eval: original vs compressed, same model")
    for column in (
        "group",
        "prompts",
        "used",
        "tokens saved",
        "check rejected",
        "let through",
        "answer sim mean/min",
        "judge same",
    ):
        table.add_column(column, justify="right" if column != "group" else "left")
    for label, s in summaries.items():
        table.add_row(
            label,
            str(s.prompts),
            str(s.used),
            f"{s.saved_ratio:.1%}",
            f"{s.rejection_rate:.1%}",
            str(s.let_through),
            f"{_fmt(s.mean_similarity, '.3f')}/{_fmt(s.min_similarity, '.3f')}",
            f"{s.judged_same}/{s.judged}" if s.judged else "-",
        )
    console.print(table)


def plot(results: Sequence[PromptResult], path: Path) -> Path:
    """Tokens saved per prompt against answer similarity (refused prompts at 0% saved)."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependency("matplotlib", "eval") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    saved = [100 * r.saved_ratio for r in results]
    left.hist(saved, bins=20, color="tab:blue")
    left.set(xlabel="input tokens saved (%)", ylabel="prompts", title="tokens saved per prompt")
    used = [r for r in results if r.similarity is not None]
    colours = ["tab:red" if r.details_lost else "tab:green" for r in used]
    right.scatter(
        [100 * r.saved_ratio for r in used], [r.similarity for r in used], c=colours, s=14
    )
    right.set(
        xlabel="input tokens saved (%)",
        ylabel="answer similarity (cosine)",
        title="agreement of answers (red: listed detail lost)",
    )
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def run(args: argparse.Namespace) -> int:
    """Run the A/B test; the exit status."""
    console = Console()
    kwargs: dict[str, Any] = {}
    if args.api_base is not None:
        kwargs["api_base"] = args.api_base
    if args.api_key is not None:
        kwargs["api_key"] = args.api_key
    try:
        prompts = load_prompts(args.data, limit=args.limit)
        settings = CompressionSettings(
            mode=args.mode,
            min_tokens=args.min_tokens,
            model=args.rewrite_model or args.model,
            target_ratio=args.target_ratio,
        )
        compressor = build_compressor(settings, args.mode, completion_kwargs=kwargs)
        embedder = None
        if args.embedder != "none":
            from semcache.embedders.registry import load_embedder

            embedder = load_embedder(args.embedder)
    except (ConfigError, ValueError) as exc:
        console.print(f"[red]compress-eval: {exc}[/red]")
        return 2
    if compressor is None:  # unreachable: argparse's choices exclude 'off'
        return 2
    runner = ABRunner(
        compressor,
        model=args.model,
        embedder=embedder,
        judge=args.judge,
        completion_kwargs=kwargs,
        concurrency=args.concurrency,
    )
    results = asyncio.run(runner.run(prompts))
    summaries = {label: summarise(group) for label, group in _groups(results).items()}
    show(console, summaries)
    if args.out is not None:
        write_outputs(args.out, results, summaries, plot_too=not args.no_plot)
        console.print(f"wrote {args.out}")
    return 0


def write_outputs(
    out: Path, results: Sequence[PromptResult], summaries: dict[str, Summary], *, plot_too: bool
) -> None:
    os.makedirs(out, exist_ok=True)
    with open(out / "results.jsonl", "w", encoding="utf-8") as handle:
        for result in results:
            handle.write(json.dumps(result_row(result), ensure_ascii=False) + "\n")
    data = {
        k: {**asdict(s), "saved_ratio": s.saved_ratio, "rejection_rate": s.rejection_rate}
        for k, s in summaries.items()
    }
    (out / "summary.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    if plot_too:
        plot(results, out / "compress_eval.png")
