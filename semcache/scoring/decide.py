"""The decision the semantic tier asks for: is this candidate a hit?

Pure logic over a scorer, a threshold and a :class:`~semcache.scoring.band.ScoreBand`;
:meth:`ScoredDecision.decide` takes the stored question and the search cosine. A candidate
below the band costs one comparison (no feature, no extra embedding). The global cosine
threshold is not applied, since the calibrated guarantee is for this rule alone; a namespace
threshold stays an extra floor and the guard is a veto only when the file says so. ``decide``
may raise :class:`~semcache.errors.ScorerError`, which the semantic tier degrades to a miss.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from semcache.embedders.base import Embedder

from ._guard import HitVerifier, get_verifier
from .band import ScoreBand
from .base import HitScorer
from .learned import LearnedScorer
from .saved import SavedScorer


class Outcome(StrEnum):
    """Why a candidate was or was not served."""

    BELOW_BAND = "below_band"  # miss, not scored
    ABOVE_BAND = "above_band"  # hit, not scored: the model is saturated there
    SCORED_HIT = "scored_hit"
    SCORED_MISS = "scored_miss"
    NO_QUESTION = "no_question"  # miss: inside the band but no stored question to score
    VETOED = "vetoed"  # miss: the scorer's guard veto rejected the pair (not scored)


@dataclass(frozen=True, slots=True)
class HitDecision:
    """``hit`` and why; ``score`` is None when the candidate was not scored."""

    hit: bool
    outcome: Outcome
    score: float | None


class ScoredDecision:
    """Serve a candidate when its cosine is at least ``band.lo`` and either at least
    ``band.hi`` or ``scorer.score(...) >= threshold`` — and, with a ``veto`` guard, only when
    that guard accepts the pair (checked before the band's top: a veto is never saturated)."""

    def __init__(
        self,
        scorer: HitScorer,
        threshold: float,
        band: ScoreBand,
        veto: HitVerifier | None = None,
    ) -> None:
        self.scorer = scorer
        self.threshold = threshold
        self.band = band
        self.veto = veto

    @classmethod
    def from_saved(
        cls, saved: SavedScorer, embedders: Mapping[str, Embedder] | None = None
    ) -> ScoredDecision:
        """The decision exactly as calibrated: the saved model, threshold, band and veto.
        ``embedders``: the scorer file's non-primary embedders, by name."""
        veto = None if saved.veto is None else get_verifier(saved.veto)
        return cls(LearnedScorer(saved, embedders), saved.threshold, saved.band, veto)

    @property
    def search_threshold(self) -> float:
        """The cosine the store search may cut at: nothing below it can be a hit."""
        return self.band.lo

    def needs_score(self, similarity: float) -> bool:
        """Whether deciding at ``similarity`` runs the scorer (the cosine is inside the band)."""
        return self.band.lo <= similarity < self.band.hi

    def decide(self, query: str, candidate: str | None, similarity: float) -> HitDecision:
        """``candidate`` None (the entry was stored without its question): a miss inside the
        band, because there is nothing to score, and a miss anywhere under a veto, which
        needs the text; otherwise the band's edges need no text."""
        if similarity < self.band.lo:
            return HitDecision(False, Outcome.BELOW_BAND, None)
        if self.veto is not None:
            if candidate is None:
                return HitDecision(False, Outcome.NO_QUESTION, None)
            if not self.veto.verify(query, candidate):
                return HitDecision(False, Outcome.VETOED, None)
        if similarity >= self.band.hi:
            return HitDecision(True, Outcome.ABOVE_BAND, None)
        if candidate is None:
            return HitDecision(False, Outcome.NO_QUESTION, None)
        score = self.scorer.score(query, candidate, similarity)
        hit = score >= self.threshold
        return HitDecision(hit, Outcome.SCORED_HIT if hit else Outcome.SCORED_MISS, score)
