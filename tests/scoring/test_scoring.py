"""The scoring package: features, JSON models that match scikit-learn, the band and its
saturation proof, the saved file, ``LearnedScorer`` and the decision the semantic stage asks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from semcache.errors import ConfigError
from semcache.eval.scorer_fit import TREES_MIN_PAIRS, fit_boosted, fit_logistic, fit_scorer
from semcache.scoring import (
    HitScorer,
    LearnedScorer,
    Outcome,
    SavedScorer,
    ScoreBand,
    ScoredDecision,
    feature_names,
)
from semcache.scoring.band import saturation_cosine
from semcache.scoring.features import GUARD, LEXICAL, FeatureExtractor, bounds, lexical_features
from semcache.scoring.model import model_from_json
from semcache.testing import hash_embedding


class HashEmbedder:
    """Bag-of-words hashing embedder (``semcache.testing.hash_embedding``); counts calls."""

    name = "hash"
    dim = 64

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        return np.array([hash_embedding(t, self.dim) for t in texts], dtype=np.float32)


def _cos(a: str, b: str) -> float:
    return float(np.dot(hash_embedding(a), hash_embedding(b)))


def _synthetic(n: int = 400, seed: int = 0) -> tuple[list[str], list[str], np.ndarray]:
    """Pairs whose label depends on a number the embedding cannot see well."""
    rng = np.random.default_rng(seed)
    topics = [
        "reset my password",
        "cancel my order",
        "change the delivery address",
        "open a savings account",
        "update the billing card",
        "track a parcel",
    ]
    a, b, labels = [], [], []
    for _ in range(n):
        topic = topics[rng.integers(len(topics))]
        x, y = int(rng.integers(2, 9)), int(rng.integers(2, 9))
        same = rng.random() < 0.5
        other = topics[rng.integers(len(topics))] if rng.random() < 0.3 else topic
        a.append(f"how do I {topic} in {x} steps")
        b.append(f"how can I {other} in {x if same else y} steps")
        labels.append(int(other == topic and (same or x == y)))
    return a, b, np.array(labels)


def _rows(a, b) -> np.ndarray:
    cos = np.array([[_cos(x, y)] for x, y in zip(a, b, strict=True)])
    return FeatureExtractor().rows(a, b, cos)


def test_features_have_the_declared_layout_bounds_and_symmetry():
    names = feature_names(["e5", "minilm"])
    assert names[:2] == ("cos:e5", "cos:minilm") and len(names) == 2 + len(LEXICAL) + len(GUARD)
    low, high = bounds(names)
    row = FeatureExtractor().row(
        "Reset my password in 2 steps", "reset password in 3 steps", [0.9, 0.8]
    )
    assert row.shape == (len(names),)
    assert np.all(row >= low) and np.all(row <= high)
    assert row[names.index("guard_number")] == 1.0
    assert row[names.index("guard_negation")] == 0.0
    assert lexical_features("a b c", "c b a") == lexical_features("c b a", "a b c")
    same = lexical_features("怎么注销我的账号", "怎么注销我的账号")
    assert same[LEXICAL.index("word_jaccard")] == 1.0 and same[LEXICAL.index("cjk")] == 1.0
    apart = lexical_features("怎么注销我的账号", "今天天气怎么样")
    assert apart[LEXICAL.index("word_jaccard")] < 0.5


@pytest.mark.parametrize("fit", [fit_logistic, fit_boosted])
def test_exported_models_match_scikit_learn_and_survive_json(fit):
    a, b, labels = _synthetic()
    rows = _rows(a, b)
    model = fit(rows, labels)
    probabilities = model.predict(rows)
    assert probabilities.shape == (len(labels),)
    assert np.all((probabilities >= 0) & (probabilities <= 1))
    again = model_from_json(json.loads(json.dumps(model.to_json())), rows.shape[1])
    np.testing.assert_allclose(again.predict(rows), probabilities, rtol=0, atol=1e-12)
    from sklearn.metrics import roc_auc_score

    assert roc_auc_score(labels, probabilities) > 0.9  # the number feature carries it


def test_boosted_trees_equal_sklearns_own_probabilities():
    from sklearn.ensemble import GradientBoostingClassifier

    a, b, labels = _synthetic(300, seed=2)
    rows = _rows(a, b)
    ours = fit_boosted(rows, labels, seed=0)
    theirs = GradientBoostingClassifier(
        n_estimators=200,
        max_depth=3,
        learning_rate=0.05,
        subsample=0.8,
        min_samples_leaf=20,
        random_state=0,
    ).fit(rows, labels)
    np.testing.assert_allclose(ours.predict(rows), theirs.predict_proba(rows)[:, 1], atol=1e-9)


def test_fit_scorer_compares_both_families_by_cross_validation():
    a, b, labels = _synthetic(300, seed=3)
    small = fit_scorer(_rows(a, b), labels, "auto")  # too few pairs for the trees to compete
    assert set(small.cv_average_precision) == {"logistic"} and small.model.kind == "logistic"
    a, b, labels = _synthetic(TREES_MIN_PAIRS, seed=3)
    fitted = fit_scorer(_rows(a, b), labels, "auto")
    assert set(fitted.cv_average_precision) == {"logistic", "boosted-trees"}
    best = max(fitted.cv_average_precision, key=fitted.cv_average_precision.get)
    assert fitted.model.kind == best
    assert fitted.out_of_fold.shape == labels.shape
    with pytest.raises(ConfigError):
        fit_scorer(_rows(a, b), labels, "forest")  # type: ignore[arg-type]


@pytest.mark.parametrize("fit", [fit_logistic, fit_boosted])
def test_saturation_is_a_proof_over_the_feature_box(fit):
    """Above the saturation cosine, no row inside the bounds scores under the threshold;
    checked on random rows and on the box's corners, with the primary cosine at the edge."""
    a, b, labels = _synthetic(400, seed=4)
    rows = _rows(a, b)
    model = fit(rows, labels)
    names = feature_names(["hash"])
    low, high = bounds(names)
    for threshold in (0.05, 0.2, 0.5):
        edge = saturation_cosine(model, 0, threshold, low, high)
        if math.isinf(edge):
            continue
        rng = np.random.default_rng(0)
        probe = rng.uniform(low, high, size=(3000, len(names)))
        corners = rng.integers(0, 2, size=(3000, len(names))).astype(float)
        probe = np.vstack([probe, low + corners * (high - low)])
        probe[:, 0] = rng.uniform(edge, 1.0, size=len(probe))
        assert model.predict(probe).min() >= threshold - 1e-9
    assert math.isinf(saturation_cosine(model, 0, 1.0 - 1e-12, low, high))


