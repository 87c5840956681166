"""The vector-store interface and the one payload schema every backend stores.

A store holds :class:`Entry` records keyed by the exact request key. Point ids are derived
from that key, so re-storing overwrites, and an exact lookup is a retrieve by id. Semantic
search is always filtered by tenant AND namespace AND scope AND ``expires_at > now``: no
backend may answer across those partitions.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

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
    def from_payload(cls, payload: dict, vector: np.ndarray | None = None) -> Entry:
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
    """Where entries live. Every method may raise :class:`semcache.errors.StoreError`.

    ``setup`` is the only method that creates or opens anything (constructors do no I/O).
    It records ``embedder``/``dim`` in the collection and raises
    :class:`semcache.errors.EmbedderMismatchError` when an existing collection was made
    with another embedder or dimension.
    """

    def setup(self, embedder: str, dim: int) -> None: ...

    def upsert(self, entries: Sequence[Entry]) -> None:
        """Insert or overwrite entries (each must carry a vector)."""
        ...

    def retrieve(self, key: str, *, tenant: str, namespace: str, now: float) -> Entry | None:
        """The live entry stored under ``key`` in this tenant and namespace, else None."""
        ...

    def search(
        self,
        vector: np.ndarray,
        *,
        tenant: str,
        namespace: str,
        scope: str,
        now: float,
        threshold: float,
        limit: int = 1,
    ) -> list[Match]:
        """Nearest live entries in the partition with cosine similarity >= threshold, best first."""
        ...

    def delete(self, keys: Sequence[str]) -> None: ...

    def purge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        """Delete every entry matching all given fields (all entries if none); return the count."""
        ...

    def purge_expired(self, now: float) -> int:
        """Delete entries with ``expires_at <= now``; return the count."""
        ...

    def count(self) -> int: ...

    def recent(self, *, tenant: str | None = None, limit: int = 50) -> list[Entry]:
        """Most recently created entries (newest first), for operators' audits."""
        ...

    def close(self) -> None: ...
