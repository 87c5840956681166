"""The frontier: every scorer at every δ, a ranking made without the testing labels, α
split over it, a learned scorer that must beat its features, the band cut, and what a
failing δ would need."""

from __future__ import annotations

import numpy as np
import pytest

from semcache.eval.frontier import (
    DELTAS,
    band_floor,
    frontier,
    guarded,
    hindsight,
    learned_parts,
    levels,
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
    parts = split_parts(labels, seed=0)  # default: a fifth fits, every other pair tests
    assert len(parts.held_out) == 0
    assert sorted([*parts.fit, *parts.test]) == list(range(len(labels)))
    assert abs(len(parts.fit) - len(labels) / 5) <= 2
    held = split_parts(labels, seed=0, holdout=0.3)
    everything = np.concatenate([held.fit, held.test, held.held_out])
    assert sorted(everything.tolist()) == list(range(len(labels)))
    assert abs(len(held.held_out) - 900) <= 2 and abs(len(held.fit) - 2100 / 5) <= 2
    for part in (held.fit, held.test, held.held_out):  # stratified
        assert abs(labels[part].mean() - labels.mean()) < 0.01


def test_levels_split_alpha_over_the_ranking():
    assert levels(["a"], 0.05) == {"a": 0.05}
    ranked = levels(["a", "b", "c"], 0.05)  # default: 0.8 to the first
    assert ranked["a"] == 0.05 * 0.8 and ranked["b"] == ranked["c"] == pytest.approx(0.005)
    split = levels(["a", "b", "c"], 0.05, first_share=None)  # equal shares
    assert split["a"] == split["b"] == split["c"] == 0.05 / 3
    for shares in (split, ranked):
        assert abs(sum(shares.values()) - 0.05) < 1e-12


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
    assert result.ranked[0.05][0] == "guard:good"  # the guard removes half the negatives
    assert result.chosen[0.05] == "guard:good"
    first = result.rows[("guard:good", 0.10)]
    assert first.threshold is not None and first.alpha == 0.05 * 0.8
    assert first.holds is None  # no held-out part by default
    assert result.tightest is not None and result.tightest <= 0.05
    flipped = labels.copy()
    flipped[parts.test] = 1 - flipped[parts.test]
    assert frontier(scorers, flipped, parts).ranked == result.ranked  # fitting part only
    assert result.rows[("cosine:poor", 0.01)].threshold is None
    for delta, need in result.needed.items():  # only where nothing was certified
        assert all(result.rows[(n, delta)].threshold is None for n in result.ranked[delta])
        assert need.pairs is None or need.pairs > len(labels)


def test_learned_scorer_is_fit_on_the_fitting_part_and_cut_at_its_band():
    labels, good, poor, detail = _data()
    parts = split_parts(labels, seed=0)
    rows = np.column_stack([good, poor, detail.astype(float)])
    learned = learned_parts(
        "learned", rows, labels, parts, ["good", "poor"], "good", kind="logistic"
    )
    assert learned.primary == "good" and learned.band_lo > 0.5
    below = good[parts.test] < learned.band_lo
    assert below.any() and np.all(np.isneginf(learned.scored.test[below]))
    changed = labels.copy()
    changed[parts.test] = 0
    again = learned_parts(
        "learned", rows, changed, parts, ["good", "poor"], "good", kind="logistic"
    )
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


def test_the_saved_choice_is_the_certified_cell_with_the_most_recall():
    labels, good, poor, _detail = _data()
    parts = split_parts(labels, seed=0)
    scorers = [scored_parts("cosine:good", good, parts), scored_parts("cosine:poor", poor, parts)]
    result = frontier(scorers, labels, parts, deltas=(0.2,))
    certified = [n for n in result.ranked[0.2] if result.rows[(n, 0.2)].threshold is not None]
    assert certified
    best = max(certified, key=lambda n: result.rows[(n, 0.2)].testing.recall)
    assert result.chosen[0.2] == best


def test_a_learned_scorer_must_beat_its_best_feature_by_the_margin():
    labels, good, _poor, detail = _data()
    parts = split_parts(labels, seed=0)
    cosine = scored_parts("cosine:good", good, parts)
    # a "learned" scorer that is exactly the cosine cannot beat it by the margin
    twin = scored_parts("learned", good, parts, kind_of="learned")
    result = frontier([twin, cosine], labels, parts, deltas=(0.05,), estimate_needed=False)
    assert result.ranked[0.05] == ("cosine:good", "learned")
    # with the guard's information it beats the cosine by far and ranks first
    better = scored_parts("learned", guarded(good, ~detail), parts, kind_of="learned")
    result = frontier([cosine, better], labels, parts, deltas=(0.05,), estimate_needed=False)
    assert result.ranked[0.05][0] == "learned"


def test_of_two_scorers_the_fitting_part_cannot_tell_apart_the_vetoing_one_ranks_first():
    """Identical scores, so identical predictions: the one under the guard's veto goes first
    (and so gets the larger share of α), whichever order the candidates come in."""
    from semcache.eval.frontier import rank

    labels, good, _poor, _detail = _data()
    parts = split_parts(labels, seed=0)
    plain = scored_parts("learned", good, parts, kind_of="learned")
    vetoing = scored_parts("learned+guard", good, parts, kind_of="learned", veto="details")
    cosine = scored_parts("cosine:good", good, parts)
    guard = scored_parts("guard:good", good, parts)
    for scorers in ([plain, vetoing], [vetoing, plain]):
        order, keys = rank(scorers, labels, parts, 0.05, 0.05, margin=0.0)
        assert keys["learned"] == keys["learned+guard"] and order[0] == "learned+guard"
    for scorers in ([cosine, guard], [guard, cosine]):
        assert rank(scorers, labels, parts, 0.05, 0.05)[0][0] == "guard:good"


def test_a_holdout_is_reported_and_never_used():
    labels, good, _poor, _detail = _data()
    parts = split_parts(labels, seed=0, holdout=0.3)
    scorers = [scored_parts("cosine:good", good, parts)]
    result = frontier(scorers, labels, parts, deltas=(0.1,))
    row = result.rows[("cosine:good", 0.1)]
    assert row.alpha == 0.05 and row.held_out is not None and row.holds is not None
    changed = labels.copy()
    changed[parts.held_out] = 1 - changed[parts.held_out]
    again = frontier(scorers, changed, parts, deltas=(0.1,)).rows[("cosine:good", 0.1)]
    assert again.threshold == row.threshold and again.held_out != row.held_out
