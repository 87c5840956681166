"""The vector-store interface and the one payload schema every backend stores.

A store holds :class:`Entry` records keyed by the exact request key. Point ids are derived
from that key, so re-storing overwrites, and an exact lookup is a retrieve by id. Which
entries a lookup may see is decided by :class:`~semcache.stores.where.Where`, in one place;
a backend only translates it into its own filter language. The request path needs
:class:`VectorStore`; operators' operations are the optional :class:`StoreAdmin`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from .entry import NEVER_EXPIRES, POINT_NAMESPACE, Entry, Match, point_id
from .where import Where

__all__ = [
    "NEVER_EXPIRES",
    "POINT_NAMESPACE",
    "Entry",
    "Integrity",
    "Match",
    "RecordedEmbedder",
    "StoreAdmin",
    "StoreIntegrity",
    "StoreWatermark",
    "VectorStore",
    "Where",
    "point_id",
]


@runtime_checkable
class VectorStore(Protocol):
    """Where entries live, and how they are found: by exact key, or by meaning.

    Contracts every backend keeps (the conformance suite checks each one):

    * Constructors do no I/O. ``setup`` opens or creates the store and records
      ``embedder``/``dim``; it raises :class:`semcache.errors.EmbedderMismatchError` when an
      existing store was made with another embedder or dimension. Calling it again with the
      same pair is harmless. Every other method raises :class:`StoreError` before ``setup``.
    * Lookups see only what ``where`` admits (:meth:`Where.admits`: tenant, namespace, scope
      and embedder equal, ``now < expires_at``). Backends filter in their engine and re-check
      the result (``Where.retrieved``, ``Where.verified``), so no lookup ever answers across
      a partition or serves an expired entry.
    * Any failure of the backend or its library is raised as :class:`StoreError` (the cache
      degrades it to a counted miss); nothing else escapes but programming errors.
    * Safe to call from several threads.
    """

    def setup(self, embedder: str, dim: int) -> None:
        """Open or create the store for vectors of ``embedder`` with ``dim`` components."""
        ...

    def close(self) -> None:
        """Flush and release everything ``setup`` opened; closing twice is harmless."""
        ...

    def retrieve(self, key: str, where: Where) -> Entry | None:
        """The entry stored under exact ``key`` if ``where`` admits it, else None."""
        ...

    def nearest(self, vector: np.ndarray, where: Where) -> Match | None:
        """The entry ``where`` admits whose vector is closest to ``vector`` (cosine), or None.

        No threshold: the semantic tier decides whether the similarity is close enough, and
        reports how close a miss came. ``Match.entry.vector`` is None (vectors are not read
        back). A ``vector`` of the wrong dimension raises :class:`StoreError`.
        """
        ...

    def nearest_k(self, vector: np.ndarray, where: Where, k: int) -> list[Match]:
        """Up to ``k`` entries ``where`` admits, closest first (``nearest`` is the first of
        them). ``where.filters`` narrow the search inside the partition; like ``nearest``
        each result is re-checked (``Where.verified``). ``k < 1`` raises :class:`StoreError`.
        """
        ...

    def upsert(self, entries: Sequence[Entry]) -> None:
        """Insert or overwrite entries by key. Each must carry a vector of the set-up ``dim``,
        else :class:`StoreError` (entries of a failed batch may or may not be stored)."""
        ...

    def purge_expired(self, now: float) -> int:
        """Delete every entry with ``expires_at <= now``; return how many were deleted."""
        ...


@runtime_checkable
class RecordedEmbedder(Protocol):
    """Optional: a store on disk that can say, without opening it, which embedder and
    dimension it was made with, so the cache can open it for exact reads (which need no
    vector) while the model still loads after a restart."""

    def recorded_embedder(self) -> tuple[str, int] | None:
        """``(embedder, dim)`` of the existing store; None when there is none yet or it
        cannot be read (``setup`` then reports why)."""
        ...


@runtime_checkable
class StoreAdmin(Protocol):
    """Operators' operations, optional: a store that lacks them still serves the cache.

    Every method may raise :class:`StoreError`. ``purge`` is what makes "a purge always wins"
    true for stored entries, so a cache refuses to purge a store without it.
    """

    def purge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        """Delete every entry matching all given fields (every entry if none is given);
        return how many were deleted."""
        ...

    def count(self) -> int:
        """Entries stored, expired ones included until they are purged."""
        ...

    def recent(self, *, tenant: str | None = None, limit: int = 50) -> list[Entry]:
        """At most ``limit`` entries, newest ``created_at`` first (vectors not read back),
        of one tenant or of all; for operators' audits of what is served."""
        ...


@dataclass(frozen=True, slots=True)
class Integrity:
    """What a store found wrong with its own files since it was opened: ``reopened`` (times its
    directory was found deleted or replaced and reopened), ``last_problem`` and ``last_at``
    (``time.monotonic``).
    """

    reopened: int = 0
    last_problem: str | None = None
    last_at: float | None = None


@runtime_checkable
class StoreIntegrity(Protocol):
    """Optional: a store that checks its own files reports what it found (for ``health``)."""

    def integrity(self) -> Integrity:
        """Problems found and repaired since ``setup``."""
        ...


@runtime_checkable
class StoreWatermark(Protocol):
    """Optional: a store shared by several processes applies a model-snapshot change itself,
    so what one process noticed withdraws the older answers for all of them."""

    def mark_model(self, model: str, before: float) -> int:
        """Withdraw answers of ``model`` created before ``before`` (epoch seconds) and refuse
        later writes of such answers; return how many were removed."""
        ...
