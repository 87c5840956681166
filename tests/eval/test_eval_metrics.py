"""Counts and intervals on data small enough to work out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from semcache.eval.metrics import (
    best_f1,
    count_hits,
    pr_curve,
    recall_at_false_hit_rate,
    upper_bound,
    wilson_interval,
)

# scores and labels worked through by hand in the comments of each test
SCORES = np.array([0.99, 0.96, 0.95, 0.93, 0.91, 0.50, -np.inf])
LABELS = np.array([1, 0, 1, 1, 0, 0, 1], dtype=np.int8)  # the -inf pair: a vetoed positive


@pytest.mark.parametrize(
    ("k", "n", "lower", "upper"),
    [
        (0, 10, 0.0, 0.2775),  # textbook Wilson 95% values
        (5, 10, 0.2366, 0.7634),
        (8, 10, 0.4902, 0.9433),
        (10, 10, 0.7225, 1.0),
        (1, 100, 0.0018, 0.0545),
    ],
)
def test_wilson_interval_matches_published_values(k: int, n: int, lower: float, upper: float):
    lo, hi = wilson_interval(k, n)
    assert float(lo) == pytest.approx(lower, abs=1e-4)
    assert float(hi) == pytest.approx(upper, abs=1e-4)


def test_wilson_interval_without_trials_is_uninformative():
    lo, hi = wilson_interval(np.array([0, 3]), np.array([0, 3]))
    assert lo.tolist() == [0.0, pytest.approx(0.4385, abs=1e-4)]
    assert hi.tolist() == [1.0, 1.0]


def test_clopper_pearson_upper_bound_with_no_failures_is_closed_form():
    # P(0 false of n | p) = (1 - p)^n = 1 - confidence  =>  p = 1 - (1 - confidence)^(1/n)
    for n in (10, 149, 1000):
        assert float(upper_bound(0, n, 0.95)) == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-9)


def test_clopper_pearson_upper_bound_leaves_the_stated_tail():
    from scipy.stats import binom

    for k, n in ((1, 20), (7, 300), (50, 400)):
        bound = float(upper_bound(k, n, 0.95))
        assert binom.cdf(k, n, bound) == pytest.approx(0.05, abs=1e-7)
    assert upper_bound(5, 5).item() == 1.0
    assert upper_bound(0, 0).item() == 1.0


def test_one_sided_wilson_bound():
    z = 1.6448536269514722
    assert float(upper_bound(0, 10, 0.95, "wilson")) == pytest.approx(z * z / (10 + z * z))
    with pytest.raises(ValueError, match="unknown bound method"):
        upper_bound(0, 10, 0.95, "normal")  # type: ignore[arg-type]


def test_count_hits_counts_similarity_at_least_threshold():
    table = count_hits(SCORES, LABELS, np.array([0.90, 0.95, 0.97, 1.0]))
    assert (table.positives, table.negatives) == (4, 3)
    # >= 0.90: 0.99 0.96 0.95 0.93 0.91 -> true 0.99 0.95 0.93, false 0.96 0.91
    # >= 0.95: 0.99 0.96 0.95 (0.95 itself is a hit) -> 2 true, 1 false
    assert table.hits.tolist() == [5, 3, 1, 0]
    assert table.true_hits.tolist() == [3, 2, 1, 0]
    assert table.false_hits.tolist() == [2, 1, 0, 0]
    np.testing.assert_allclose(table.false_hit_rate[:3], [2 / 5, 1 / 3, 0.0])
    assert math.isnan(table.false_hit_rate[3])
    np.testing.assert_allclose(table.recall, [3 / 4, 2 / 4, 1 / 4, 0.0])
    np.testing.assert_allclose(table.fpr, [2 / 3, 1 / 3, 0.0, 0.0])
    lo, hi = wilson_interval(2, 5)
    assert (table.false_hit_rate_lo[0], table.false_hit_rate_hi[0]) == (lo, hi)
    assert (table.false_hit_rate_lo[3], table.false_hit_rate_hi[3]) == (0.0, 1.0)
    lo, hi = wilson_interval(3, 4)
    assert (table.recall_lo[0], table.recall_hi[0]) == (lo, hi)


def test_pr_curve_has_one_row_per_distinct_score():
    curve = pr_curve(np.array([0.9, 0.9, 0.8, 0.7, -np.inf]), np.array([1, 0, 1, 0, 1]))
    assert curve.thresholds.tolist() == [0.9, 0.8, 0.7]
    assert curve.hits.tolist() == [2, 3, 4]
    assert curve.true_hits.tolist() == [1, 2, 2]
    np.testing.assert_allclose(curve.recall, [1 / 3, 2 / 3, 2 / 3])
    np.testing.assert_allclose(curve.precision, [1 / 2, 2 / 3, 1 / 2])


def test_best_f1_and_recall_at_false_hit_rate():
    curve = pr_curve(SCORES, LABELS)
    # descending: 0.99 T, 0.96 F, 0.95 T, 0.93 T, 0.91 F, 0.50 F; 4 positives
    # F1 = 2 tp / (hits + 4): 2/5, 2/6, 4/7, 6/8, 6/9, 6/10 -> best 0.75 at 0.93
    best = best_f1(curve)
    assert best is not None
    assert (best.threshold, best.f1, best.hits, best.false_hits) == (0.93, 0.75, 4, 1)
    # false-hit rates: 0, 1/2, 1/3, 1/4, 2/5, 3/6
    at_30 = recall_at_false_hit_rate(curve, 0.30)
    assert at_30 is not None
    assert (at_30.threshold, at_30.recall, at_30.false_hit_rate) == (0.93, 0.75, 0.25)
    at_1 = recall_at_false_hit_rate(curve, 0.01)
    assert at_1 is not None
    assert (at_1.threshold, at_1.recall) == (0.99, 0.25)
    assert recall_at_false_hit_rate(pr_curve(SCORES, np.zeros(7)), 0.05) is None


def test_no_hits_no_headline():
    curve = pr_curve(np.array([-np.inf, -np.inf]), np.array([1, 0]))
    assert len(curve.thresholds) == 0
    assert best_f1(curve) is None
    assert recall_at_false_hit_rate(curve, 0.05) is None


def test_one_wilson_interval_for_eval_and_the_tuning_loop():
    from semcache.tuning.estimate import wilson

    low, high = wilson_interval(np.array([0, 3, 10]), np.array([10, 10, 10]))
    for k, lo, hi in zip((0, 3, 10), low, high, strict=True):
        assert wilson(k / 10, 10) == pytest.approx((float(lo), float(hi)), rel=1e-12)
    assert low[0] == 0.0 and high[2] == 1.0 and 0.0 < low[1] < 0.3 < high[1] < 1.0
    assert wilson(0.5, 0) == (0.0, 1.0)
