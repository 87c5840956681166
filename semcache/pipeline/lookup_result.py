"""What one semantic lookup found and how the hit rule judged it: plain values, no I/O.

Kept apart from :mod:`semcache.pipeline.semantic_tier` (which owns the embedder, store and
guard) so the stages that pass these values on need not know the tier's machinery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from semcache.stores.base import Match

if TYPE_CHECKING:
    from semcache.scoring.decide import Outcome


@dataclass(frozen=True, slots=True)
class Lookup:
    """Result of one semantic lookup; ``vector`` is reused to store the answer on a miss."""

    vector: np.ndarray
    match: Match | None
    nearest: float | None
    rejected: bool = False
    score: float | None = None
    outcome: Outcome | None = None
    candidate: Match | None = None  # the nearest live entry, served or not


@dataclass(frozen=True, slots=True)
class Search:
    """The question's vector and the nearest live entry in its partition, not yet judged;
    ``others``: the next nearest, closest first, judged only when the guard vetoes ``best``
    (:meth:`SemanticTier.settle`)."""

    vector: np.ndarray
    best: Match | None
    others: tuple[Match, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """The hit rule's answer for one candidate; ``rejected``: over the threshold but vetoed
    by the verifier; ``score``: the scorer's score when one ran (None otherwise);
    ``outcome``: with a scorer, why it decided so (None without one)."""

    hit: bool
    rejected: bool = False
    score: float | None = None
    outcome: Outcome | None = None
