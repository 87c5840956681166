"""The in-flight index of the merge stage: which followable questions are in flight where.

Questions are compared only inside their partition, by cosine of unit vectors; one event
loop, not thread-safe (see :mod:`semcache.pipeline.merge`).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from semcache.pipeline.base import Found

Partition = tuple[str, str, str, str]
"""(tenant, namespace, scope, embedder): questions are only ever compared inside one (a
routed question's vector is the fallback embedder's: never compared with the primary's)."""


class CallStart(NamedTuple):
    """When a hedged request's upstream call began: its fence ``token`` (a purge after it is
    seen) and ``at``, monotonic seconds (:meth:`MergeStage.begin`)."""

    token: int
    at: float


@dataclass(frozen=True, slots=True)
class InFlightQuestion:
    """A leader that may be followed: its flight key, question, unit vector and fence token.

    ``started``: when its upstream call began, or will begin after the gathering hold
    (monotonic seconds): a hedged miss whose own call is under way follows it only when it
    began soon enough after its own (:meth:`MergeStage.adopt`).
    ``landed``: the leader's finished answer while its store write is pending (a follower is
    served it directly: there is no flight left to join); None while the call runs.
    """

    key: object
    prompt: str
    vector: np.ndarray
    token: int
    started: float
    landed: Found | None = None


class InFlight:
    """The followable in-flight questions of each partition (one event loop, not thread-safe)."""

    def __init__(self) -> None:
        self._by_partition: dict[Partition, dict[object, InFlightQuestion]] = {}
        #: Counts additions: a caller that awaited between two looks knows whether to look again.
        self.added = 0

    def add(self, partition: Partition, question: InFlightQuestion) -> None:
        self._by_partition.setdefault(partition, {})[question.key] = question
        self.added += 1

    def remove(self, partition: Partition, key: object) -> None:
        questions = self._by_partition.get(partition)
        if questions is not None and questions.pop(key, None) is not None and not questions:
            del self._by_partition[partition]

    def nearest(
        self, partition: Partition, vector: np.ndarray
    ) -> tuple[InFlightQuestion, float] | None:
        """The in-flight question most similar to unit ``vector`` (cosine), or None."""
        found = self.nearest_k(partition, vector, 1)
        return found[0] if found else None

    def nearest_k(
        self, partition: Partition, vector: np.ndarray, k: int
    ) -> list[tuple[InFlightQuestion, float]]:
        """The ``k`` in-flight questions most similar to unit ``vector``, nearest first."""
        questions = self._by_partition.get(partition)
        if not questions:
            return []
        scored = [(q, float(np.dot(q.vector, vector))) for q in questions.values()]
        return heapq.nlargest(k, scored, key=lambda pair: pair[1])

    def __len__(self) -> int:
        return sum(len(questions) for questions in self._by_partition.values())


def unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    v = np.asarray(vector, dtype=np.float32)
    return v / norm if norm > 0 else v
