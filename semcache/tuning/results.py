"""Typed results of the tuning loop: what a feedback call did, and the loop's counters.

They stand below the loop (which produces them) so ``semcache.stats`` can name them
without importing the loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from semcache.tuning.estimate import Estimate
from semcache.tuning.records import Served


@dataclass(frozen=True, slots=True)
class FeedbackResult:
    """What one feedback call did: ``withdrawn`` True when a "wrong" verdict ended a stored
    entry; ``labeled`` True when a labeled pair was recorded (semantic hits only)."""

    serve: Served
    correct: bool
    withdrawn: bool
    labeled: bool


@dataclass(frozen=True, slots=True)
class TuningStats:
    """The tuning loop's counters (in ``CacheStats.tuning``) and live false-hit estimates.

    ``estimates``: per namespace, from shadow verdicts (see :mod:`semcache.tuning.estimate`);
    ``shadow_*``: shadow verification's verdicts and what it cost (upstream and judge).
    """

    delta: float
    estimates: Mapping[str, Estimate]
    feedback_right: int
    feedback_wrong: int
    shadow_sampled: int
    shadow_agree: int
    shadow_disagree: int
    shadow_skipped: int
    shadow_calls: int
    shadow_tokens: int
    shadow_cost_usd: float
    labels: int
    near_misses: int

    @property
    def alerts(self) -> tuple[str, ...]:
        """Namespaces whose 95% lower bound exceeds ``delta`` (evidence that it is exceeded)."""
        return tuple(ns for ns, e in self.estimates.items() if e.alert)
