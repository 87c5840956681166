"""The decision the semantic stage asks for: is this candidate a hit?

Pure logic over a scorer, a threshold and a :class:`~semcache.scoring.band.ScoreBand`; the
stage calls :meth:`ScoredDecision.decide` with the cosine its search returned. The common
case (a best candidate below the band) costs one comparison: no feature, no extra embedding.

How the cache runs it (when ``settings.semantic.scorer`` is set; ``semcache/compose/``
``scorer_factory`` and :class:`semcache.pipeline.semantic_tier.SemanticTier`):

1. at construction, ``load_scorer_file(settings.semantic.scorer)``: a missing, malformed or
   other-version file, a primary embedder that is not the cache's, a judge's unset API-key
   variable, or ``store_question=false`` is a ``ConfigError`` naming ``semantic.scorer``
   (fail at start-up, not per request);
2. when the semantic tier starts (in a worker thread), any non-primary embedder of a learned
   file is loaded and ``ScoredDecision.from_saved(saved, extra_embedders)`` is built; for a
   plug-in file (:mod:`.plugins`) the cross-encoder is loaded or the judge built, and
   ``ScoredDecision(plugin, saved.threshold, saved.band)``;
3. the search returns the nearest live candidate as before; ``SemanticTier.judge`` (the one
   hit rule every serving path asks) calls :meth:`ScoredDecision.decide` with the stored
   question and the search cosine, and serves only when ``.hit``. ``ajudge`` runs it in a
   worker thread when the cosine is inside the band. The answer guard is run as a veto on
   top only when the file says so (``veto``, calibrated as ``learned+guard``); otherwise its
   rules are model features only. The global cosine ``threshold`` is not applied: the
   calibrated guarantee is for this rule alone. A namespace threshold is an extra cosine
   floor (it can only remove hits);
4. ``decide`` may raise :class:`~semcache.errors.ScorerError` (a plug-in scorer's model or
   upstream failed) or an embedder error; the semantic stage degrades those to a miss
   counted as ``semantic_judge`` in ``_failopen``. Outcomes are counted as
   ``scorer_scored`` / ``scorer_rejections`` and a hit's score is ``CacheInfo.score``.
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
