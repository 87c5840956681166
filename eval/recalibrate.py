"""``semcache calibrate --labels``: recalibrate from what the running cache recorded.

Input: labeled pairs the cache recorded (``tuning.labels_path`` or ``GET /admin/labels``:
feedback and shadow verdicts) and exported near misses once labeled (``semcache misses``),
each row carrying the cache's own cosine ``similarity``, plus any ``--data`` file of pairs
(embedded with the cache's embedder). The threshold is certified exactly as ``semcache
calibrate`` certifies one (:func:`semcache.eval.calibrate.calibrate`, Learn-then-Test at
``--target`` with ``--confidence``).

It reports the change before saving anything: the threshold, and on the held-out half of
the labeled pairs the share served (pairs at or over the threshold) and the wrong-answer
rate among them, at the current and the new threshold. These are rates on the labeled
pairs, which over-represent the region near the threshold (that is where labels are
collected), not rates on traffic; the live estimate (``stats().tuning``) reports traffic.
``--apply`` writes the threshold into ``--save`` (a ``.env`` file); ``--reload-url`` then
asks a running proxy to serve with it (``POST /admin/reload``).
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console

from semcache.errors import ConfigError
from semcache.settings import CacheSettings

from . import persist
from .calibrate import CalibrationResult, calibrate, split_stats
from .data import Columns, PairDataError, _label, _text, load_pairs
from .frontier import split_parts


@dataclass(frozen=True)
class LabeledScores:
    """Labeled pairs reduced to what calibration needs: a cosine and a 0/1 label each."""

    similarities: np.ndarray
    labels: np.ndarray
    sources: dict[str, int]


def read_recorded(path: str | Path) -> tuple[list[float], list[int]]:
    """Rows with ``text_a``, ``text_b``, ``label`` and ``similarity`` (the cache's cosine);
    a row whose label is still null stops loading with an error naming it."""
    path = Path(path)
    if not path.is_file():
        raise PairDataError(str(path), None, None, "no such file")
    sims: list[float] = []
    labels: list[int] = []
    where = str(path)
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                raise PairDataError(where, number, None, f"invalid JSON: {exc.msg}") from exc
            if not isinstance(row, dict):
                raise PairDataError(where, number, None, "expected a JSON object")
            _text(where, number, row, "text_a")
            _text(where, number, row, "text_b")
            if row.get("label") is None:
                raise PairDataError(where, number, "label", "is missing (label the row 0 or 1)")
            similarity = row.get("similarity")
            if isinstance(similarity, bool) or not isinstance(similarity, int | float):
                raise PairDataError(where, number, "similarity", "must be the cache's cosine")
            labels.append(_label(where, number, row, "label"))
            sims.append(float(similarity))
    if not labels:
        raise PairDataError(where, None, None, "contains no pairs")
    return sims, labels


def gather(args: argparse.Namespace, columns: Columns) -> LabeledScores:
    sims: list[float] = []
    labels: list[int] = []
    sources: dict[str, int] = {}
    for file in args.labels or []:
        s, y = read_recorded(file)
        sims += s
        labels += y
        sources[str(file)] = len(y)
    for source in [] if args.data is None else [args.data]:
        from .resolve import resolve_embedder
        from .similarity import pair_similarities

        pairs = load_pairs(source, columns=columns, limit=args.limit, seed=args.seed)
        embedder = resolve_embedder(args.embedder[0], args.batch_size, args.runtime)
        sims += [float(v) for v in pair_similarities(pairs, embedder)]
        labels += [int(v) for v in pairs.labels]
        sources[str(source)] = len(pairs)
    return LabeledScores(np.asarray(sims), np.asarray(labels, dtype=np.int64), sources)


def current_threshold(namespace: str | None) -> float:
    semantic = CacheSettings().semantic
    if namespace is not None and namespace in semantic.namespace_thresholds:
        return semantic.namespace_thresholds[namespace]
    return semantic.threshold


def run_recalibrate(args: argparse.Namespace, columns: Columns, out: Console) -> int:
    if args.apply and args.save is None:
        raise ConfigError("--apply writes the threshold into --save FILE: give --save")
    data = gather(args, columns)
    before = args.current if args.current is not None else current_threshold(args.namespace)
    result = calibrate(
        data.similarities,
        data.labels,
        args.target,
        confidence=args.confidence,
        seed=args.seed,
        fit_fraction=args.fit_fraction,
    )
    sources = ", ".join(f"{name} ({n})" for name, n in data.sources.items())
    out.print(f"labeled pairs: {len(data.labels)} from {sources}", highlight=False)
    if result.threshold is None:
        out.print(f"no change: {result.reason}", highlight=False)
        return 1
    report_change(data, result, before, args.seed, args.fit_fraction, out)
    if not args.apply:
        out.print("not saved (--apply writes it)", highlight=False)
        return 0
    persist.save_threshold(args.save, float(result.threshold), args.namespace)
    out.print(f"saved to {args.save}", highlight=False)
    if args.reload_url is not None:
        if args.admin_key_env is None:
            raise ConfigError("--reload-url needs --admin-key-env NAME (the admin key's variable)")
        reload_proxy(args.reload_url, os.environ.get(args.admin_key_env), out)
    return 0


def report_change(
    data: LabeledScores,
    result: CalibrationResult,
    before: float,
    seed: int,
    fit_fraction: float,
    out: Console,
) -> None:
    held = split_parts(data.labels, seed, fit_fraction).held_out
    sims, labels = data.similarities[held], data.labels[held]
    after = float(result.threshold)  # type: ignore[arg-type]
    old, new = split_stats(sims, labels, before), split_stats(sims, labels, after)
    out.print(
        f"threshold {before:.4f} -> {after:.4f} (cosine, hit when >=; certified false-hit "
        f"rate <= {result.target:g} at {result.confidence:.0%} confidence)",
        highlight=False,
    )
    for name, stats in (("before", old), ("after", new)):
        served = stats.hits / stats.pairs if stats.pairs else 0.0
        out.print(
            f"  {name}: served {served:.1%} of {stats.pairs} held-out labeled pairs, "
            f"wrong-answer rate {stats.false_hit_rate:.1%} "
            f"[{stats.false_hit_rate_lo:.1%}, {stats.false_hit_rate_hi:.1%}]",
            highlight=False,
        )


def reload_proxy(url: str, admin_key: str | None, out: Console) -> None:
    """``POST {url}/admin/reload`` with the admin key; raises ConfigError when refused."""
    import httpx

    if admin_key is None:
        raise ConfigError("--reload-url needs the admin key in --admin-key-env's variable")
    try:
        response = httpx.post(
            url.rstrip("/") + "/admin/reload",
            headers={"authorization": f"Bearer {admin_key}"},
            timeout=30,
        )
    except httpx.HTTPError as exc:
        raise ConfigError(f"reload at {url} failed: {exc}") from exc
    if response.status_code != 200:
        raise ConfigError(f"reload at {url} refused: HTTP {response.status_code} {response.text}")
    body = response.json()
    out.print(
        f"proxy reloaded: threshold {body['threshold_before']:.4f} -> "
        f"{body['threshold_after']:.4f}",
        highlight=False,
    )
