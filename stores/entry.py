"""The one payload schema every backend stores: :class:`Entry`, a search :class:`Match`, and
the point id derived from an exact request key (re-storing a key overwrites its point)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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
    text; it is None on entries read back without vectors. ``metadata``: the caller's
    JSON object kept with the answer (``store(..., metadata=...)``), stored in the payload as
    ``metadata`` and matched by :attr:`Where.filters`; None when none was given.
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
    metadata: Mapping[str, Any] | None = None

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
            "metadata": None if self.metadata is None else dict(self.metadata),
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
            metadata=payload.get("metadata"),
        )


@dataclass(frozen=True, slots=True)
class Match:
    """A semantic search result: cosine ``similarity`` in [-1, 1], higher is closer."""

    entry: Entry
    similarity: float
