"""The plug point: a ``HitScorer`` says how likely one stored answer serves a new query."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class HitScorer(Protocol):
    """Scores a semantic candidate; higher means more likely the same answer serves both.

    ``similarity`` is the cosine similarity the semantic search found between ``query`` and
    ``candidate`` with the cache's embedder (scorers that do not use it ignore it). Scores are
    compared with a threshold calibrated for this scorer; scales differ between scorers (a
    probability for learned models, a logit or probability for cross-encoders, 0/1 for a
    judge), so a threshold never moves from one scorer to another.
    """

    @property
    def name(self) -> str: ...

    def score(self, query: str, candidate: str, similarity: float) -> float: ...
