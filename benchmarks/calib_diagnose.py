"""Issue 25: where certification power is lost, per set / δ / seed (a diagnosis, not a result).

For every cell where the hindsight ceiling certifies but the procedure saves nothing, this
says why, by re-running pieces of the procedure with one thing changed (each a hindsight
probe on the *testing* part, never a valid result, never the check part):

- ``test-too-small``: no threshold of any candidate passes the exact test at the full α on
  the testing part alone (the ceiling also counts the fitting part's pairs);
- ``alpha-split``: the first-ranked scorer's own planned sequence fails at its share of α
  but would pass at the full α;
- ``other-scorer``: a lower-ranked scorer's planned sequence passes at the full α;
- ``start-too-loose`` / ``start-too-strict``: the first-ranked scorer's planned start fails
  at the full α while a stricter / looser threshold of its grid passes on the testing part.

Usage: ``HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/calib_diagnose.py [--only lcqmc]``
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _calib_cache import CAP, DEV, cosines, embedders_for, features, load_set
from bench_calibration import ALPHA, DELTAS, candidates, oracle

from semcache.eval.frontier import frontier, split_parts
from semcache.eval.ltt import counts_at, fixed_sequence, rejection_limit


def why(everything, labels, parts, full, delta) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    test_labels = labels[parts.test]
    order = full.ranked[delta]
    by_name = {s.name: s for s in everything}
    if max(oracle(s.test, test_labels, delta) for s in everything) == 0:
        return "test-too-small", ""
    first = full.rows[(order[0], delta)]
    s = by_name[order[0]]
    at_full = fixed_sequence(s.test, test_labels, first.plan.thresholds, delta, ALPHA)
    detail = (
        f"first={order[0]} level={first.alpha:.3f} start={first.plan.thresholds[0]:.3f}"
        f" stopped={first.walk.stopped_counts} chance={first.plan.pass_chance:.2f}"
    )
    if at_full.threshold is not None:
        return "alpha-split", detail
    for name in order[1:]:
        plan = full.rows[(name, delta)].plan
        if not len(plan.thresholds):
            continue
        if (
            fixed_sequence(by_name[name].test, test_labels, plan.thresholds, delta, ALPHA).threshold
            is not None
        ):
            return "other-scorer", detail + f" passes={name}"
    grid = np.unique(s.test[np.isfinite(s.test)])[::-1]
    hits, wrong = counts_at(s.test, test_labels, grid)
    ok = wrong <= rejection_limit(hits, delta, ALPHA)
    start = first.plan.thresholds[0] if len(first.plan.thresholds) else np.inf
    if ok[grid > start].any():
        return "start-too-loose", detail
    if ok[grid < start].any():
        return "start-too-strict", detail
    return "first-scorer-cannot", detail


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--fit", type=float, default=0.2)
    parser.add_argument("--first-share", type=float, default=None)
    args = parser.parse_args()
    paths = sorted(DEV.glob("*.jsonl"))
    if args.only:
        paths = [p for p in paths if any(o in p.name for o in args.only)]
    reasons: Counter[str] = Counter()
    for path in paths:
        pairs = load_set(path, CAP)
        labels = pairs.labels.astype(np.int64)
        sims = {e: cosines(pairs, e, CAP) for e in embedders_for(pairs.name)}
        rest, verdicts = features(pairs, CAP)
        for seed in range(args.seeds):
            parts = split_parts(labels, seed, args.fit, holdout=0.3)
            everything = candidates(sims, rest, verdicts, labels, parts, seed)
            extra = {} if args.first_share is None else {"first_share": args.first_share}
            full = frontier(
                everything,
                labels,
                parts,
                deltas=DELTAS,
                alpha=ALPHA,
                estimate_needed=False,
                **extra,
            )
            calib = np.concatenate([labels[parts.fit], labels[parts.test]])
            for d in DELTAS:
                row = full.chosen_result(d)
                ceiling = max(oracle(np.concatenate([s.fit, s.test]), calib, d) for s in everything)
                pred = {n: round(full.predicted[(n, d)], 3) for n in full.ranked[d]}
                if row.threshold is not None:
                    print(
                        f"{pairs.name[:20]:20} s{seed} δ={d:.0%} certified {row.scorer} "
                        f"recall {row.testing.recall:.1%} (ceiling {ceiling:.1%}) "  # type: ignore[union-attr]
                        f"ranked {pred}"
                    )
                    continue
                if ceiling == 0:
                    continue
                reason, detail = why(everything, labels, parts, full, d)
                reasons[f"δ={d:.0%} {reason}"] += 1
                print(
                    f"{pairs.name[:20]:20} s{seed} δ={d:.0%} LOST {reason}: {detail} "
                    f"(ceiling {ceiling:.1%}) ranked {pred}"
                )
    print(dict(sorted(reasons.items())), "load", os.getloadavg())


if __name__ == "__main__":
    main()
