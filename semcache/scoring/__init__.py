"""Hit scorers: deciding whether a semantic candidate's stored answer serves a new query.

:class:`ScoredDecision` (from a :class:`SavedScorer` that ``semcache calibrate`` wrote) scores
a candidate only inside the calibrated cosine band. :class:`HitScorer` is the plug point:
:class:`LearnedScorer`, and the plug-ins of :mod:`semcache.scoring.plugins`.
"""

from semcache.scoring.band import ScoreBand
from semcache.scoring.base import HitScorer
from semcache.scoring.decide import HitDecision, Outcome, ScoredDecision
from semcache.scoring.features import FEATURE_VERSION, feature_names
from semcache.scoring.learned import LearnedScorer
from semcache.scoring.saved import SavedScorer

__all__ = [
    "FEATURE_VERSION",
    "HitDecision",
    "HitScorer",
    "LearnedScorer",
    "Outcome",
    "SavedScorer",
    "ScoreBand",
    "ScoredDecision",
    "feature_names",
]
