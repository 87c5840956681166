"""How far the certified choice is from what any valid test could certify, over split seeds.

For each dev set (cosines cached by ``_scorer_cache.py``; features by ``bench_scorer.py``) and
each split seed, this runs what ``semcache calibrate`` runs (cosine and guard scorers per
embedder, plus a logistic learned scorer) and counts, per δ, the sets where

- the configuration chosen on the fitting part is certified (Learn-then-Test), and
- the *oracle* certifies: some threshold of some scorer passes the exact binomial test on
  the testing part when chosen in hindsight on the testing labels (``bench_scorer.oracle``),
  the most any valid procedure testing on that part could reach.

One seed is one split; a set near the edge of what its sample can certify goes one way or
the other from seed to seed, which is why a count from seed 0 alone is a noisy figure.

Usage: ``python benchmarks/ltt_power.py [--seeds 6] [--embedders minilm e5-small-4bit]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _scorer_cache import DEFAULT_CACHE, cosines, load_set
from bench_scorer import ALPHA, features, oracle

from semcache.eval.frontier import (
    DEFAULT_FIT_FRACTION,
    frontier,
    guarded,
    learned_parts,
    scored_parts,
    split_parts,
)
from semcache.eval.scorer_fit import average_precision

DELTAS = (0.05, 0.10)


def run(dev: Path, embedders: tuple[str, ...], seeds: int, fit_fraction: float) -> None:
    sets = []
    for path in sorted(dev.glob("*.jsonl")):
        pairs = load_set(path)
        sims = {e: cosines(pairs, e, DEFAULT_CACHE).astype(np.float64) for e in embedders}
        rows = features(pairs, sims, DEFAULT_CACHE)
        sets.append((pairs.name, pairs.labels.astype(np.int64), sims, rows))
    per: dict[tuple[str, float], list[int]] = {}
    totals = {d: ([], []) for d in DELTAS}
    held = {d: [0, 0] for d in DELTAS}
    for seed in range(seeds):
        for name, labels, sims, rows in sets:
            guard_ok = rows[:, -6:].sum(axis=1) == 0
            parts = split_parts(labels, seed, fit_fraction)
            fit_labels = labels[parts.fit]
            primary = max(sims, key=lambda e: average_precision(sims[e][parts.fit], fit_labels))
            scorers = [scored_parts(f"cosine:{e}", s, parts) for e, s in sims.items()]
            scorers += [
                scored_parts(f"guard:{e}", guarded(s, guard_ok), parts) for e, s in sims.items()
            ]
            scorers.append(
                learned_parts(
                    "lr", rows, labels, parts, list(sims), primary, kind="logistic", seed=seed
                ).scored
            )
            result = frontier(scorers, labels, parts, deltas=DELTAS, alpha=ALPHA)
            for d in DELTAS:
                chosen = result.chosen_result(d)
                certified = chosen.threshold is not None
                feasible = max(oracle(s.test, labels[parts.test], d) for s in scorers) > 0
                cell = per.setdefault((name, d), [0, 0])
                cell[0] += certified
                cell[1] += feasible
                if certified:
                    held[d][0] += bool(chosen.holds)
                    held[d][1] += 1
        for d in DELTAS:
            totals[d][0].append(sum(per[(n, d)][0] for n, *_ in sets))
            totals[d][1].append(sum(per[(n, d)][1] for n, *_ in sets))
    print(
        f"embedders {', '.join(embedders)}; {seeds} split seeds; fit fraction "
        f"{fit_fraction:.3g}; 95% confidence\n"
    )
    print("| δ | certified sets, mean per seed | oracle-certifiable, mean | held on held-out |")
    print("|---|---|---|---|")
    for d in DELTAS:
        certified = np.diff([0, *totals[d][0]])
        feasible = np.diff([0, *totals[d][1]])
        print(
            f"| {d:.0%} | {certified.mean():.2f} {certified.tolist()} | {feasible.mean():.2f} "
            f"| {held[d][0]} of {held[d][1]} |"
        )
    print("\n| set | δ | certified (seeds) | oracle-certifiable (seeds) |")
    print("|---|---|---|---|")
    for (name, d), (certified, feasible) in per.items():
        print(f"| {name} | {d:.0%} | {certified} of {seeds} | {feasible} of {seeds} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dev", type=Path, default=Path("../shared/data/dev"))
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--embedders", nargs="+", default=["minilm", "e5-small-4bit"])
    parser.add_argument("--fit-fraction", type=float, default=DEFAULT_FIT_FRACTION)
    args = parser.parse_args()
    run(args.dev, tuple(args.embedders), args.seeds, args.fit_fraction)


if __name__ == "__main__":
    main()
