"""The plug point: a ``HitScorer`` says how likely one stored answer serves a new query."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class HitScorer(Protocol):
    """Scores a semantic candidate; higher means more likely the same answer serves both.

    ``similarity`` is the search's cosine (ignored by scorers that do not use it). Scales differ
    between scorers, so a threshold never moves from one scorer to another.
    """

    @property
    def name(self) -> str: ...

    def score(self, query: str, candidate: str, similarity: float) -> float: ...
