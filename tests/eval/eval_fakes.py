"""Fakes for the eval tests: an embedder whose cosines the test chooses, a counting verifier."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np


def unit(angle: float) -> list[float]:
    """A 2-d unit vector; the cosine of two of them is cos(angle difference)."""
    return [float(np.cos(angle)), float(np.sin(angle))]


def with_cosine(cosine: float) -> list[float]:
    """The 2-d unit vector whose cosine with (1, 0) is ``cosine``."""
    return unit(float(np.arccos(cosine)))


class FakeEmbedder:
    """Returns chosen vectors (others: a seeded random one per text) and records every call."""

    def __init__(self, vectors: Mapping[str, Sequence[float]] | None = None, dim: int = 2):
        self.vectors = {k: np.asarray(v, dtype=np.float32) for k, v in (vectors or {}).items()}
        self._dim = dim
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return "fake"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def embedded(self) -> Counter[str]:
        return Counter(text for call in self.calls for text in call)

    def _vector(self, text: str) -> np.ndarray:
        if text in self.vectors:
            return self.vectors[text]
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).normal(size=self._dim).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([self._vector(t) for t in texts]).astype(np.float32)


class DigitsVerifier:
    """Rejects a pair whose texts contain different digits; counts its calls."""

    name = "digits"

    def __init__(self) -> None:
        self.calls = 0

    def verify(self, query: str, candidate: str) -> bool:
        self.calls += 1
        return sorted(c for c in query if c.isdigit()) == sorted(
            c for c in candidate if c.isdigit()
        )


def write_jsonl(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


TINY = [
    (0.995, 1),
    (0.985, 1),
    (0.975, 0),
    (0.965, 1),
    (0.955, 1),
    (0.945, 0),
    (0.935, 1),
    (0.925, 0),
    (0.915, 1),
    (0.905, 0),
    (0.80, 0),
    (0.50, 0),
]
"""(cosine with 'anchor', label) for each tiny pair."""
