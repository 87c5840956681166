"""Hit scorers: deciding whether a semantic candidate's stored answer serves a new query.

The semantic stage calls :class:`ScoredDecision` (built from a :class:`SavedScorer` that
``semcache calibrate`` wrote) with the cosine its search returned; a candidate is scored only
inside the calibrated cosine band. :class:`HitScorer` is the plug point; implementations:
:class:`LearnedScorer` (the calibrated model), and optional plug-ins
:class:`~semcache.scoring.cross_encoder.CrossEncoderScorer` (a sentence-transformers
cross-encoder by name) and :class:`~semcache.scoring.judge.LLMJudgeScorer` (an LLM asked
yes/no through LiteLLM), imported from their modules; a scorer file names either
(:mod:`semcache.scoring.plugins`, ``semcache calibrate --plugin``).
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
