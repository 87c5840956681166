"""The live estimate's statistics and the sampling policy (pure functions)."""

from __future__ import annotations

import random

import pytest

from semcache.tuning.estimate import FalseHitMonitor, weighted_rate, wilson
from semcache.tuning.sampling import Sampler, SamplingPolicy


def test_equal_weights_give_wilsons_interval():
    verdicts = [(True, 0.5)] * 3 + [(False, 0.5)] * 97
    est = weighted_rate(verdicts, delta=0.05)
    assert est.rate == pytest.approx(0.03)
    assert est.effective_n == pytest.approx(100)
    assert (est.low, est.high) == pytest.approx(wilson(0.03, 100))
    assert est.verdicts == 100 and est.wrong == 3


def test_inverse_probability_weights_undo_oversampling():
    # wrong hits sampled 4x as often as right ones: the raw share is 4/(4+1) of the truth's odds
    verdicts = [(True, 0.4)] * 40 + [(False, 0.1)] * 90
    est = weighted_rate(verdicts, delta=0.05)
    assert est.rate == pytest.approx((40 / 0.4) / (40 / 0.4 + 90 / 0.1))  # 0.1, not 40/130
    assert est.effective_n < 130  # unequal weights cost effective sample size


def test_no_verdicts_is_the_whole_interval_and_no_alert_below_delta():
    est = weighted_rate([], delta=0.05)
    assert (est.low, est.high, est.verdicts) == (0.0, 1.0, 0)
    assert not est.alert  # nothing known is no evidence that delta is exceeded


def test_alert_fires_only_when_the_lower_bound_exceeds_delta():
    assert not weighted_rate([(False, 1.0)] * 200, delta=0.05).alert
    # the case: 0 wrong of 71 verdicts (the upper bound, 5.1%, is over 5%)
    none_wrong = weighted_rate([(False, 1.0)] * 71, delta=0.05)
    assert none_wrong.high > 0.05 and not none_wrong.alert
    # 5 of 100 is consistent with 5%: no alert; 15 of 100 is evidence (low ~ 9%)
    assert not weighted_rate([(True, 1.0)] * 5 + [(False, 1.0)] * 95, delta=0.05).alert
    clear = weighted_rate([(True, 1.0)] * 15 + [(False, 1.0)] * 85, delta=0.05)
    assert clear.low > 0.05 and clear.alert


def test_a_probability_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match="probability"):
        weighted_rate([(True, 0.0)], delta=0.05)
    with pytest.raises(ValueError, match="probability"):
        FalseHitMonitor(delta=0.05, window=10).add("ns", wrong=True, probability=1.5)


def test_monitor_keeps_a_window_per_namespace():
    monitor = FalseHitMonitor(delta=0.05, window=10)
    for _ in range(20):
        monitor.add("a", wrong=True, probability=1.0)
    for _ in range(10):
        monitor.add("a", wrong=False, probability=1.0)
    monitor.add("b", wrong=True, probability=1.0)
    estimates = monitor.estimates()
    assert estimates["a"].rate == 0.0 and estimates["a"].verdicts == 10  # old ones fell out
    assert estimates["b"].rate == 1.0


def test_sampling_favours_hits_near_the_threshold():
    policy = SamplingPolicy(0.1, boost=4.0, width=0.05)
    assert policy.probability(0.80, 0.80) == pytest.approx(0.4)
    assert policy.probability(0.79, 0.80) == pytest.approx(0.4)  # under: as at the threshold
    assert policy.probability(0.85, 0.80) == pytest.approx(0.1 * (1 + 3 / 2.718281828), rel=1e-6)
    assert policy.probability(1.20, 0.80) == pytest.approx(0.1, abs=1e-3)  # far above
    assert SamplingPolicy(0.5, boost=4.0).probability(0.8, 0.8) == 1.0  # capped
    assert SamplingPolicy(0.0).probability(0.8, 0.8) == 0.0
    assert SamplingPolicy(0.2).probability(None, 0.8) == 0.2


def test_sampler_returns_the_probability_it_drew_with():
    sampler = Sampler(SamplingPolicy(0.25, boost=1.0), random.Random(3))
    draws = [sampler.draw(0.9, 0.8) for _ in range(4000)]
    taken = [d for d in draws if d is not None]
    assert set(taken) == {0.25}
    assert 0.22 < len(taken) / len(draws) < 0.28


@pytest.mark.parametrize("n", [1, 7, 43.8, 64.2, 1000])
def test_wilson_bounds_are_exact_at_zero_and_one(n):
    assert wilson(0.0, n)[0] == 0.0  # an interval over an all-right sample contains 0
    assert wilson(1.0, n)[1] == 1.0


def test_thinning_leaves_an_equal_probability_sample():
    import numpy as np

    from semcache.eval.recalibrate import Recorded, thin

    near = Recorded(0.86, 1, 0.8, 1, False)  # shadow, sampled with 0.8 near the threshold
    far = Recorded(0.99, 1, 0.2, 1, False)  # shadow, sampled with 0.2 far above
    miss = Recorded(0.80, 0, None, 5, False)  # a near miss seen 5 times, always recorded
    feedback = Recorded(0.9, 0, None, 1, True)
    rows = [near] * 4000 + [far] * 4000 + [miss] * 1000 + [feedback]
    kept = thin(rows, np.random.default_rng(0))
    assert kept.count(far) == 4000  # the rarest-sampled rows are all kept
    assert 900 < kept.count(near) < 1100  # 4000 x 0.2/0.8
    assert 900 < kept.count(miss) < 1100  # 5000 requests x 0.2
    assert kept.count(feedback) == 1
    assert thin([miss], np.random.default_rng(0)) == [miss]  # no shadow rows: unchanged
