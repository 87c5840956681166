"""Options that ``semcache eval`` and ``semcache calibrate`` share, and their checks."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from semcache.config.settings import CacheSettings, SemanticSettings

from .data import Columns
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


def cosine(text: str) -> float:
    """One cosine threshold, in [-1, 1]."""
    value = float(text)
    if not -1.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a cosine threshold in [-1, 1]")
    return value


def fraction(text: str) -> float:
    """A number strictly between 0 and 1 (a rate or a confidence)."""
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not strictly between 0 and 1")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not 0.0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    """Parsed arguments, or argparse's exit status (``--help``: 0, bad usage: 2)."""
    try:
        return parser.parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


def add_data_options(
    parser: argparse.ArgumentParser, runtime: str = "auto", precision: str = "auto"
) -> None:
    parser.add_argument("--limit", type=positive_int, help="keep a seeded random N pairs per file")
    parser.add_argument("--seed", type=int, default=0, help="seed for --limit and splits")
    parser.add_argument("--text-a", default="text_a", help="column of the first text")
    parser.add_argument("--text-b", default="text_b", help="column of the second text")
    parser.add_argument("--label", default="label", help="column of the 0/1 label")
    parser.add_argument(
        "--batch-size",
        type=positive_int,
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
        type=positive_int,
        help="CPU threads of every local runtime (torch, ONNX Runtime, USE, e5; default: each "
        "runtime's choice); on a busy machine 1 thread can be faster than fighting for cores",
    )


def columns_of(args: argparse.Namespace) -> Columns:
    return Columns(text_a=args.text_a, text_b=args.text_b, label=args.label)


def cache_semantic() -> SemanticSettings:
    """The cache's own semantic settings: by default eval and calibrate measure exactly the
    embedder, runtime and guard the cache runs (``SEMCACHE_*`` / ``.env``)."""
    return CacheSettings().semantic
