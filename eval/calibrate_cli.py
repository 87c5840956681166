"""``semcache calibrate``: choose a threshold (or a scorer) for a false-hit target.

Returns a process exit status: 0 success, 1 no configuration meets the target, 2 bad
arguments or unusable data / embedder / verifier names.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from semcache.cli import OneLineParser
from semcache.config.settings import SemanticSettings
from semcache.errors import ConfigError, SemcacheError

from .options import (
    add_data_options,
    cache_semantic,
    columns_of,
    fraction,
    parse_args,
    positive_float,
)
from .parts import DEFAULT_FIT_FRACTION


def _calibrate_parser(cache: SemanticSettings | None = None) -> argparse.ArgumentParser:
    cache = cache if cache is not None else SemanticSettings()
    parser = OneLineParser(
        prog="semcache calibrate",
        description="Certify the hit rule with the most recall whose false-hit rate is at "
        "most --target with --confidence (Learn-then-Test fixed-sequence testing: a fitting "
        "part plans, all the other pairs test), report the frontier for δ = 1, 2, 5, 10, "
        "20%, and with --holdout check the choice on pairs the calibration never touched.",
    )
    parser.add_argument("--data", help=".jsonl/.csv/.tsv or hf:NAME[:SPLIT]")
    parser.add_argument(
        "--target", type=fraction, required=True, help="false-hit rate δ, e.g. 0.05"
    )
    _add_recalibrate_options(parser)
    parser.add_argument(
        "--confidence", type=fraction, default=0.95, help="confidence of the guarantee (0.95)"
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
        "fitting part picks; 'learned': the learned scorer with and without the guard's "
        "veto; 'plugin': the --plugin only",
    )
    parser.add_argument(
        "--model",
        choices=["auto", "logistic", "boosted-trees"],
        default="auto",
        help="learned scorer family ('auto': the better cross-validated one; logistic "
        "only under 1,000 fitting pairs)",
    )
    parser.add_argument(
        "--fit-fraction",
        type=fraction,
        default=DEFAULT_FIT_FRACTION,
        help=f"share of the calibration pairs that fits and plans ({DEFAULT_FIT_FRACTION:g}); "
        "all the rest tests",
    )
    parser.add_argument(
        "--holdout",
        type=fraction,
        metavar="FRACTION",
        help="also keep FRACTION of the pairs aside, never used by the calibration, and "
        "report the choice on them (costs test power; docs/calibration.md)",
    )
    parser.add_argument(
        "--add-collisions",
        action="store_true",
        help="also calibrate on the label-0 pairs of semcache's collision corpus whose texts "
        "every --embedder reads (long shared contexts, templates, antonyms, numbers, entities, "
        "code, negations): the certified false-hit rate then covers those shapes too",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document instead of tables"
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
    add_data_options(parser, cache.runtime, cache.precision)
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
        type=positive_float,
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
    parser.add_argument(
        "--reload-url", help="with --apply: the proxy to reload, e.g. http://127.0.0.1:8080"
    )
    parser.add_argument(
        "--admin-key-env", help="variable holding the proxy's admin key (for --reload-url)"
    )


def calibrate_main(argv: Sequence[str]) -> int:
    """``semcache calibrate --data FILE --target 0.02 [--confidence 0.95] ...``"""
    args = parse_args(_calibrate_parser(cache_semantic()), argv)
    if isinstance(args, int):
        return args
    return run(args)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``semcache calibrate``'s options on the one ``semcache`` parser (:mod:`semcache.cli`)."""
    from semcache.cli import adopt

    adopt(parser, _calibrate_parser(cache_semantic()))


def run(args: argparse.Namespace) -> int:
    """Calibrate (or recalibrate from --labels); the exit status (module docstring)."""
    out, err = Console(soft_wrap=True), Console(stderr=True, soft_wrap=True)
    try:
        if args.labels or args.apply:
            if args.plugin is not None:
                raise ConfigError("--plugin calibrates on --data pairs; it cannot use --labels")
            if args.add_collisions:
                raise ConfigError(
                    "--add-collisions calibrates on --data pairs; it cannot use --labels"
                )
            from .recalibrate import run_recalibrate

            return run_recalibrate(args, columns_of(args), out)
        if args.data is None:
            raise ConfigError("give --data FILE (or --labels FILE)")
        from .calibrate_cmd import run_calibrate

        return run_calibrate(args, columns_of(args), out, err)
    except SemcacheError as exc:
        err.print(f"[red]semcache calibrate: error:[/red] {escape(str(exc))}", highlight=False)
        return 2