def _saved(tmp_path: Path, embedders=("hash",), primary="hash") -> SavedScorer:
    a, b, labels = _synthetic(300, seed=5)
    cos = np.array([[_cos(x, y)] * len(embedders) for x, y in zip(a, b, strict=True)])
    rows = FeatureExtractor().rows(a, b, cos)
    model = fit_logistic(rows, labels)
    saved = SavedScorer(
        model, tuple(embedders), primary, 0.5, ScoreBand(0.3, math.inf), {"delta": 0.05}
    )
    saved.save(tmp_path / "scorer.json")
    return SavedScorer.load(tmp_path / "scorer.json")


def test_saved_scorer_round_trips_and_refuses_what_it_cannot_run(tmp_path: Path):
    saved = _saved(tmp_path)
    assert saved.features == feature_names(["hash"]) and saved.calibration == {"delta": 0.05}
    assert saved.band == ScoreBand(0.3, math.inf)
    data = json.loads((tmp_path / "scorer.json").read_text())
    for broken, match in (
        ({**data, "format": "pickle"}, "not a semcache scorer"),
        ({**data, "feature_version": 99}, "run semcache calibrate again"),
        ({**data, "features": ["x"]}, "feature list"),
        ({**data, "threshold": 2.0}, "not a probability"),
        ({**data, "primary": "other"}, "primary embedder"),
        ({**data, "model": {**data["model"], "coef": [1.0]}}, "shape"),
        ({**data, "model": {"kind": "pickle"}}, "unknown scorer model kind"),
        ({**data, "band": {"lo": 0.9, "hi": 0.1}}, "lo <= hi"),
    ):
        with pytest.raises(ConfigError, match=match):
            SavedScorer.from_json(broken)
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match="not JSON"):
        SavedScorer.load(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="cannot read"):
        SavedScorer.load(tmp_path / "missing.json")


