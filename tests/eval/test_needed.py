"""'Pairs needed for δ' simulates the certification: never at or under the pairs given."""

from __future__ import annotations

import numpy as np

from semcache.eval.frontier import frontier, scored_parts, split_parts
from semcache.eval.needed import certify_chance, simulate_needed


def _pairs(n: int, seed: int = 0, noise: float = 0.03):
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.5).astype(np.int64)
    scores = np.where(labels == 1, rng.normal(0.9, noise, n), rng.normal(0.75, 0.06, n))
    return scores, labels


def test_more_testing_pairs_certify_more_often():
    scores, labels = _pairs(2000)
    small = certify_chance(scores, labels, 40, 0.02, 0.05)
    large = certify_chance(scores, labels, 4000, 0.02, 0.05)
    assert small < 0.5 < large


def test_needed_is_above_the_pairs_given_and_likely_certifies():
    scores, labels = _pairs(300)
    need = simulate_needed(scores, labels, 300, 0.8, 0.01, 0.05)
    assert need.pairs is not None and need.pairs > 300 and need.chance >= 0.5
    # at that many pairs, the testing part certifies in at least half the simulated runs
    assert certify_chance(scores, labels, round(need.pairs * 0.8), 0.01, 0.05) >= 0.5


def test_no_threshold_under_delta_means_more_pairs_will_not_help():
    rng = np.random.default_rng(1)
    labels = (rng.random(1000) < 0.5).astype(np.int64)
    need = simulate_needed(rng.random(1000), labels, 1000, 0.8, 0.05, 0.05)
    assert need.pairs is None and need.floor_rate > 0.05


def test_the_frontier_estimates_only_what_it_did_not_certify():
    scores, labels = _pairs(400, noise=0.05)
    parts = split_parts(labels, seed=0)
    result = frontier([scored_parts("cosine:x", scores, parts)], labels, parts, deltas=(0.01, 0.2))
    assert result.rows[("cosine:x", 0.2)].threshold is not None and 0.2 not in result.needed
    assert result.rows[("cosine:x", 0.01)].threshold is None
    need = result.needed[0.01]
    assert need.given == 400 and (need.pairs is None or need.pairs > 400)
