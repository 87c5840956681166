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

import numpy as np
from rich.console import Console
from rich.markup import escape

from semcache.embedders.base import Embedder
from semcache.errors import ConfigError, SemcacheError
from semcache.guard import HitVerifier
from semcache.settings import CacheSettings, SemanticSettings

from . import console as show
from . import resolve
from .calibrate import CalibrationResult, calibrate
from .data import Columns, PairSet, load_pairs
from .report import GroupKey, Timing, key_of, write_outputs
from .similarity import distinct_texts, pair_similarities
from .sweep import DEFAULT_DELTAS, NO_VERIFIER, SweepResult, effective_scores, sweep_verifiers
from .sweep import threshold_grid as _grid


def parse_thresholds(text: str) -> np.ndarray:
    """``start:stop:step`` (inclusive) or a comma-separated list of cosine thresholds."""
    try:
        if ":" in text:
            start, stop, step = (float(part) for part in text.split(":"))
            if not step > 0 or stop < start:
                raise ValueError("step must be > 0 and stop >= start")
            values = _grid(start, stop, step)
        else:
            values = np.array(sorted(float(part) for part in text.split(",")))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"bad thresholds {text!r}: use start:stop:step (e.g. 0.90:0.99:0.01) or 0.9,0.95"
        ) from exc
    outside = [float(v) for v in values if not -1.0 <= float(v) <= 1.0]
    if outside or not len(values):
        raise argparse.ArgumentTypeError(
            f"bad thresholds {text!r}: cosine thresholds lie in [-1, 1]"
            + (f" ({outside[0]:g} does not)" if outside else "")
        )
    return values


def _fraction(text: str) -> float:
    """A number strictly between 0 and 1 (a rate or a confidence)."""
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not strictly between 0 and 1")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not 0.0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    """Parsed arguments, or argparse's exit status (``--help``: 0, bad usage: 2)."""
    try:
        return parser.parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


def _add_data_options(
    parser: argparse.ArgumentParser, runtime: str = "auto", precision: str = "auto"
) -> None:
    parser.add_argument("--limit", type=_positive_int, help="keep a seeded random N pairs per file")
    parser.add_argument("--seed", type=int, default=0, help="seed for --limit and splits")
    parser.add_argument("--text-a", default="text_a", help="column of the first text")
    parser.add_argument("--text-b", default="text_b", help="column of the second text")
    parser.add_argument("--label", default="label", help="column of the 0/1 label")
    parser.add_argument(
        "--batch-size",
        type=_positive_int,
        default=64,
        help="most texts per model call; texts of similar token count are batched together",
    )
    parser.add_argument(
        "--runtime",
        choices=["auto", "torch", "onnx"],
        default=runtime,
        help="how sentence-transformers models run: onnx (ONNX Runtime, the [onnx] extra) "
        "gives the same similarities to 1e-7, faster on a CPU; auto (default) uses it for "
        "MiniLM when installed",
    )
    parser.add_argument(
        "--precision",
        choices=["auto", "float32", "float16", "bfloat16", "int8"],
        default=precision,
        help="model precision; int8 is ONNX Runtime's dynamic quantization (its own "
        "embedder name, so its thresholds are never mixed with float32 ones)",
    )
    parser.add_argument(
        "--threads",
        type=_positive_int,
        help="CPU threads of every local runtime (torch, ONNX Runtime, USE, e5; default: each "
        "runtime's choice); on a busy machine 1 thread can be faster than fighting for cores",
    )


def _columns(args: argparse.Namespace) -> Columns:
    return Columns(text_a=args.text_a, text_b=args.text_b, label=args.label)


def _cache_semantic() -> SemanticSettings:
    """The cache's own semantic settings: by default eval and calibrate measure exactly the
    embedder, runtime and guard the cache runs (``SEMCACHE_*`` / ``.env``)."""
    return CacheSettings().semantic


def _eval_parser(cache: SemanticSettings | None = None) -> argparse.ArgumentParser:
    cache = cache if cache is not None else SemanticSettings()
    parser = argparse.ArgumentParser(
        prog="semcache eval",
        description="Sweep similarity thresholds over labeled pairs and report false-hit "
        "rate and recall per dataset x embedder x verifier.",
    )
    parser.add_argument(
        "--data",
        nargs="+",
        action="extend",
        required=True,
        help=".jsonl/.csv/.tsv or hf:NAME[:SPLIT]; several files, or --data repeated",
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
        type=_fraction,
        default=list(DEFAULT_DELTAS),
        help="false-hit rates to report recall at (fractions)",
    )
    parser.add_argument(
        "--calibrate", type=_fraction, metavar="DELTA", help="also calibrate each group for DELTA"
    )
    parser.add_argument(
        "--confidence", type=_fraction, default=0.95, help="confidence of the bounds (0.95)"
    )
    parser.add_argument(
        "--frontier",
        action="store_true",
        help="also certify, per dataset, each scorer (cosine and guard per embedder, a learned "
        "scorer over all embedders) at δ = 1, 2, 5, 10, 20%% as 'semcache calibrate' does",
    )
    parser.add_argument("--no-plots", action="store_true", help="write no PNG plots")
    _add_data_options(parser, cache.runtime, cache.precision)
    return parser


