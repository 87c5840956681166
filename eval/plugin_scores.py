"""Calibrating a plug-in scorer: ask it only inside a cosine band, like the cache will.

A plug-in (:mod:`semcache.scoring.plugins`) costs a call per pair, so ``semcache calibrate
--plugin`` scores below the band's ``lo`` as -inf, at or above ``hi`` as +inf and asks the
plug-in in between, the rule the cache runs, and certifies with the same Learn-then-Test walk,
so the guarantee covers the band's cuts. The band comes from the fitting part alone (the 1st
percentile of label-1 cosines less 0.02, the 99th of label-0 plus 0.02) unless
``--plugin-band LO HI``. Pairs are asked as (query ``text_b``, candidate ``text_a``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from semcache.scoring.band import ScoreBand
from semcache.scoring.judge import JudgeCost, LLMJudgeScorer
from semcache.scoring.plugins import PluginScorer, PluginSpec

from .data import PairSet
from .frontier import BAND_MARGIN, BAND_QUANTILE, Parts, ScoredParts, scored_parts


def plugin_band(cosines: np.ndarray, labels: np.ndarray) -> ScoreBand:
    """The band from fitting pairs' primary cosines and labels (module docstring)."""
    cosines, labels = np.asarray(cosines, np.float64), np.asarray(labels)
    positive, negative = cosines[labels == 1], cosines[labels == 0]
    lo = -1.0 if not len(positive) else float(np.quantile(positive, BAND_QUANTILE)) - BAND_MARGIN
    lo = max(lo, -1.0)
    if not len(negative):
        return ScoreBand(lo, math.inf)
    hi = float(np.quantile(negative, 1.0 - BAND_QUANTILE)) + BAND_MARGIN
    return ScoreBand(lo, max(lo, hi))


def banded(cosines: np.ndarray, band: ScoreBand, asked: np.ndarray) -> np.ndarray:
    """Scores as the cache decides: -inf below the band, +inf at or above it, and the
    plug-in's scores (``asked``, in order) for the pairs inside it."""
    cosines = np.asarray(cosines, np.float64)
    scores = np.where(cosines < band.lo, -np.inf, np.inf)
    inside = in_band(cosines, band)
    scores[inside] = np.asarray(asked, np.float64)
    return scores


def in_band(cosines: np.ndarray, band: ScoreBand) -> np.ndarray:
    """Indices of the pairs the plug-in is asked about."""
    cosines = np.asarray(cosines, np.float64)
    return np.flatnonzero((cosines >= band.lo) & (cosines < band.hi))


@dataclass(frozen=True)
class PluginRun:
    """A plug-in scored on the three parts, with its band and what asking it cost."""

    spec: PluginSpec
    primary: str
    band: ScoreBand
    scored: ScoredParts
    calls: int
    cost: JudgeCost | None  # an LLM judge's tokens and USD; None for a cross-encoder

    def cost_line(self, total_pairs: int) -> str:
        """One line for the report: calls made and, for a judge, what they cost."""
        line = (
            f"plug-in {self.spec.name}: asked about {self.calls} of {total_pairs} pairs (cosine "
            f"of {self.primary} in [{self.band.lo:.4g}, {self.band.hi:.4g}))"
        )
        cost = self.cost
        if cost is None:
            return line + f"; {self.calls} cross-encoder pair scorings"
        priced = cost.calls - cost.unpriced_calls
        return line + (
            f"; {cost.calls} judge calls, {cost.prompt_tokens} prompt + "
            f"{cost.completion_tokens} completion tokens, ${cost.usd:.6f} for {priced} priced "
            f"calls ({cost.unpriced_calls} unpriced by LiteLLM)"
        )

    def calibration(self) -> dict[str, object]:
        """What the scorer file records about asking the plug-in during calibration."""
        record: dict[str, object] = {"plugin_calls": self.calls}
        if self.cost is not None:
            record |= {
                "judge_prompt_tokens": self.cost.prompt_tokens,
                "judge_completion_tokens": self.cost.completion_tokens,
                "judge_usd": self.cost.usd,
                "judge_unpriced_calls": self.cost.unpriced_calls,
            }
        return record


def plugin_parts(
    scorer: PluginScorer,
    spec: PluginSpec,
    pairs: PairSet,
    cosines: np.ndarray,
    primary: str,
    parts: Parts,
    band: ScoreBand,
) -> PluginRun:
    """Ask ``scorer`` about every pair (of all three parts) inside ``band`` of the primary
    embedder's ``cosines``; every other pair is decided by the band alone."""
    asked_at = in_band(cosines, band)
    questions = [(pairs.text_b[i], pairs.text_a[i]) for i in asked_at]
    asked = scorer.score_many(questions)
    scores = banded(cosines, band, np.asarray(asked, np.float64))
    scored = scored_parts(spec.name, scores, parts, kind=spec.kind, calls=len(asked_at))
    cost = scorer.cost if isinstance(scorer, LLMJudgeScorer) else None
    return PluginRun(spec, primary, band, scored, len(asked_at), cost)
