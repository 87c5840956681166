"""Which semantic hits shadow verification re-asks: a probability per hit, drawn once.

Hits just over the threshold are the likeliest to be wrong and the most informative for
recalibration, so they are sampled more: with base rate r, boost b and width w, a hit at
cosine s over threshold t is sampled with probability

    π(s) = min(1, r · (1 + (b - 1) · exp(-max(0, s - t) / w)))

(b·r at the threshold, falling to r far above it). Every π is > 0 when r > 0, so every hit
can be sampled and inverse-probability weighting (:mod:`semcache.tuning.estimate`) stays
unbiased. The probability is returned with the draw and recorded with the verdict.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SamplingPolicy:
    """``rate``: base probability; ``boost``: multiplier at the threshold; ``width``: cosine
    distance over the threshold over which the boost decays (by 1/e)."""

    rate: float
    boost: float = 4.0
    width: float = 0.05

    def probability(self, similarity: float | None, threshold: float) -> float:
        """π for a hit at ``similarity`` (None, e.g. an unscored hit: the base rate)."""
        if self.rate <= 0.0:
            return 0.0
        if similarity is None:
            return min(1.0, self.rate)
        over = max(0.0, similarity - threshold)
        return min(1.0, self.rate * (1.0 + (self.boost - 1.0) * math.exp(-over / self.width)))


class Sampler:
    """Draws with a :class:`SamplingPolicy`; ``rng`` is injected so tests are repeatable."""

    def __init__(self, policy: SamplingPolicy, rng: random.Random) -> None:
        self.policy = policy
        self._rng = rng

    def draw(self, similarity: float | None, threshold: float) -> float | None:
        """The hit's sampling probability when it is sampled, else None."""
        probability = self.policy.probability(similarity, threshold)
        if probability > 0.0 and self._rng.random() < probability:
            return probability
        return None
