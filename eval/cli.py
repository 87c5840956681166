"""``semcache eval`` and ``semcache calibrate``: argument parsing and the run loop.

Both return a process exit status: 0 success, 1 (calibrate only) no threshold meets the
target, 2 bad arguments or unusable data / embedder / verifier names.
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape

from semcache.cli import OneLineParser
from semcache.config.settings import SemanticSettings
from semcache.embedders.base import Embedder
from semcache.errors import SemcacheError
from semcache.guard import HitVerifier

from . import console as show
from . import resolve
from .calibrate import CalibrationResult, calibrate
from .calibrate_cli import _calibrate_parser, calibrate_main
from .data import PairSet, load_pairs
from .kinds import KindCounts, kinds_json, served_by_kind
from .options import (
    add_data_options,
    cache_semantic,
    columns_of,
    cosine,
    fraction,
    parse_args,
    parse_thresholds,
)
from .report import GroupKey, Timing, key_of, write_outputs
from .similarity import distinct_texts, pair_similarities
from .sweep import DEFAULT_DELTAS, NO_VERIFIER, SweepResult, effective_scores, sweep_verifiers
from .sweep import threshold_grid as _grid

__all__ = ["_calibrate_parser", "calibrate_main", "eval_main", "parse_thresholds"]


def _eval_parser(cache: SemanticSettings | None = None) -> argparse.ArgumentParser:
    cache = cache if cache is not None else SemanticSettings()
    parser = OneLineParser(
        prog="semcache eval",
        description="Sweep similarity thresholds over labeled pairs and report false-hit "
        "rate and recall per dataset x embedder x verifier.",
    )
    parser.add_argument(
        "--data",
        nargs="+",
        action="extend",
        required=True,
        help=".jsonl/.csv/.tsv, hf:NAME[:SPLIT] or a shipped set (pairs, collisions); several "
        "files, or --data repeated",
    )
    parser.add_argument(
        "--embedder",
        nargs="+",
        default=[cache.embedder],
        help=f"one or more embedder names (default: the cache's, {cache.embedder})",
    )
    parser.add_argument(
        "--thresholds",
        type=parse_thresholds,
        default=_grid(0.90, 0.99, 0.01),
        help="cosine thresholds in [-1, 1]: start:stop:step or a list (default 0.90:0.99:0.01)",
    )
    parser.add_argument("--out", type=Path, required=True, help="directory for report and plots")
    parser.add_argument(
        "--verifier",
        nargs="+",
        default=[] if cache.verifier == NO_VERIFIER else [cache.verifier],
        help=f"guards measured besides 'none' (default: the cache's, {cache.verifier})",
    )
    parser.add_argument(
        "--delta",
        nargs="+",
        type=fraction,
        default=list(DEFAULT_DELTAS),
        help="false-hit rates to report recall at (fractions)",
    )
    parser.add_argument(
        "--served-at",
        type=cosine,
        default=cache.threshold,
        metavar="THRESHOLD",
        help="cosine threshold at which sets whose pairs have a 'kind' (e.g. collisions) count "
        f"wrong answers and paraphrases served per kind (default: the cache's, {cache.threshold})",
    )
    parser.add_argument(
        "--calibrate", type=fraction, metavar="DELTA", help="also calibrate each group for DELTA"
    )
    parser.add_argument(
        "--confidence", type=fraction, default=0.95, help="confidence of the bounds (0.95)"
    )
    parser.add_argument(
        "--frontier",
        action="store_true",
        help="also certify, per dataset, each scorer (cosine and guard per embedder, a learned "
        "scorer over all embedders) at δ = 1, 2, 5, 10, 20%% as 'semcache calibrate' does",
    )
    parser.add_argument("--no-plots", action="store_true", help="write no PNG plots")
    add_data_options(parser, cache.runtime, cache.precision)
    return parser


def _load_all(args: argparse.Namespace) -> list[PairSet]:
    sets: list[PairSet] = []
    seen: set[str] = set()
    for source in args.data:
        pairs = load_pairs(source, columns=columns_of(args), limit=args.limit, seed=args.seed)
        name, copy = pairs.name, 2
        while name in seen:
            name, copy = f"{pairs.name}#{copy}", copy + 1
        seen.add(name)
        sets.append(replace(pairs, name=name))
    return sets


def _embed_timed(
    pairs: PairSet, embedder: Embedder, label: str, err: Console
) -> tuple[np.ndarray, Timing]:
    """Similarities of ``pairs`` with a progress bar, and the wall and CPU time they took."""
    with show.embedding_progress(err, f"{pairs.name} · {label}") as progress:
        started, cpu_started = time.perf_counter(), time.process_time()
        similarities = pair_similarities(pairs, embedder, progress=progress)
        seconds = time.perf_counter() - started
        cpu_seconds = time.process_time() - cpu_started
    texts = len(distinct_texts(pairs)[0])
    err.print(
        f"{pairs.name} · {label}: {len(pairs)} pairs, {texts} texts, "
        f"{seconds:.1f} s wall, {cpu_seconds:.1f} s CPU"
    )
    return similarities, Timing(pairs.name, label, len(pairs), texts, seconds, cpu_seconds)


def _served_by_kind(
    pairs: PairSet,
    similarities: np.ndarray,
    group: Sequence[SweepResult],
    decisions: dict[str, np.ndarray],
    threshold: float,
) -> dict[GroupKey, list[KindCounts]]:
    """Per group (no verifier, then each verifier), wrong answers and paraphrases served per
    kind at ``threshold``; nothing for a set whose pairs have no kind."""
    if pairs.kinds is None:
        return {}
    return {
        key_of(result): served_by_kind(
            effective_scores(similarities, decisions.get(result.verifier)),
            pairs.labels,
            pairs.kinds,
            threshold,
        )
        for result in group
    }


@contextmanager
def _interrupt_on_sigterm() -> Iterator[None]:
    """SIGTERM stops the run like Ctrl-C (KeyboardInterrupt), so the finished groups are
    written either way; the previous handler comes back afterwards. Main thread only (the
    only place Python delivers signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_eval(args: argparse.Namespace, out: Console, err: Console) -> int:
    datasets = _load_all(args)
    verifier_names = [name for name in dict.fromkeys(args.verifier) if name != NO_VERIFIER]
    # 'auto' may name the same guard as 'details': one sweep per distinct verifier
    resolved = (resolve.resolve_verifier(name) for name in verifier_names)
    verifiers = list({v.name: v for v in resolved}.values())
    results: list[SweepResult] = []
    timings: dict[tuple[str, str], Timing] = {}
    calibrations: dict[GroupKey, CalibrationResult] = {}
    decisions: dict[str, dict[str, np.ndarray]] = {pairs.name: {} for pairs in datasets}
    all_sims: dict[str, dict[str, np.ndarray]] = {pairs.name: {} for pairs in datasets}
    kind_rows: dict[GroupKey, list[KindCounts]] = {}
    by_kind: dict[GroupKey, dict[str, Any]] = {}
    finished = 0
    try:
        with _interrupt_on_sigterm():
            for embedder_name in args.embedder:
                embedder = resolve.resolve_embedder(
                    embedder_name,
                    args.batch_size,
                    args.runtime,
                    threads=args.threads,
                    precision=args.precision,
                )
                embedder.embed(["warm-up: load the model before the clock starts"])
                for pairs in datasets:
                    similarities, timing = _embed_timed(pairs, embedder, embedder_name, err)
                    timings[(pairs.name, embedder_name)] = timing
                    all_sims[pairs.name][embedder_name] = similarities
                    group = sweep_verifiers(
                        pairs,
                        similarities,
                        embedder=embedder_name,
                        verifiers=verifiers,
                        decisions=decisions[pairs.name],
                        thresholds=args.thresholds,
                        deltas=args.delta,
                        confidence=args.confidence,
                    )
                    if args.calibrate is not None:
                        for result in group:
                            verdicts = decisions[pairs.name].get(result.verifier)
                            calibrations[key_of(result)] = calibrate(
                                effective_scores(similarities, verdicts),
                                pairs.labels,
                                args.calibrate,
                                confidence=args.confidence,
                                seed=args.seed,
                            )
                    for key, rows in _served_by_kind(
                        pairs, similarities, group, decisions[pairs.name], args.served_at
                    ).items():
                        kind_rows[key], by_kind[key] = rows, kinds_json(args.served_at, rows)
                    results.extend(group)
                    # every finished group is on disk at once: a stopped run loses only
                    # the group in progress
                    write_outputs(args.out, results, timings, calibrations, by_kind=by_kind)
                    finished += 1
    except KeyboardInterrupt:
        written = write_outputs(args.out, results, timings, calibrations, by_kind=by_kind)
        err.print(
            f"interrupted: kept the {finished} finished group(s) of "
            f"{len(args.embedder) * len(datasets)} in {', '.join(str(p) for p in written)}"
        )
        return 130
    for result in results:
        out.print(show.sweep_table(result))
    out.print(show.headline_table(results, calibrations))
    for key, rows in kind_rows.items():
        out.print(show.kind_table(key, args.served_at, rows))
    frontiers: dict[str, dict[str, object]] = {}
    if args.frontier:
        # no verifier named: the null guard ('none'), which build_candidates skips
        verifier = verifiers[0] if verifiers else resolve.resolve_verifier(NO_VERIFIER)
        frontiers = _print_frontiers(datasets, all_sims, verifier, args, out)
    plots: list[Path] = []
    if not args.no_plots:
        from .plots import write_plots

        plots = write_plots(results, args.out)
    written = write_outputs(
        args.out, results, timings, calibrations, plots, frontiers, by_kind=by_kind
    )
    err.print(f"wrote {', '.join(str(p) for p in [*written, *plots])}")
    return 0


def _print_frontiers(
    datasets: Sequence[PairSet],
    all_sims: dict[str, dict[str, np.ndarray]],
    verifier: HitVerifier,
    args: argparse.Namespace,
    out: Console,
) -> dict[str, dict[str, object]]:
    """Print each dataset's frontier; return them for ``summary.json``."""
    from .calibrate_cmd import build_candidates
    from .frontier import frontier, split_parts
    from .frontier_view import frontier_json, print_frontier

    kinds = {"cosine": True, "guard": True, "learned": True}
    frontiers: dict[str, dict[str, object]] = {}
    for pairs in datasets:
        sims = {name: values.astype(np.float64) for name, values in all_sims[pairs.name].items()}
        parts = split_parts(pairs.labels, args.seed)
        candidates, _ = build_candidates(pairs, sims, parts, verifier, kinds, seed=args.seed)
        result = frontier(candidates, pairs.labels, parts, alpha=1.0 - args.confidence)
        print_frontier(result, pairs.name, list(sims), out)
        frontiers[pairs.name] = frontier_json(result, pairs.name, list(sims))
    return frontiers


def eval_main(argv: Sequence[str]) -> int:
    """``semcache eval --data FILE [FILE ...] --embedder NAME [NAME ...] --out DIR ...``"""
    args = parse_args(_eval_parser(cache_semantic()), argv)
    if isinstance(args, int):
        return args
    return run(args)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``semcache eval``'s options on the one ``semcache`` parser (:mod:`semcache.cli`)."""
    from semcache.cli import adopt

    adopt(parser, _eval_parser(cache_semantic()))


def run(args: argparse.Namespace) -> int:
    """Evaluate; the exit status."""
    out, err = Console(soft_wrap=True), Console(stderr=True, soft_wrap=True)
    try:
        return _run_eval(args, out, err)
    except SemcacheError as exc:
        err.print(f"[red]semcache eval: error:[/red] {escape(str(exc))}", highlight=False)
        return 2
