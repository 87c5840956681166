"""``InMemoryStore``: the in-process double of the vector store: brute-force cosine over numpy,
the same :class:`~semcache.stores.Where` rules and conformance suite as the real backends,
nothing on disk and nothing surviving ``close``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from semcache.errors import EmbedderMismatchError, StoreError
from semcache.stores import Entry, Match, Selection, Where, is_live


class InMemoryStore:
    """:class:`~semcache.stores.VectorStore` and :class:`~semcache.stores.StoreAdmin` in a dict.

    ``upserted`` keeps every entry ever written, in order (overwritten ones too), so a test
    can check exactly what the cache stored. Safe to call from several threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._embedder: str | None = None
        self._dim = 0
        self._entries: dict[str, Entry] = {}  # without vectors, as lookups return them
        self._vectors: dict[str, np.ndarray] = {}  # unit length (cosine = dot product)
        self._upserted: list[Entry] = []

    @property
    def upserted(self) -> tuple[Entry, ...]:
        """Every entry passed to :meth:`upsert` since construction, in order."""
        with self._lock:
            return tuple(self._upserted)

    # -- VectorStore ----------------------------------------------------------------------

    def setup(self, embedder: str, dim: int) -> None:
        with self._lock:
            if self._embedder is None:
                self._embedder, self._dim = embedder, dim
            elif (self._embedder, self._dim) != (embedder, dim):
                raise EmbedderMismatchError(
                    f"store was set up for embedder {self._embedder!r} (dim {self._dim}), not "
                    f"{embedder!r} (dim {dim}); vectors of two models cannot be compared: "
                    "use another store"
                )

    def close(self) -> None:
        with self._lock:
            self._embedder, self._dim = None, 0
            self._entries.clear()
            self._vectors.clear()

    def retrieve(self, key: str, where: Where) -> Entry | None:
        with self._lock:
            self._check_open()
            return where.retrieved(key, self._entries.get(key))

    def nearest(self, vector: np.ndarray, where: Where) -> Match | None:
        matches = self.nearest_k(vector, where, 1)
        return matches[0] if matches else None

    def nearest_k(self, vector: np.ndarray, where: Where, k: int) -> list[Match]:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise StoreError(f"k must be an int >= 1, got {k!r}")
        with self._lock:
            self._check_open()
            query = self._unit(vector, "query vector")
            admitted = [entry for entry in self._entries.values() if where.admits(entry)]
            if not admitted:
                return []
            similarities = np.stack([self._vectors[e.key] for e in admitted]) @ query
        order = np.argsort(-similarities, kind="stable")[:k]
        return [Match(admitted[i], similarity=float(similarities[i])) for i in order]

    def upsert(self, entries: Sequence[Entry]) -> None:
        with self._lock:
            self._check_open()
            rows = []
            for entry in entries:  # all checked before any is stored
                if entry.vector is None:
                    raise StoreError(f"entry {entry.key!r} has no vector")
                rows.append((replace(entry, vector=None), self._unit(entry.vector, entry.key)))
            for (stored, vector), entry in zip(rows, entries, strict=True):
                self._entries[stored.key] = stored
                self._vectors[stored.key] = vector
                self._upserted.append(entry)

    def purge_expired(self, now: float) -> int:
        with self._lock:
            self._check_open()
            doomed = [k for k, e in self._entries.items() if not is_live(e.expires_at, now)]
            return self._drop(doomed)

    # -- StoreAdmin -----------------------------------------------------------------------

    def purge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        selection = Selection(tenant=tenant, namespace=namespace, model=model)
        with self._lock:
            self._check_open()
            return self._drop([k for k, e in self._entries.items() if selection.selects(e)])

    def count(self) -> int:
        with self._lock:
            self._check_open()
            return len(self._entries)

    def recent(self, *, tenant: str | None = None, limit: int = 50) -> list[Entry]:
        selection = Selection(tenant=tenant)
        with self._lock:
            self._check_open()
            chosen = [e for e in self._entries.values() if selection.selects(e)]
        return sorted(chosen, key=lambda e: e.created_at, reverse=True)[:limit]

    # -- helpers --------------------------------------------------------------------------

    def _check_open(self) -> None:
        """The caller holds ``_lock``."""
        if self._embedder is None:
            raise StoreError("store is not open; call setup() first")

    def _unit(self, vector: np.ndarray, what: str) -> np.ndarray:
        """``vector`` scaled to unit length; the caller holds ``_lock``."""
        array = np.asarray(vector, dtype=np.float32)
        if array.shape != (self._dim,):
            raise StoreError(f"{what}: expected a vector of dim {self._dim}, got {array.shape}")
        norm = float(np.linalg.norm(array))
        return array / norm if norm > 0 else array

    def _drop(self, keys: list[str]) -> int:
        """The caller holds ``_lock``."""
        for key in keys:
            del self._entries[key]
            del self._vectors[key]
        return len(keys)
