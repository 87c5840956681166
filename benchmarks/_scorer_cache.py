"""Per-pair cosine similarities of the dev sets, computed once per embedder and kept on disk.

Used by ``bench_scorer.py``. The machine is small and shared, so every (set, embedder) pair's
similarities are written to ``--cache`` (default ``/tmp/semcache_scorer_cache``) as ``.npy``
and reused; the key includes the set's file name, the pair count and the sampling seed.
Only similarities are stored, never text.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from semcache.eval.data import PairSet, load_pairs
from semcache.eval.resolve import resolve_embedder
from semcache.eval.similarity import pair_similarities

EMBEDDERS = ("minilm", "use-multilingual", "e5-small-4bit")
DEFAULT_CACHE = Path("/tmp/semcache_scorer_cache")
MAX_PAIRS = 6000


def load_set(path: Path, max_pairs: int = MAX_PAIRS, seed: int = 0) -> PairSet:
    return load_pairs(path, limit=max_pairs, seed=seed)


def cache_file(cache: Path, pairs: PairSet, embedder: str, seed: int) -> Path:
    return cache / f"{pairs.name}.{len(pairs)}.s{seed}.{embedder}.npy"


def cosines(pairs: PairSet, embedder: str, cache: Path, seed: int = 0) -> np.ndarray:
    """Similarities of ``pairs`` with ``embedder``, from the cache when present."""
    file = cache_file(cache, pairs, embedder, seed)
    if file.exists():
        return np.load(file)
    started = time.perf_counter()
    model = resolve_embedder(embedder, 64)
    values = pair_similarities(pairs, model)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(file, values)
    seconds = time.perf_counter() - started
    print(
        f"  embedded {pairs.name} with {embedder}: {len(pairs)} pairs, {seconds:.0f} s",
        file=sys.stderr,
    )
    return values


def main() -> None:
    dev = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/data/dev")
    names = sys.argv[2:] or list(EMBEDDERS)
    for embedder in names:
        for path in sorted(dev.glob("*.jsonl")):
            cosines(load_set(path), embedder, DEFAULT_CACHE)


if __name__ == "__main__":
    main()
