"""Per-pair cosines, guard verdicts and feature rows of the dev sets, computed once and kept.

Used by ``bench_calibration.py``. Embedding is the expensive part (e5 on LCQMC took 1,085 s
at load 10), so every (set, embedder, cap) triple's similarities are written under
``/tmp/calib_cache`` as ``.npy`` and reused; the lexical + guard feature rows and guard
verdicts are cached the same way per (set, cap). The sample of ``cap`` pairs is drawn with
seed 0 once per set (seeds vary the splits, not the sample). Only numbers are stored, never
text. Run it early and niced: ``nice -n 10 python benchmarks/_calib_cache.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from semcache.eval.data import PairSet, load_pairs
from semcache.eval.resolve import resolve_embedder, resolve_verifier
from semcache.eval.similarity import pair_similarities
from semcache.scoring.features import FeatureExtractor

CACHE = Path("/tmp/calib_cache")
DEV = Path("/work/shared/data/dev")
CAP = 3000
ENGLISH = ("minilm",)
CHINESE = ("use-multilingual", "e5-small-4bit")


def embedders_for(name: str) -> tuple[str, ...]:
    """The default configuration per language: MiniLM for English, the two multilingual
    embedders for Chinese (MiniLM is an English model)."""
    return CHINESE if name.startswith("zh_") else ENGLISH


def load_set(path: Path, cap: int = CAP) -> PairSet:
    return load_pairs(path, limit=cap, seed=0)


def _file(pairs: PairSet, what: str, cap: int) -> Path:
    return CACHE / f"{pairs.name}.cap{cap}.n{len(pairs)}.{what}.npy"


def cosines(pairs: PairSet, embedder: str, cap: int = CAP) -> np.ndarray:
    file = _file(pairs, embedder, cap)
    if file.exists():
        return np.load(file)
    started = time.perf_counter()
    values = pair_similarities(pairs, resolve_embedder(embedder, 64)).astype(np.float64)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(file, values)
    print(
        f"  embedded {pairs.name} with {embedder}: {len(pairs)} pairs, "
        f"{time.perf_counter() - started:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    return values


def features(pairs: PairSet, cap: int = CAP) -> tuple[np.ndarray, np.ndarray]:
    """(lexical + guard feature rows, guard verdicts) of ``pairs``."""
    rows_file, verdict_file = _file(pairs, "features", cap), _file(pairs, "verdicts", cap)
    if rows_file.exists() and verdict_file.exists():
        return np.load(rows_file), np.load(verdict_file)
    started = time.perf_counter()
    rows = FeatureExtractor().rows(pairs.text_a, pairs.text_b, np.zeros((len(pairs), 0)))
    guard = resolve_verifier("details")
    verdicts = np.array(
        [guard.verify(a, b) for a, b in zip(pairs.text_a, pairs.text_b, strict=True)]
    )
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(rows_file, rows)
    np.save(verdict_file, verdicts)
    print(
        f"  features of {pairs.name}: {time.perf_counter() - started:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    return rows, verdicts


def main() -> None:
    paths = sorted(DEV.glob("*.jsonl"))
    sets = [load_set(p) for p in paths]
    for pairs in sets:
        features(pairs)
    # cheapest first, so that figures exist early: MiniLM, then USE, then e5
    for embedder in ("minilm", "use-multilingual", "e5-small-4bit"):
        for pairs in sets:
            if embedder in embedders_for(pairs.name):
                cosines(pairs, embedder)


if __name__ == "__main__":
    main()
