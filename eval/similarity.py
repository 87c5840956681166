"""Cosine similarity of each pair, embedding every distinct text exactly once.

Embedding dominates an evaluation's cost, so repeated texts are embedded once, sorted by
length in chunks of a few hundred so batches pad little; a chunk is the unit of progress.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np

from semcache.embedders.base import Embedder, l2_normalise
from semcache.errors import EmbedderError

from .data import PairSet

Progress = Callable[[int, int], None]
"""Called after each chunk with (texts embedded so far, texts to embed in all)."""

DEFAULT_CHUNK_SIZE = 512


def distinct_texts(pairs: PairSet) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The distinct texts of both columns, and each pair's two indices into them."""
    position: dict[str, int] = {}
    for text in (*pairs.text_a, *pairs.text_b):
        position.setdefault(text, len(position))
    index_a = np.fromiter((position[t] for t in pairs.text_a), np.int64, len(pairs))
    index_b = np.fromiter((position[t] for t in pairs.text_b), np.int64, len(pairs))
    return list(position), index_a, index_b


def embed_texts(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: Progress | None = None,
) -> np.ndarray:
    """Unit vectors for ``texts`` (row ``i`` for ``texts[i]``), embedded shortest first.

    Rows are re-normalised, so a dot product is a cosine even for an embedder that breaks
    the unit-length contract. A batch of the wrong shape raises :class:`EmbedderError`.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    order = np.argsort(np.fromiter(map(len, texts), np.int64, len(texts)), kind="stable")
    vectors = np.empty((len(texts), embedder.dim), dtype=np.float32)
    for start in range(0, len(texts), chunk_size):
        rows = order[start : start + chunk_size]
        batch = np.asarray(embedder.embed([texts[i] for i in rows]))
        if batch.shape != (len(rows), embedder.dim):
            raise EmbedderError(
                f"embedder {embedder.name!r} returned shape {batch.shape} for "
                f"{len(rows)} texts; expected {(len(rows), embedder.dim)}"
            )
        vectors[rows] = batch
        if progress is not None:
            progress(start + len(rows), len(texts))
    return l2_normalise(vectors)


def pair_similarities(
    pairs: PairSet,
    embedder: Embedder,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: Progress | None = None,
) -> np.ndarray:
    """Cosine similarity of ``text_a[i]`` and ``text_b[i]`` for every pair (float32, in [-1, 1])."""
    texts, index_a, index_b = distinct_texts(pairs)
    vectors = embed_texts(embedder, texts, chunk_size=chunk_size, progress=progress)
    similarity = np.einsum("ij,ij->i", vectors[index_a], vectors[index_b])
    return cast(np.ndarray, np.clip(similarity, -1.0, 1.0).astype(np.float32))
