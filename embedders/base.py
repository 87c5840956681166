"""The embedder interface.

An embedder turns texts into L2-normalised float32 vectors so that a dot product is the
cosine similarity the thresholds are stated in. ``name`` must identify the model exactly
(it is recorded in the store: vectors of two models are never mixed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), float32, each row L2-normalised.

        May raise :class:`semcache.errors.EmbedderError`.
        """
        ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as contiguous float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)