def _load_all(args: argparse.Namespace) -> list[PairSet]:
    sets: list[PairSet] = []
    seen: set[str] = set()
    for source in args.data:
        pairs = load_pairs(source, columns=_columns(args), limit=args.limit, seed=args.seed)
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
                    results.extend(group)
                    # every finished group is on disk at once: a stopped run loses only
                    # the group in progress
                    write_outputs(args.out, results, timings, calibrations)
                    finished += 1
    except KeyboardInterrupt:
        written = write_outputs(args.out, results, timings, calibrations)
        err.print(
            f"interrupted: kept the {finished} finished group(s) of "
            f"{len(args.embedder) * len(datasets)} in {', '.join(str(p) for p in written)}"
        )
        return 130
    for result in results:
        out.print(show.sweep_table(result))
    out.print(show.headline_table(results, calibrations))
    if args.frontier:
        # no verifier named: the null guard ('none'), which build_candidates skips
        verifier = verifiers[0] if verifiers else resolve.resolve_verifier(NO_VERIFIER)
        _print_frontiers(datasets, all_sims, verifier, args, out)
    plots: list[Path] = []
    if not args.no_plots:
        from .plots import write_plots

        plots = write_plots(results, args.out)
    written = write_outputs(args.out, results, timings, calibrations, plots)
    err.print(f"wrote {', '.join(str(p) for p in [*written, *plots])}")
    return 0


def _print_frontiers(
    datasets: Sequence[PairSet],
    all_sims: dict[str, dict[str, np.ndarray]],
    verifier: HitVerifier,
    args: argparse.Namespace,
    out: Console,
) -> None:
    from .calibrate_cmd import build_candidates, frontier_table, print_frontier_summary
    from .frontier import frontier, split_parts

    kinds = {"cosine": True, "guard": True, "learned": True}
    for pairs in datasets:
        sims = {name: values.astype(np.float64) for name, values in all_sims[pairs.name].items()}
        parts = split_parts(pairs.labels, args.seed)
        candidates, _ = build_candidates(pairs, sims, parts, verifier, kinds, seed=args.seed)
        result = frontier(candidates, pairs.labels, parts, alpha=1.0 - args.confidence)
        out.print(frontier_table(result, pairs.name, list(sims), len(pairs)))
        print_frontier_summary(result, len(pairs), out)


def eval_main(argv: Sequence[str]) -> int:
    """``semcache eval --data FILE [FILE ...] --embedder NAME [NAME ...] --out DIR ...``"""
    args = _parse(_eval_parser(_cache_semantic()), argv)
    if isinstance(args, int):
        return args
    out, err = Console(soft_wrap=True), Console(stderr=True, soft_wrap=True)
    try:
        return _run_eval(args, out, err)
    except SemcacheError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return 2


