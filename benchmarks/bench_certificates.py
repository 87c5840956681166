"""Do ``semcache calibrate``'s certificates hold on pairs the calibration never saw?

For each dev set (read by path, never copied; at most ``--cap`` pairs) and each of
``--seeds`` seeds, the pairs are split as ``semcache calibrate --holdout CHECK`` splits them:
a *check* part (``--check``, default 30%) the calibration never touches, and of the rest a
fitting and a testing part. The full candidate procedure runs (cosine, cosine + guard,
learned, learned + guard: :func:`bench_calibration.candidates`) and, at each δ, the saved
choice's false hits on the check part are counted.

A certified choice is a **violation** when its check-part false-hit count is significantly
above δ: the one-sided exact binomial p-value P(X >= false hits | hits, δ) is under 5%.
Without a defect, a certificate holds with probability >= 95% and a true rate at δ is flagged
5% of the time, so violations should be at most about 5% of certified choices (fewer, since
most certified rates sit below δ). Printed per set and in total, with the looser "above δ +
1 point" count and, as the same-run baseline, the share a rule exactly at δ would be flagged.

Cosines and features are cached by ``_calib_cache.py`` (run it first, niced).
Usage: ``HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/bench_certificates.py --seeds 10``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binom

sys.path.insert(0, str(Path(__file__).parent))
from _calib_cache import CAP, DEV, cosines, embedders_for, features, load_set
from bench_calibration import ALPHA, DELTAS, candidates

from semcache.eval.frontier import DEFAULT_FIT_FRACTION, frontier, split_parts

SIGNIFICANCE = 0.05


def violated(false_hits: int, hits: int, delta: float) -> bool:
    """The check part's false hits are significantly above δ (one-sided exact test)."""
    return hits > 0 and float(binom.sf(false_hits - 1, hits, delta)) < SIGNIFICANCE


def run_set(path: Path, cap: int, seeds: int, fit: float, check: float) -> list[dict]:
    pairs = load_set(path, cap)
    labels = pairs.labels.astype(np.int64)
    sims = {e: cosines(pairs, e, cap) for e in embedders_for(pairs.name)}
    rest, verdicts = features(pairs, cap)
    rows = []
    for seed in range(seeds):
        parts = split_parts(labels, seed, fit, holdout=check)
        scored = candidates(sims, rest, verdicts, labels, parts, seed)
        result = frontier(scored, labels, parts, deltas=DELTAS, alpha=ALPHA, estimate_needed=False)
        for delta in DELTAS:
            row = result.chosen_result(delta)
            if row.threshold is None or row.held_out is None:
                continue
            held = row.held_out
            rows.append(
                {
                    "set": pairs.name,
                    "seed": seed,
                    "delta": delta,
                    "scorer": row.scorer,
                    "hits": held.hits,
                    "false_hits": held.false_hits,
                    "violated": violated(held.false_hits, held.hits, delta),
                    "over_1pt": held.hits > 0 and held.false_hits / held.hits > delta + 0.01,
                }
            )
    return rows


def at_delta_flag_rate(rows: list[dict]) -> float:
    """The share of these certificates a rule whose true rate is exactly δ would have flagged
    (the test's own size at each row's hit count): the baseline a sound procedure stays under."""
    if not rows:
        return 0.0
    sizes = []
    for r in rows:
        n, d = r["hits"], r["delta"]
        k = np.arange(n + 1)
        flagged = binom.sf(k - 1, n, d) < SIGNIFICANCE
        sizes.append(float(binom.pmf(k, n, d)[flagged].sum()))
    return float(np.mean(sizes))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dev", type=Path, default=DEV)
    parser.add_argument("--cap", type=int, default=CAP)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--fit", type=float, default=DEFAULT_FIT_FRACTION)
    parser.add_argument("--check", type=float, default=0.3)
    parser.add_argument("--only", nargs="*", default=None, help="substrings of set names")
    args = parser.parse_args()
    started = time.perf_counter()
    paths = sorted(args.dev.glob("*.jsonl"))
    if args.only:
        paths = [p for p in paths if any(o in p.name for o in args.only)]
    rows: list[dict] = []
    print(f"{'set':40} {'certified':>9} {'violations':>10} {'>δ+1pt':>7}")
    for path in paths:
        mine = run_set(path, args.cap, args.seeds, args.fit, args.check)
        rows += mine
        bad = sum(r["violated"] for r in mine)
        loose = sum(r["over_1pt"] for r in mine)
        print(f"{path.stem:40} {len(mine):9d} {bad:10d} {loose:7d}", flush=True)
        for r in mine:
            if r["violated"]:
                print(
                    f"    violation: seed {r['seed']} δ={r['delta']:.0%} {r['scorer']}: "
                    f"{r['false_hits']} wrong of {r['hits']} check-part hits"
                )
    bad = sum(r["violated"] for r in rows)
    share = bad / len(rows) if rows else 0.0
    print(
        f"\ncertified choices {len(rows)}; violations {bad} ({share:.1%}; target <= 5%); "
        f"a rule exactly at δ would be flagged in {at_delta_flag_rate(rows):.1%} of them; "
        f"above δ+1pt {sum(r['over_1pt'] for r in rows)}"
    )
    print(
        f"{len(paths)} sets x {args.seeds} seeds, cap {args.cap}, check {args.check:g}, "
        f"fit {args.fit:g}, {time.perf_counter() - started:.0f} s, "
        f"load average {os.getloadavg()}"
    )


if __name__ == "__main__":
    main()
