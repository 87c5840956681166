"""Does fine-tuning the embedder on the user's own labels raise what ``calibrate`` certifies?

For each English dev set (read by path, never copied) and each of ``--seeds`` seeds, the
set is split in halves by :func:`semcache.eval.splits.grouped_split` (pairs that share a text
stay on one side, so no text of the calibration half is ever trained on):

- the *fit* half (a seeded sample of at most ``--fit-cap`` pairs) fine-tunes MiniLM exactly as
  ``semcache finetune`` trains it (:func:`semcache.eval.finetune.train`: CoSENT, 2 epochs,
  16 pairs a step, the seed of the split);
- the *calibration* half (at most ``--calib-cap`` pairs) is calibrated as ``semcache
  calibrate --holdout 0.3`` does (:func:`semcache.eval.frontier.frontier` over the cosine,
  cosine + guard, learned and learned + guard candidates of ``bench_calibration.py``), once
  with the base MiniLM's cosines and once with the fine-tuned model's: the same pairs, parts
  and guard verdicts, in the same run (the base is the baseline).

Printed per set and seed as it finishes (and appended to ``--rows`` as JSON lines), then the
mean certified recall (testing-part recall of the saved choice, 0 where nothing certifies)
over sets and seeds at δ = 5, 10, 20%, base vs fine-tuned, and the mean fit time.
``--summary`` prints the summary of a rows file (a run stopped early included).

Usage: ``HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/bench_finetune.py --rows /tmp/ft.jsonl``
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_calibration import ALPHA, DELTAS, candidates, recall

from semcache.eval.data import PairSet, load_pairs
from semcache.eval.finetune import TrainOptions, free_cores, train
from semcache.eval.frontier import DEFAULT_FIT_FRACTION, frontier, split_parts
from semcache.eval.resolve import resolve_verifier
from semcache.eval.splits import grouped_split
from semcache.scoring.features import FeatureExtractor

DEV = Path("/work/shared/data/dev")
ENGLISH = (
    "en_qqp_gptcache_sample",
    "en_mrpc_test",
    "en_stsb_test",
    "en_sick_test",
    "en_banking77_intent_pairs_DERIVED",
    "en_redis_langcache_chatgpt_queries",
)


def cosines(model: object, pairs: PairSet) -> np.ndarray:
    """Each pair's cosine under a ``SentenceTransformer`` (unit vectors, so a dot product)."""
    a = model.encode(list(pairs.text_a), batch_size=64, normalize_embeddings=True)  # type: ignore[attr-defined]
    b = model.encode(list(pairs.text_b), batch_size=64, normalize_embeddings=True)  # type: ignore[attr-defined]
    return np.einsum("ij,ij->i", a, b).astype(np.float64)


def sample(rows: np.ndarray, cap: int, seed: int) -> np.ndarray:
    if len(rows) <= cap:
        return np.sort(rows)
    return np.sort(np.random.default_rng(seed).choice(rows, cap, replace=False))


def certified(sims: np.ndarray, pairs: PairSet, seed: int, check: float) -> dict[str, float]:
    """Certified (testing-part) recall at each δ of the calibration ``calibrate`` runs."""
    labels = pairs.labels.astype(np.int64)
    rest = FeatureExtractor().rows(pairs.text_a, pairs.text_b, np.zeros((len(pairs), 0)))
    guard = resolve_verifier("details")
    verdicts = np.array(
        [guard.verify(a, b) for a, b in zip(pairs.text_a, pairs.text_b, strict=True)]
    )
    parts = split_parts(labels, seed, DEFAULT_FIT_FRACTION, holdout=check)
    scored = candidates({"minilm": sims}, rest, verdicts, labels, parts, seed)
    result = frontier(scored, labels, parts, deltas=DELTAS, alpha=ALPHA, estimate_needed=False)
    return {f"{d:g}": recall(result, d) for d in DELTAS}


