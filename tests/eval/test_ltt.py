"""Learn-then-Test fixed-sequence testing: p-values, the walk, the plan, sample sizes, and
the guarantee itself checked by simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from semcache.errors import ConfigError
from semcache.eval.ltt import (
    counts_at,
    fixed_sequence,
    hits_needed,
    p_value,
    plan_sequence,
    upper_bound,
)


def test_p_value_is_the_binomial_tail_and_matches_clopper_pearson():
    assert p_value(3, 100, 0.05) == pytest.approx(binom.cdf(3, 100, 0.05))
    assert p_value(0, 0, 0.05) == 1.0
    # rejecting at α is the same event as the one-sided CP bound being <= δ
    for k, n in ((0, 59), (0, 58), (2, 150), (5, 150)):
        assert (p_value(k, n, 0.05) <= 0.05) == (upper_bound(k, n, 0.05) <= 0.05)


def test_counts_at_counts_hits_at_or_above_each_threshold():
    scores = np.array([0.9, 0.8, 0.8, 0.1, -np.inf])
    labels = np.array([1, 0, 1, 0, 1])
    hits, wrong = counts_at(scores, labels, np.array([0.95, 0.9, 0.8, 0.0]))
    assert hits.tolist() == [0, 1, 3, 4]
    assert wrong.tolist() == [0, 0, 1, 2]


def test_the_walk_stops_at_the_first_failure_even_if_later_tests_would_pass():
    # strict -> loose: 100 clean hits (pass), then +20 false (fail), then +900 clean (would pass)
    scores = np.concatenate([np.full(100, 0.9), np.full(20, 0.8), np.full(900, 0.7)])
    labels = np.concatenate([np.ones(100), np.zeros(20), np.ones(900)]).astype(int)
    walk = fixed_sequence(scores, labels, np.array([0.9, 0.8, 0.7]), 0.05, 0.05)
    assert walk.threshold == 0.9 and walk.hits == 100 and walk.false_hits == 0
    assert walk.stopped_at == 0.8 and walk.tested == 2
    nothing = fixed_sequence(scores, labels, np.array([0.95, 0.9]), 0.05, 0.05)
    assert nothing.threshold is None and nothing.stopped_at == 0.95
    with pytest.raises(ConfigError):
        fixed_sequence(scores, labels, np.array([0.9]), 0.0, 0.05)


def test_the_plan_starts_where_rejection_is_likeliest_not_at_the_strictest():
    rng = np.random.default_rng(0)
    labels = (rng.random(2000) < 0.5).astype(int)
    scores = np.where(labels == 1, rng.normal(0.9, 0.05, 2000), rng.normal(0.7, 0.08, 2000))
    plan = plan_sequence(scores, labels, 4000, 0.05, 0.05)
    assert plan.thresholds[0] < scores.max()  # a handful of hits cannot reject
    assert np.all(np.diff(plan.thresholds) < 0)  # strict to loose
    hits, _ = counts_at(scores, labels, plan.thresholds[:1])
    assert hits[0] >= 59 and plan.pass_chance >= 0.8 and plan.expected_true_hits > 0


def test_the_guarantee_holds_in_simulation():
    """Over 300 seeded draws (500 fitting, 1,500 testing pairs), the certified threshold's
    TRUE false-hit rate exceeds δ in at most α of them (plus Monte Carlo slack); true rates
    come from the known distributions."""
    from scipy.stats import norm

    delta, alpha, violations, certified = 0.05, 0.05, 0, 0
    prior = 0.4

    def true_rate(t: float) -> float:
        pos = prior * norm.sf(t, 0.9, 0.05)
        neg = (1 - prior) * norm.sf(t, 0.75, 0.06)
        return neg / (pos + neg)

    for seed in range(300):
        rng = np.random.default_rng(seed)
        n_fit, n_test = 500, 1500
        labels = (rng.random(n_fit + n_test) < prior).astype(int)
        scores = np.where(
            labels == 1, rng.normal(0.9, 0.05, len(labels)), rng.normal(0.75, 0.06, len(labels))
        )
        plan = plan_sequence(scores[:n_fit], labels[:n_fit], n_test, delta, alpha, points=100)
        walk = fixed_sequence(scores[n_fit:], labels[n_fit:], plan.thresholds, delta, alpha)
        if walk.threshold is not None:
            certified += 1
            violations += true_rate(walk.threshold) > delta
    assert certified >= 220  # the procedure has power here
    assert violations / certified <= alpha + 0.03


def test_hits_needed():
    assert hits_needed(0.0, 0.05, 0.05) == 59
    assert hits_needed(0.05, 0.05, 0.05) is None
    assert hits_needed(0.025, 0.05, 0.05) > 59
