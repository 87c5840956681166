"""Issue 25: how many dev sets ``semcache calibrate`` certifies, and whether it holds.

For each dev set (read by path, never copied; at most ``--cap`` pairs, a seeded sample) and
each of ``--seeds`` seeds, this runs exactly what ``semcache calibrate --holdout CHECK``
runs (:func:`semcache.eval.frontier.frontier`): a *check* part (``--check``, default 30%)
that the calibration never touches, then of the rest a fitting part (``--fit``) and a
testing part. Candidates: each embedder's cosine, the same with answer-guard vetoes, a
learned scorer over every embedder's cosine, lexical features and the guard's per-rule
mismatches, and that learned scorer under the guard's veto (English: MiniLM; Chinese:
use-multilingual + e5-small-4bit, the default Chinese configuration). Printed:

- sets certified at δ = 5, 10, 20% (mean over seeds) by the configuration calibrate saves;
- each saved choice's false-hit rate on the check part, flagged when above δ + 1 point;
- learned vs best cosine per set: certified (testing-part) recall of the whole procedure
  (``auto``: learned with its features as fallbacks) against the procedure with cosines
  only (``--scorer cosine``), each run alone on the same parts;
- LCQMC at δ = 5%: certified recall of the saved choice;
- the hindsight ceiling: sets where some candidate's threshold, chosen by looking at the
  calibration pairs' labels, passes the exact binomial test on them (not a valid result);
- the baseline measured in the same run: the previous default procedure (halves, a third
  of the calibration half fitting, no α split) on the same calibration pairs.

Cosines and feature rows are cached (``_calib_cache.py``). Prints the load average.
Usage: ``HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/bench_calibration.py``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _calib_cache import CAP, DEV, cosines, embedders_for, features, load_set

from semcache.eval.frontier import (
    DEFAULT_FIT_FRACTION,
    Frontier,
    ScoredParts,
    frontier,
    guarded,
    learned_parts,
    scored_parts,
    split_parts,
)
from semcache.eval.parts import Parts, vetoed
from semcache.eval.scorer_fit import average_precision

DELTAS = (0.05, 0.10, 0.20)
ALPHA = 0.05
LAST_FIT, LAST_SHARE = 0.2, 0.8
"""Issue 25's first procedure (a fifth fitting, 0.8·α to the first-ranked scorer), run on
the same check part as the same-run baseline of the current one."""


def candidates(
    sims: dict[str, np.ndarray],
    rest: np.ndarray,
    verdicts: np.ndarray,
    labels: np.ndarray,
    parts: Parts,
    seed: int,
) -> list[ScoredParts]:
    out = [scored_parts(f"cosine:{e}", s, parts) for e, s in sims.items()]
    out += [scored_parts(f"guard:{e}", guarded(s, verdicts), parts) for e, s in sims.items()]
    rows = np.column_stack([*sims.values(), rest])
    primary = max(sims, key=lambda e: average_precision(sims[e][parts.fit], labels[parts.fit]))
    learned = learned_parts("learned", rows, labels, parts, list(sims), primary, seed=seed).scored
    return [*out, learned, vetoed(learned, verdicts, parts, "details")]


def oracle(scores: np.ndarray, labels: np.ndarray, delta: float) -> float:
    """The hindsight ceiling: the most recall of a threshold whose exact binomial test on
    these (fitting + testing) pairs rejects 'rate > δ' at α, the threshold chosen by looking
    at their labels; never a valid result, only what no procedure on them can beat by much."""
    from scipy.stats import binom

    from semcache.eval.ltt import counts_at

    grid = np.unique(scores[np.isfinite(scores)])[::-1]
    hits, wrong = counts_at(scores, labels, grid)
    ok = binom.cdf(wrong, hits, delta) <= ALPHA
    return float(((hits - wrong)[ok]).max(initial=0) / max(int((labels == 1).sum()), 1))


def recall(result: Frontier, delta: float) -> float:
    row = result.chosen_result(delta)
    return 0.0 if row.testing is None else row.testing.recall


def run_set(
    path: Path,
    cap: int,
    seeds: int,
    fit: float,
    check: float,
    english: tuple[str, ...] | None = None,
) -> dict[str, object]:
    pairs = load_set(path, cap)
    labels = pairs.labels.astype(np.int64)
    names = embedders_for(pairs.name)
    if english and not pairs.name.startswith("zh_"):
        names = english
    sims = {e: cosines(pairs, e, cap) for e in names}
    rest, verdicts = features(pairs, cap)
    runs = []
    for seed in range(seeds):
        parts = split_parts(labels, seed, fit, holdout=check)
        everything = candidates(sims, rest, verdicts, labels, parts, seed)
        full = frontier(
            everything, labels, parts, deltas=DELTAS, alpha=ALPHA, estimate_needed=False
        )
        cos = [s for s in everything if s.kind == "cosine"]
        only_cos = frontier(cos, labels, parts, deltas=DELTAS, alpha=ALPHA, estimate_needed=False)
        last_parts = split_parts(labels, seed, LAST_FIT, holdout=check)
        last = frontier(
            candidates(sims, rest, verdicts, labels, last_parts, seed),
            labels,
            last_parts,
            deltas=DELTAS,
            alpha=ALPHA,
            first_share=LAST_SHARE,
            estimate_needed=False,
        )
        old_parts = _old_parts(labels, parts)
        old = frontier(
            candidates(sims, rest, verdicts, labels, old_parts, seed),
            labels,
            old_parts,
            deltas=DELTAS,
            alpha=ALPHA,
            first_share=1.0,
            estimate_needed=False,
        )
        calib_labels = np.concatenate([labels[parts.fit], labels[parts.test]])
        run: dict[str, object] = {"seed": seed}
        for d in DELTAS:
            row = full.chosen_result(d)
            held = row.held_out
            ceiling = max(
                oracle(np.concatenate([s.fit, s.test]), calib_labels, d) for s in everything
            )
            run[f"{d:g}"] = {
                "scorer": row.scorer,
                "certified": row.threshold is not None,
                "recall": recall(full, d),
                "cosine_recall": recall(only_cos, d),
                "old_certified": old.chosen_result(d).threshold is not None,
                "last_certified": last.chosen_result(d).threshold is not None,
                "last_recall": recall(last, d),
                "check_fhr": None if held is None else held.false_hit_rate,
                "check_hits": None if held is None else held.hits,
                "check_recall": None if held is None else held.recall,
                "ceiling": ceiling,
            }
        runs.append(run)
    return {"name": pairs.name, "pairs": len(pairs), "runs": runs}


def _old_parts(labels: np.ndarray, parts: Parts) -> Parts:
    """The previous default on the same calibration pairs: half of them held out as a
    report, a third of the other half fitting, two thirds testing."""
    calibration = np.sort(np.concatenate([parts.fit, parts.test]))
    inner = split_parts(labels[calibration], 0, 1 / 3, holdout=0.5)
    return Parts(calibration[inner.fit], calibration[inner.test], calibration[inner.held_out])


def _ratio(now: float, before: float) -> str:
    return f"{now / before:.2f}" if before > 0 else "n/a (baseline 0)"


def report(sets: list[dict[str, object]], seeds: int) -> None:
    print(
        f"\n{'set':34} {'pairs':>5}  "
        + "  ".join(f"δ={d:.0%} cert learned/cos chk-FHR" for d in DELTAS)
    )
    for s in sets:
        cells = []
        for d in DELTAS:
            runs = [r[f"{d:g}"] for r in s["runs"]]  # type: ignore[attr-defined]
            cert = sum(r["certified"] for r in runs)
            lrn = np.mean([r["recall"] for r in runs])
            cos = np.mean([r["cosine_recall"] for r in runs])
            fhrs = [r["check_fhr"] for r in runs if r["check_fhr"] is not None]
            worst = max(fhrs) if fhrs else None
            flag = "!" if worst is not None and worst > d + 0.01 else " "
            cells.append(
                f"{cert}/{seeds} {lrn:5.1%}/{cos:5.1%} "
                + ("   —  " if worst is None else f"{worst:5.1%}{flag}")
            )
        print(f"{s['name'][:34]:34} {s['pairs']:>5}  " + "  ".join(cells))
    print()
    for d in DELTAS:
        per_seed = [sum(s["runs"][k][f"{d:g}"]["certified"] for s in sets) for k in range(seeds)]  # type: ignore[index]
        old = [sum(s["runs"][k][f"{d:g}"]["old_certified"] for s in sets) for k in range(seeds)]  # type: ignore[index]
        last = [sum(s["runs"][k][f"{d:g}"]["last_certified"] for s in sets) for k in range(seeds)]  # type: ignore[index]
        ceiling = np.mean(
            [
                sum(s["runs"][k][f"{d:g}"]["ceiling"] > 0 for s in sets)  # type: ignore[index]
                for k in range(seeds)
            ]
        )
        over = [
            (s["name"], k, s["runs"][k][f"{d:g}"]["check_fhr"])
            for s in sets  # type: ignore[index]
            for k in range(seeds)
            if (s["runs"][k][f"{d:g}"]["check_fhr"] or 0.0) > d + 0.01
        ]  # type: ignore[index]
        at_least = sum(
            np.mean([r[f"{d:g}"]["recall"] for r in s["runs"]])  # type: ignore[index]
            >= np.mean([r[f"{d:g}"]["cosine_recall"] for r in s["runs"]]) - 1e-12
            for s in sets
        )
        more = sum(
            np.mean([r[f"{d:g}"]["recall"] for r in s["runs"]])  # type: ignore[index]
            > np.mean([r[f"{d:g}"]["cosine_recall"] for r in s["runs"]]) + 1e-12
            for s in sets
        )
        print(
            f"δ={d:.0%}: sets certified {np.mean(per_seed):.2f} of {len(sets)} (per seed "
            f"{per_seed}; previous procedure {np.mean(old):.2f}, ratio "
            f"{_ratio(float(np.mean(per_seed)), float(np.mean(old)))}; fit {LAST_FIT:g} + "
            f"{LAST_SHARE:g}·α to the first {np.mean(last):.2f} {last}); hindsight ceiling "
            f"{ceiling:.2f}; learned >= cosine on {at_least}/{len(sets)}, > on {more}; "
            f"check FHR > δ+1pt: {len(over)} {over}"
        )
    for s in sets:
        if str(s["name"]).startswith("zh_lcqmc"):
            vals = [r["0.05"]["recall"] for r in s["runs"]]  # type: ignore[index]
            lasts = [r["0.05"]["last_recall"] for r in s["runs"]]  # type: ignore[index]
            cos = [r["0.05"]["cosine_recall"] for r in s["runs"]]  # type: ignore[index]
            print(
                f"LCQMC δ=5% certified recall: mean {np.mean(vals):.1%} (seeds {vals}); "
                f"cosines only {np.mean(cos):.1%}; fit {LAST_FIT:g} + {LAST_SHARE:g}·α "
                f"{np.mean(lasts):.1%}"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dev", type=Path, default=DEV)
    parser.add_argument("--cap", type=int, default=CAP)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--fit", type=float, default=DEFAULT_FIT_FRACTION)
    parser.add_argument("--check", type=float, default=0.3)
    parser.add_argument("--only", nargs="*", default=None, help="substrings of set names")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--english", nargs="*", help="embedders for the English sets (default: minilm)"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    paths = sorted(args.dev.glob("*.jsonl"))
    if args.only:
        paths = [p for p in paths if any(o in p.name for o in args.only)]
    english = tuple(args.english) if args.english else None
    sets = [run_set(p, args.cap, args.seeds, args.fit, args.check, english) for p in paths]
    print(
        f"cap {args.cap}, {args.seeds} seeds, fit {args.fit:g} of the calibration pairs, "
        f"check part {args.check:g} (never touched), 95% confidence, "
        f"{time.perf_counter() - started:.0f} s, load average {os.getloadavg()}"
    )
    report(sets, args.seeds)
    if args.json:
        args.json.write_text(json.dumps(sets, indent=1, default=float))


if __name__ == "__main__":
    main()
