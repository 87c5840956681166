"""int8 vs float32 all-MiniLM-L6-v2 on ONNX Runtime: ranking quality and speed, same run.

Quality: for each dev pair set (read by path from ``--data``, subsampled with a fixed seed),
cosine similarities of every pair under both precisions, then ROC AUC and recall at a fixed
false-positive rate (share of label-0 pairs scored at or above the threshold). Speed:
seconds to embed every distinct text of the sets (one process, same threads) and the median
latency of a one-question embed. Similarities are cached under ``--cache`` (default /tmp),
so a rerun re-prints without re-embedding. Prints the load average next to the timings.

    python benchmarks/bench_int8.py --data ../shared/data/dev --pairs 1000
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

from semcache.embedders.onnx_runtime import OnnxEmbedder
from semcache.eval.data import load_pairs
from semcache.eval.similarity import distinct_texts, pair_similarities

FPRS = (0.01, 0.05)


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Probability a random positive outscores a random negative (ties count half)."""
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    for value in np.unique(scores):  # average ranks of ties
        tied = scores == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    positives = labels == 1
    n_pos, n_neg = int(positives.sum()), int((~positives).sum())
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def recall_at_fpr(scores: np.ndarray, labels: np.ndarray, fpr: float) -> float:
    negatives = np.sort(scores[labels == 0])[::-1]
    allowed = int(np.floor(fpr * len(negatives)))
    threshold = negatives[allowed] if allowed < len(negatives) else -np.inf
    return float((scores[labels == 1] > threshold).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/dev")
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--cache", default="/tmp/semcache-bench-int8")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    embedders = {p: OnnxEmbedder(precision=p, threads=args.threads) for p in ("float32", "int8")}
    for embedder in embedders.values():
        embedder.embed(["warm up"])
    files = sorted(Path(args.data).glob("*.jsonl"))
    header = f"{'set':40} {'pairs':>5} " + " ".join(
        f"{'AUC ' + p:>12} " + " ".join(f"{'R@' + str(f) + ' ' + p[:4]:>12}" for f in FPRS)
        for p in embedders
    )
    print(header)
    seconds = dict.fromkeys(embedders, 0.0)
    for file in files:
        pairs = load_pairs(file, limit=args.pairs, seed=0)
        row = f"{pairs.name[:40]:40} {len(pairs):5d} "
        for precision, embedder in embedders.items():
            saved = cache / f"{pairs.name}-{len(pairs)}-{precision}.npy"
            if saved.exists():
                sims = np.load(saved)
            else:
                started = time.perf_counter()
                sims = pair_similarities(pairs, embedder)
                seconds[precision] += time.perf_counter() - started
                np.save(saved, sims)
            labels = pairs.labels
            row += f"{auc(sims, labels):12.4f} " + " ".join(
                f"{recall_at_fpr(sims, labels, f):12.4f}" for f in FPRS
            )
            row += " "
        print(row, flush=True)
    texts, _, _ = distinct_texts(load_pairs(files[0], limit=args.pairs, seed=0))
    print(f"\nload average before timing: {os.getloadavg()}")
    for precision, embedder in embedders.items():
        started = time.perf_counter()
        embedder.embed(texts)
        batch_s = time.perf_counter() - started
        one = []
        for text in texts[:200]:
            started = time.perf_counter()
            embedder.embed([text])
            one.append(time.perf_counter() - started)
        print(
            f"{precision:8}: {len(texts)} texts in {batch_s:.2f} s ({len(texts) / batch_s:.0f}/s); "
            f"one question median {statistics.median(one) * 1000:.2f} ms; "
            f"all sets embedded in {seconds[precision]:.1f} s (0 if cached)"
        )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