def test_learned_scorer_scores_like_the_model_and_embeds_only_extra_embedders(tmp_path: Path):
    saved = _saved(tmp_path, embedders=("primary", "extra"), primary="primary")
    with pytest.raises(ConfigError, match="needs embedders"):
        LearnedScorer(saved)
    extra = HashEmbedder()
    scorer = LearnedScorer(saved, {"extra": extra})
    assert isinstance(scorer, HitScorer) and scorer.name == "learned:logistic"
    q, c = "how do I reset my password in 3 steps", "how can I reset my password in 3 steps"
    similarity = _cos(q, c)
    expected = saved.model.predict(FeatureExtractor().row(q, c, [similarity, similarity])[None])
    assert scorer.score(q, c, similarity) == pytest.approx(float(expected[0]), abs=1e-6)
    assert extra.calls == 1
    changed = scorer.score(q, c.replace("3", "5"), similarity)
    assert changed < scorer.score(q, c, similarity)  # the number mismatch counts


class ConstantScorer:
    name = "constant"

    def __init__(self, value: float) -> None:
        self.value, self.calls = value, 0

    def score(self, query: str, candidate: str, similarity: float) -> float:
        self.calls += 1
        return self.value


def test_decision_scores_only_inside_the_band():
    low = ConstantScorer(0.2)
    decision = ScoredDecision(low, threshold=0.5, band=ScoreBand(0.8, 0.97))
    assert decision.search_threshold == 0.8
    assert decision.decide("q", "c", 0.79).outcome is Outcome.BELOW_BAND
    assert decision.decide("q", "c", 0.97).outcome is Outcome.ABOVE_BAND
    assert low.calls == 0  # neither end costs a score
    inside = decision.decide("q", "c", 0.9)
    assert (inside.hit, inside.outcome, inside.score) == (False, Outcome.SCORED_MISS, 0.2)
    high = ScoredDecision(ConstantScorer(0.5), 0.5, ScoreBand(0.8, math.inf))
    assert high.decide("q", "c", 1.0).outcome is Outcome.SCORED_HIT  # >= threshold is a hit


def test_decision_from_a_saved_file_runs_what_was_calibrated(tmp_path: Path):
    saved = _saved(tmp_path)
    decision = ScoredDecision.from_saved(saved)
    assert (decision.threshold, decision.band) == (saved.threshold, saved.band)
    q = "how do I reset my password in 3 steps"
    assert decision.decide(q, q.replace("how do", "how can"), 0.95).hit
    assert not decision.decide(q, q.replace("3", "5"), 0.95).hit
    assert not decision.decide(q, q, 0.1).hit  # below the band, never scored


def test_boosted_trees_single_row_path_equals_the_batch_path():
    a, b, labels = _synthetic(300, seed=6)
    rows = _rows(a, b)
    model = fit_boosted(rows, labels)
    batch = model.predict(rows)
    one_by_one = np.array([model.predict(rows[i : i + 1])[0] for i in range(len(rows))])
    np.testing.assert_allclose(one_by_one, batch, atol=1e-12)
