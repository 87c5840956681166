"""A bounded text -> vector LRU in front of the embedder.

A question is looked up, then written, then often asked again; embedding is a pure function
of the embedder and the text, so keys are ``(embedder name, text)`` and the name carries
everything that changes the vectors: one LRU may serve several embedders without handing
one's vector to another. Bounded by entry count; thread-safe; vectors handed out are
read-only views.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from semcache.errors import ConfigError

from ._common import as_text_list
from .base import Embedder

DEFAULT_ENTRIES = 4096


class VectorCache:
    """Least-recently-used vectors by ``(embedder name, text)``, at most ``max_entries``."""

    def __init__(self, max_entries: int = DEFAULT_ENTRIES) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 0:
            raise ConfigError(f"max_entries must be an int >= 0, got {max_entries!r}")
        self._max = max_entries
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, embedder: str, text: str) -> np.ndarray | None:
        with self._lock:
            vector = self._vectors.get((embedder, text))
            if vector is None:
                self.misses += 1
                return None
            self._vectors.move_to_end((embedder, text))
            self.hits += 1
            return vector

    def put(self, embedder: str, text: str, vector: np.ndarray) -> None:
        if self._max == 0:
            return
        frozen = np.array(vector, dtype=np.float32)  # our own copy, then read-only
        frozen.setflags(write=False)
        with self._lock:
            self._vectors[(embedder, text)] = frozen
            self._vectors.move_to_end((embedder, text))
            while len(self._vectors) > self._max:
                self._vectors.popitem(last=False)


class CachedEmbedder:
    """An :class:`~semcache.embedders.Embedder` that embeds only texts ``cache`` lacks.

    Same ``name`` and ``dim`` as ``inner``; one ``embed`` call embeds the missing texts in
    one batch (each distinct text once) and returns rows in the caller's order.
    """

    def __init__(self, inner: Embedder, cache: VectorCache) -> None:
        self.inner = inner
        self._cache = cache

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r})"

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = as_text_list(texts)
        name = self.inner.name
        found = [self._cache.get(name, text) for text in texts]
        missing = list(dict.fromkeys(t for t, v in zip(texts, found, strict=True) if v is None))
        if missing:
            fresh = np.asarray(self.inner.embed(missing), dtype=np.float32)
            made = dict(zip(missing, fresh, strict=True))
            for text, vector in made.items():
                self._cache.put(name, text, vector)
            found = [made[t] if v is None else v for t, v in zip(texts, found, strict=True)]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = [vector for vector in found if vector is not None]  # every text found by now
        return np.vstack(rows).astype(np.float32, copy=False)
