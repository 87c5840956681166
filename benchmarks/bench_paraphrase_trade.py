"""What a lower threshold, or a Chinese fallback embedder, would buy: collision-corpus
paraphrases served against wrong answers, on the corpus and on the dev sets.

The corpus side replays the cache's hit rule pair by pair, without a cache: a pair whose text
reaches past the embedder's window is exact-only (never served here: its texts differ), a
pair in a script the embedder cannot read is exact-only unless a fallback embedder reads it,
otherwise it is served when cosine >= threshold and the guard the cache runs accepts it (the
detail guard and the payload guard, with the same embedder). ``bench_collisions.py`` runs the
real cache at the default settings; this prints the same counts at other thresholds, the
default threshold first as the same-run baseline.

The dev-set side (read by path, never copied; at most 3,000 pairs each, seed 0, the sample of
``_calib_cache.py``, whose cosines it reuses): hits (cosine >= threshold, detail guard
accepts) and wrong hits among them, English sets with MiniLM, Chinese sets with the fallback.

Usage: ``HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/bench_paraphrase_trade.py``
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _calib_cache import CAP, DEV, cosines, load_set

from semcache import CacheSettings
from semcache.datasets import load_collisions
from semcache.embedders import load_embedder
from semcache.embedders.base import Embedder
from semcache.embedders.readability import readability_of
from semcache.embedders.window import unseen, window_of
from semcache.guard import DetailGuard
from semcache.guard.payload import PayloadGuard

THRESHOLDS = (0.95, 0.93, 0.92, 0.90, 0.88, 0.85)
FALLBACK_THRESHOLDS = (None, 0.97, 0.95, 0.93, 0.90)


@dataclass(frozen=True)
class Looked:
    """One corpus pair as the cache would look it up."""

    label: int
    lang: str
    lane: str  # "primary", "fallback" (unreadable by the primary), "exact" (never served)
    cosine: float
    accepted: bool  # the guard (detail + payload) accepts


def _cosine(embedder: Embedder, a: str, b: str) -> float:
    one, other = embedder.embed([a, b])
    return float(one @ other)


def look_up(primary: Embedder, fallback: Embedder) -> list[Looked]:
    guard = DetailGuard()
    rows = []
    reads = readability_of(primary)
    for pair in load_collisions():
        a, b = pair["text_a"], pair["text_b"]
        lane = "primary" if reads.reads(a) and reads.reads(b) else "fallback"
        embedder = primary if lane == "primary" else fallback
        if unseen(window_of(embedder), a) or unseen(window_of(embedder), b):
            rows.append(Looked(pair["label"], pair["lang"], "exact", 0.0, False))
            continue
        payload = PayloadGuard(guard, lambda _q, e=embedder: e)
        rows.append(
            Looked(pair["label"], pair["lang"], lane, _cosine(embedder, a, b), payload.verify(b, a))
        )
    return rows


def corpus_row(rows: list[Looked], threshold: float, fallback: float | None) -> str:
    def served(r: Looked) -> bool:
        limit = threshold if r.lane == "primary" else fallback
        return r.lane != "exact" and limit is not None and r.cosine >= limit and r.accepted

    positives = [r for r in rows if r.label == 1]
    wrong = sum(served(r) for r in rows if r.label == 0)
    paraphrases = sum(served(r) for r in positives)
    negatives = sum(r.label == 0 for r in rows)
    return (
        f"{paraphrases:>4} of {len(positives)} ({paraphrases / len(positives):.0%})"
        f"{wrong:>6} of {negatives}"
    )


def dev_rows(guard: DetailGuard, fallback_name: str) -> None:
    print("\ndev sets (<= 3,000 pairs each): wrong hits of hits, cosine >= t and guard accepts")
    for path in sorted(DEV.glob("*.jsonl")):
        pairs = load_set(path, CAP)
        chinese = pairs.name.startswith("zh_")
        sims = cosines(pairs, fallback_name if chinese else "minilm", CAP)
        texts = zip(pairs.text_a, pairs.text_b, strict=True)
        accepted = np.array([guard.verify(a, b) for a, b in texts])
        wrong = pairs.labels == 0
        cells = []
        for t in FALLBACK_THRESHOLDS[1:] if chinese else THRESHOLDS:
            hit = (sims >= t) & accepted
            cells.append(f"{t:.2f}: {int((hit & wrong).sum())}/{int(hit.sum())}")
        print(f"  {pairs.name[:34]:34} {'  '.join(cells)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fallback", default="use-multilingual", help="Chinese fallback")
    parser.add_argument("--no-dev", action="store_true", help="the corpus only")
    args = parser.parse_args()
    default = CacheSettings().semantic.threshold
    primary, fallback = load_embedder("minilm"), load_embedder(args.fallback)
    rows = look_up(primary, fallback)
    positives = [r for r in rows if r.label == 1]
    print(
        f"collision corpus, replayed hit rule (default threshold {default} first); paraphrase "
        f"pairs exact-only past the window: {sum(r.lane == 'exact' for r in positives)}, "
        f"Chinese (fallback lane): {sum(r.lane == 'fallback' for r in positives)}"
    )
    print(f"{'threshold':>9} {'fallback':>9} {'paraphrases served':>18} {'wrong':>12}")
    for threshold in (default, *(t for t in THRESHOLDS if t != default)):
        for fb in FALLBACK_THRESHOLDS:
            name = "-" if fb is None else f"{fb:.2f}"
            print(f"{threshold:>9.2f} {name:>9} {corpus_row(rows, threshold, fb):>31}")
    if not args.no_dev:
        dev_rows(DetailGuard(), args.fallback)


if __name__ == "__main__":
    main()