def _calibrate_parser(cache: SemanticSettings | None = None) -> argparse.ArgumentParser:
    cache = cache if cache is not None else SemanticSettings()
    parser = argparse.ArgumentParser(
        prog="semcache calibrate",
        description="Certify, on one half of labeled pairs, the hit rule with the most recall "
        "whose false-hit rate is at most --target with --confidence (Learn-then-Test "
        "fixed-sequence testing), report the frontier for δ = 1, 2, 5, 10, 20%, and check "
        "the choice on the other half.",
    )
    parser.add_argument("--data", help=".jsonl/.csv/.tsv or hf:NAME[:SPLIT]")
    parser.add_argument(
        "--target", type=_fraction, required=True, help="false-hit rate δ, e.g. 0.05"
    )
    _add_recalibrate_options(parser)
    parser.add_argument(
        "--confidence", type=_fraction, default=0.95, help="confidence of the guarantee (0.95)"
    )
    parser.add_argument(
        "--embedder",
        nargs="+",
        default=[cache.embedder],
        help="one or more; each gives a cosine scorer, and a learned scorer uses all of "
        "them (the one whose cosine ranks the fitting pairs best is its search embedder); "
        f"default: the cache's, {cache.embedder}",
    )
    parser.add_argument(
        "--verifier",
        default=cache.verifier,
        help="answer guard for the 'guard' scorers ('none': no guard scorers); default: the "
        f"cache's, {cache.verifier}",
    )
    parser.add_argument(
        "--scorer",
        choices=["auto", "cosine", "guard", "learned", "plugin"],
        default="auto",
        help="which scorers to consider; 'auto': all (with --plugin, the plug-in too), the "
        "fitting part picks; 'plugin': the --plugin only",
    )
    parser.add_argument(
        "--model",
        choices=["auto", "logistic", "boosted-trees"],
        default="auto",
        help="learned scorer family ('auto': the better cross-validated one)",
    )
    parser.add_argument(
        "--fit-fraction",
        type=_fraction,
        default=1 / 3,
        help="share of the calibration half that fits and plans; the rest tests",
    )
    parser.add_argument("--namespace", help="save as this namespace's threshold")
    parser.add_argument("--save", type=Path, help=".env file to write the settings into")
    parser.add_argument(
        "--scorer-file",
        type=Path,
        help="where a learned or plug-in scorer is written (default: semcache-scorer.json "
        "beside --save)",
    )
    _add_plugin_options(parser)
    _add_data_options(parser, cache.runtime, cache.precision)
    return parser


def _add_plugin_options(parser: argparse.ArgumentParser) -> None:
    """A plug-in scorer (``semcache.eval.plugin_scores``): asked only inside a cosine band."""
    parser.add_argument(
        "--plugin",
        metavar="KIND:MODEL",
        help="also calibrate a plug-in scorer: cross-encoder:NAME_OR_PATH (sentence-"
        "transformers) or llm-judge:MODEL (any LiteLLM model); asked only about pairs whose "
        "cosine is inside a band fixed on the fitting part",
    )
    parser.add_argument(
        "--plugin-band",
        nargs=2,
        type=float,
        metavar=("LO", "HI"),
        help="the plug-in's cosine band instead of the fitted one: a miss below LO, a hit "
        "at or above HI (inf: always ask above LO)",
    )
    parser.add_argument("--judge-api-base", help="llm-judge: the API base URL")
    parser.add_argument(
        "--judge-api-key-env",
        metavar="VAR",
        help="llm-judge: the environment variable holding its API key (the file saves the "
        "name, never the key; default: LiteLLM's own variables)",
    )
    parser.add_argument(
        "--judge-timeout",
        type=_positive_float,
        help="llm-judge: seconds per call (default 10), saved for the cache",
    )


def _add_recalibrate_options(parser: argparse.ArgumentParser) -> None:
    """The tuning loop's options (``semcache.eval.recalibrate``)."""
    parser.add_argument(
        "--labels",
        action="append",
        type=Path,
        help="labeled pairs the cache recorded (tuning.labels_path, or labeled 'semcache "
        "misses' rows) with their 'similarity'; repeatable; with --data, both are used",
    )
    parser.add_argument(
        "--apply", action="store_true", help="with --labels: write the new threshold to --save"
    )
    parser.add_argument(
        "--max-change",
        type=float,
        default=0.15,
        help="with --labels: the most the threshold may be lowered in one step (cosine)",
    )
    parser.add_argument(
        "--no-thin",
        action="store_true",
        help="with --labels: use every recorded row (default: thin them to an "
        "equal-probability sample of traffic; see semcache.eval.recalibrate.thin)",
    )
    parser.add_argument(
        "--current",
        type=float,
        help="with --labels: the threshold now served (default: the cache's settings)",
    )
    parser.add_argument("--reload-url", help="with --apply: the proxy to reload, e.g. "
                        "http://127.0.0.1:8080")  # fmt: skip
    parser.add_argument(
        "--admin-key-env", help="variable holding the proxy's admin key (for --reload-url)"
    )


def calibrate_main(argv: Sequence[str]) -> int:
    """``semcache calibrate --data FILE --target 0.02 [--confidence 0.95] ...``"""
    args = _parse(_calibrate_parser(_cache_semantic()), argv)
    if isinstance(args, int):
        return args
    out, err = Console(soft_wrap=True), Console(stderr=True, soft_wrap=True)
    try:
        if args.labels or args.apply:
            if args.plugin is not None:
                raise ConfigError("--plugin calibrates on --data pairs; it cannot use --labels")
            from .recalibrate import run_recalibrate

            return run_recalibrate(args, _columns(args), out)
        if args.data is None:
            raise ConfigError("give --data FILE (or --labels FILE)")
        from .calibrate_cmd import run_calibrate

        return run_calibrate(args, _columns(args), out, err)
    except SemcacheError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
        return 2
