"""The vector-store interface and the one payload schema every backend stores.

A store holds :class:`Entry` records keyed by the exact request key. Point ids are derived
from that key, so re-storing overwrites, and an exact lookup is a retrieve by id. Which
entries a lookup may see is decided by :class:`~semcache.stores.where.Where`, in one place;
a backend only translates it into its own filter language. The request path needs
:class:`VectorStore`; operators' operations are the optional :class:`StoreAdmin`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .where import Where

#: ``expires_at`` of an entry that never expires (9999-12-31, epoch seconds). Qdrant range
#: filters need a finite number, so "forever" is a far-future timestamp, not infinity.
NEVER_EXPIRES = 253_402_300_799.0

#: Namespace for point ids: uuid5(POINT_NAMESPACE, key). Changing it orphans stored points.
POINT_NAMESPACE = uuid.UUID("6f1c1e5a-3b9e-4a53-9a0c-5e6d2f1b7c11")


def point_id(key: str) -> str:
    """Deterministic Qdrant point id (UUID string) for an exact request key."""
    return str(uuid.uuid5(POINT_NAMESPACE, key))


@dataclass(frozen=True, slots=True)
class Entry:
    """One cached answer.

    Times are wall-clock epoch seconds. ``response`` is the serialised LiteLLM
    ``ModelResponse`` JSON. ``question`` is the last user message (None when question
    storage is switched off). ``vector`` is the L2-normalised embedding of ``question``
    text; it is None on entries read back without vectors.
    """

    key: str
    tenant: str
    namespace: str
    model: str
    scope: str
    response: str
    created_at: float
    expires_at: float
    embedder: str
    question: str | None = None
    vector: np.ndarray | None = field(default=None, compare=False, repr=False)

    def payload(self) -> dict[str, object]:
        """The payload stored next to the vector (everything but the vector)."""
        return {
            "key": self.key,
            "tenant": self.tenant,
            "namespace": self.namespace,
            "model": self.model,
            "scope": self.scope,
            "question": self.question,
            "response": self.response,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "embedder": self.embedder,
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], vector: np.ndarray | None = None) -> Entry:
        return cls(
            key=payload["key"],
            tenant=payload["tenant"],
            namespace=payload["namespace"],
            model=payload["model"],
            scope=payload["scope"],
            question=payload.get("question"),
            response=payload["response"],
            created_at=float(payload["created_at"]),
            expires_at=float(payload["expires_at"]),
            embedder=payload["embedder"],
            vector=vector,
        )


@dataclass(frozen=True, slots=True)
class Match:
    """A semantic search result: cosine ``similarity`` in [-1, 1], higher is closer."""

    entry: Entry
    similarity: float


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

    def upsert(self, entries: Sequence[Entry]) -> None:
        """Insert or overwrite entries by key. Each must carry a vector of the set-up ``dim``,
        else :class:`StoreError` (entries of a failed batch may or may not be stored)."""
        ...

    def purge_expired(self, now: float) -> int:
        """Delete every entry with ``expires_at <= now``; return how many were deleted."""
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
    """What a store found wrong with its own files since it was opened.

    ``reopened``: times the store found its directory deleted or replaced under it and
    reopened it (writes after that land in the new directory; what the lost one held is
    gone). ``last_problem``: what it found last; ``last_at``: when (``time.monotonic``).
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
