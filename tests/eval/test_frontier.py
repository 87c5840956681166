"""The frontier: every scorer at every δ, a choice made without the testing labels, the
learned scorer's band cut, and what a failing δ would need."""

from __future__ import annotations

import numpy as np

from semcache.eval.frontier import (
    DELTAS,
    band_floor,
    frontier,
    guarded,
    hindsight,
    learned_parts,
    scored_parts,
    split_parts,
)


def _data(n: int = 3000, seed: int = 0):
    """A cosine that separates well, a second that does not, and a 'detail' flag that marks
    half the high-cosine negatives (what a guard would see)."""
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.5).astype(np.int64)
    good = np.where(labels == 1, rng.normal(0.92, 0.03, n), rng.normal(0.80, 0.06, n))
    poor = np.where(labels == 1, rng.normal(0.85, 0.08, n), rng.normal(0.80, 0.08, n))
    detail = (labels == 0) & (rng.random(n) < 0.5)
    return labels, good, poor, detail


def test_parts_are_disjoint_and_cover_the_pairs():
    labels, *_ = _data()
    parts = split_parts(labels, seed=0)
    everything = np.concatenate([parts.fit, parts.test, parts.held_out])
    assert sorted(everything.tolist()) == list(range(len(labels)))
    assert abs(len(parts.fit) - len(labels) / 6) <= 2 and abs(len(parts.held_out) - 1500) <= 1


def test_every_scorer_at_every_delta_and_the_choice_ignores_testing_labels():
    labels, good, poor, detail = _data()
    parts = split_parts(labels, seed=0)
    scorers = [
        scored_parts("cosine:good", good, parts),
        scored_parts("cosine:poor", poor, parts),
        scored_parts("guard:good", guarded(good, ~detail), parts),
    ]
    result = frontier(scorers, labels, parts)
    assert set(result.rows) == {(s.name, d) for s in scorers for d in DELTAS}
    assert result.chosen[0.05] == "guard:good"  # the guard removes half the negatives
    loose = result.rows[("guard:good", 0.10)]
    assert loose.threshold is not None and loose.holds
    assert result.tightest is not None and result.tightest <= 0.05
    flipped = labels.copy()
    flipped[parts.test] = 1 - flipped[parts.test]
    assert frontier(scorers, flipped, parts).chosen == result.chosen
    assert result.rows[("cosine:poor", 0.01)].threshold is None
    assert ("cosine:poor", 0.01) in result.needed


def test_learned_scorer_is_fit_on_the_fitting_part_and_cut_at_its_band():
    labels, good, poor, detail = _data()
    parts = split_parts(labels, seed=0)
    rows = np.column_stack([good, poor, detail.astype(float)])
    learned = learned_parts("learned", rows, labels, parts, ["good", "poor"], "good",
                            kind="logistic")  # fmt: skip
    assert learned.primary == "good" and learned.band_lo > 0.5
    below = good[parts.test] < learned.band_lo
    assert below.any() and np.all(np.isneginf(learned.scored.test[below]))
    changed = labels.copy()
    changed[parts.test] = 0
    again = learned_parts("learned", rows, changed, parts, ["good", "poor"], "good",
                          kind="logistic")  # fmt: skip
    np.testing.assert_array_equal(again.scored.test, learned.scored.test)  # never saw them
    result = frontier([learned.scored, scored_parts("cosine:good", good, parts)], labels, parts)
    assert result.rows[("learned", 0.05)].threshold is not None


def test_band_floor_and_hindsight():
    assert band_floor(np.array([0.9, 0.95, 0.99]), np.array([0.1, 0.2, 0.3])) == -1.0
    lo = band_floor(np.linspace(0.8, 1.0, 101), np.ones(101))
    assert 0.77 < lo < 0.8
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    labels = np.array([1, 1, 0, 1])
    best = hindsight(scores, labels, 0.25)
    assert (best.hits, best.false_hits) == (4, 1) and best.recall == 1.0
    assert hindsight(scores, labels, 0.0).hits == 2