def halves(pairs: PairSet, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(calibration, fit)`` rows, no text on both sides. By groups of pairs that share a
    text when that splits the set; in a set whose pairs all chain together through shared
    texts (Banking77's intent pairs), by text: each text goes to one side at random, and a
    pair whose two texts went to different sides is used by neither."""
    calib, fit = grouped_split(pairs.text_a, pairs.text_b, 0.5, seed)
    if min(len(calib), len(fit)) >= len(pairs) // 4:
        return calib, fit
    texts = sorted({" ".join(t.lower().split()) for t in (*pairs.text_a, *pairs.text_b)})
    to_fit = dict(zip(texts, np.random.default_rng(seed).random(len(texts)) < 0.5, strict=True))
    side_a = np.array([to_fit[" ".join(t.lower().split())] for t in pairs.text_a])
    side_b = np.array([to_fit[" ".join(t.lower().split())] for t in pairs.text_b])
    return np.flatnonzero(~side_a & ~side_b), np.flatnonzero(side_a & side_b)


def run_one(base: object, path: Path, seed: int, args: argparse.Namespace) -> dict[str, object]:
    pairs = load_pairs(path)
    calib_rows, fit_rows = halves(pairs, seed)
    fit = pairs.take(sample(fit_rows, args.fit_cap, seed))
    calib = pairs.take(sample(calib_rows, args.calib_cap, seed))
    model = copy.deepcopy(base)
    started = time.perf_counter()
    train(model, fit, TrainOptions(epochs=args.epochs, seed=seed))
    fit_s = time.perf_counter() - started
    return {
        "set": path.stem,
        "seed": seed,
        "fit_pairs": len(fit),
        "calib_pairs": len(calib),
        "fit_s": round(fit_s, 1),
        "threads": int(__import__("torch").get_num_threads()),
        "load": round(os.getloadavg()[0], 1),
        "base": certified(cosines(base, calib), calib, seed, args.check),
        "tuned": certified(cosines(model, calib), calib, seed, args.check),
    }


def summary(rows: list[dict]) -> None:
    if not rows:
        print("no rows")
        return
    skipped = [f"{r['set']}/{r['seed']}" for r in rows if r["fit_pairs"] == 0]
    rows = [r for r in rows if r["fit_pairs"] > 0]  # nothing trained: no comparison
    if skipped:
        print(f"left out, nothing trained: {', '.join(skipped)}")
    done = sorted({(r["set"], r["seed"]) for r in rows})
    print(f"\n{len(rows)} (set, seed) runs: {', '.join(f'{s}/{n}' for s, n in done)}")
    for key in (f"{d:g}" for d in DELTAS):
        b = float(np.mean([r["base"][key] for r in rows]))
        t = float(np.mean([r["tuned"][key] for r in rows]))
        print(
            f"δ={float(key):.0%}: mean certified recall base {b:.1%}, fine-tuned {t:.1%} "
            f"({(t - b) * 100:+.1f} points)"
        )
    fit_s = [r["fit_s"] for r in rows]
    pairs = [r["fit_pairs"] for r in rows]
    print(
        f"fit time: mean {np.mean(fit_s):.0f} s, max {max(fit_s):.0f} s "
        f"(mean {np.mean(pairs):.0f} pairs, {args_epochs(rows)} epochs; load averages "
        f"{min(r['load'] for r in rows)}-{max(r['load'] for r in rows)}, "
        f"threads {sorted({r['threads'] for r in rows})})"
    )


def args_epochs(rows: list[dict]) -> object:
    return rows[0].get("epochs", 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", type=Path, default=DEV)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--fit-cap", type=int, default=1500)
    parser.add_argument("--calib-cap", type=int, default=1500)
    parser.add_argument("--check", type=float, default=0.3)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=None, help="substrings of set names")
    parser.add_argument("--rows", type=Path, help="append each run's row here (JSON lines)")
    parser.add_argument("--summary", type=Path, help="only summarize this rows file")
    args = parser.parse_args()
    if args.summary is not None:
        summary([json.loads(line) for line in args.summary.read_text().splitlines() if line])
        return
    import torch

    import semcache.guard.rules  # noqa: F401  # the guard as it is now, for the whole run
    from semcache.embedders import load_embedder

    torch.set_num_threads(free_cores())
    base = load_embedder("minilm", runtime="torch", precision="float32").model  # type: ignore[attr-defined]
    names = [n for n in ENGLISH if not args.only or any(o in n for o in args.only)]
    rows = []
    started = time.perf_counter()
    for seed in range(args.seeds):  # seed-major: a run stopped early still covers every set
        for name in names:
            row = run_one(base, args.dev / f"{name}.jsonl", seed, args)
            row["epochs"] = args.epochs
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.rows is not None:
                with args.rows.open("a") as handle:
                    handle.write(json.dumps(row) + "\n")
    summary(rows)
    print(f"{time.perf_counter() - started:.0f} s in all; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
