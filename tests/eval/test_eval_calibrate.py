"""Calibration: a certified threshold on fixed scores, None with a reason when impossible,
and saving what was chosen into settings the cache reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semcache.config.settings import CacheSettings
from semcache.errors import ConfigError
from semcache.eval.calibrate import calibrate, hits_needed, stratified_split
from semcache.eval.persist import (
    env_name,
    save_embedder,
    save_scorer,
    save_threshold,
    save_verifier,
)


def _scores(*groups: tuple[int, float, int]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate (count, score, label) groups."""
    scores = np.concatenate([np.full(n, s) for n, s, _ in groups])
    labels = np.concatenate([np.full(n, lab, dtype=np.int8) for n, _, lab in groups])
    return scores, labels


def test_stratified_split_is_seeded_disjoint_and_balanced():
    labels = np.array([1] * 30 + [0] * 70)
    calibration, held_out = stratified_split(labels, seed=3)
    assert len(np.intersect1d(calibration, held_out)) == 0
    assert sorted([*calibration, *held_out]) == list(range(100))
    assert (labels[calibration] == 1).sum() == 15
    assert (labels[held_out] == 0).sum() == 35
    again, _ = stratified_split(labels, seed=3)
    other, _ = stratified_split(labels, seed=4)
    assert again.tolist() == calibration.tolist()
    assert other.tolist() != calibration.tolist()


def test_a_clean_gap_is_certified_at_its_edge():
    # 1200 positives at 0.97, 150 negatives at 0.93, 1200 negatives at 0.5: only thresholds
    # in (0.93, 0.97] are safe; the certified one must be there, with a bound <= δ.
    scores, labels = _scores((1200, 0.97, 1), (150, 0.93, 0), (1200, 0.5, 0))
    result = calibrate(scores, labels, 0.05)
    assert result.threshold is not None and 0.93 < result.threshold <= 0.97
    assert result.bound is not None and result.bound <= 0.05
    assert result.calibration is not None and result.calibration.false_hits == 0
    assert result.held_out is not None and result.held_out.recall == 1.0
    assert result.holds
    assert result.calibration_pairs + result.held_out_pairs == len(labels)


def test_none_with_a_reason_when_too_few_hits():
    # 300 perfect positives: a testing part of 100 clean hits cannot reject at 1% (needs 299)
    scores, labels = _scores((300, 0.99, 1), (300, 0.2, 0))
    result = calibrate(scores, labels, 0.01)
    assert result.threshold is None and result.held_out is None and result.holds is None
    assert result.reason is not None and f"needs {hits_needed(0.01, 0.95)} hits" in result.reason
    assert "labeled pairs in all" in result.reason
    assert hits_needed(0.01, 0.95) == 299
    assert hits_needed(0.02, 0.95) == 149
    assert hits_needed(0.05, 0.95) == 59


def test_overlap_says_more_pairs_will_not_help():
    # every score level has 30% negatives: no threshold is under 5% at any sample size
    rng = np.random.default_rng(1)
    labels = (rng.random(3000) < 0.7).astype(np.int8)
    scores = rng.random(3000)
    result = calibrate(scores, labels, 0.05)
    assert result.threshold is None
    assert result.reason is not None and "will not help" in result.reason


def test_stricter_targets_give_stricter_thresholds():
    rng = np.random.default_rng(0)
    labels = (rng.random(6000) < 0.5).astype(np.int8)
    scores = np.where(labels == 1, rng.normal(0.95, 0.02, 6000), rng.normal(0.80, 0.05, 6000))
    loose = calibrate(scores, labels, 0.05, seed=1)
    strict = calibrate(scores, labels, 0.02, seed=1)
    assert loose.threshold is not None and strict.threshold is not None
    assert strict.threshold > loose.threshold
    assert loose.holds and strict.holds


def test_bad_targets_are_config_errors():
    with pytest.raises(ConfigError):
        calibrate(np.zeros(4), np.zeros(4), 0.0)
    with pytest.raises(ConfigError):
        calibrate(np.zeros(4), np.zeros(4), 0.05, confidence=1.0)


def test_env_names_come_from_the_settings_class():
    assert env_name("semantic", "threshold") == "SEMCACHE_SEMANTIC__THRESHOLD"
    assert env_name("semantic", "scorer") == "SEMCACHE_SEMANTIC__SCORER"
    with pytest.raises(ConfigError, match="no settings field"):
        env_name("semantic", "thresold")


def test_saved_settings_are_what_the_cache_reads(tmp_path: Path, monkeypatch):
    for key in ("THRESHOLD", "NAMESPACE_THRESHOLDS", "EMBEDDER", "VERIFIER", "SCORER"):
        monkeypatch.delenv(f"SEMCACHE_SEMANTIC__{key}", raising=False)
    env = tmp_path / ".env"
    env.write_text("# mine\nSEMCACHE_STORE__PATH=/tmp/x\nSEMCACHE_SEMANTIC__THRESHOLD=0.9\n")
    save_threshold(env, 0.934)
    save_threshold(env, 0.97, namespace="support")
    save_threshold(env, 0.91, namespace="chat")
    save_threshold(env, 0.975, namespace="support")
    save_embedder(env, "e5-small-4bit")
    save_verifier(env, "none")
    save_scorer(env, tmp_path / "scorer.json")
    text = env.read_text()
    assert text.startswith("# mine\nSEMCACHE_STORE__PATH=/tmp/x\n")
    assert text.count("SEMCACHE_SEMANTIC__THRESHOLD=") == 1
    settings = CacheSettings(_env_file=env)
    assert settings.semantic.threshold == 0.934
    assert settings.semantic.namespace_thresholds == {"chat": 0.91, "support": 0.975}
    assert settings.semantic.embedder == "e5-small-4bit"
    assert settings.semantic.verifier == "none"
    assert settings.semantic.scorer == str(tmp_path / "scorer.json")
    assert settings.store.path == "/tmp/x"
    save_scorer(env, None)
    assert CacheSettings(_env_file=env).semantic.scorer is None
    with pytest.raises(ConfigError):
        save_threshold(env, 1.5)
    env.write_text("SEMCACHE_SEMANTIC__NAMESPACE_THRESHOLDS=[1]\n")
    with pytest.raises(ConfigError, match="JSON object"):
        save_threshold(env, 0.9, namespace="x")
