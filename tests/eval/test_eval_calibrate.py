"""Calibration: the lowest threshold meeting the bound, None when impossible, saving it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import beta

from semcache.errors import ConfigError
from semcache.eval.calibrate import (
    DEFAULT_GRID,
    calibrate,
    choose_threshold,
    hits_needed,
    save_threshold,
    stratified_split,
)
from semcache.settings import CacheSettings


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


def test_choose_threshold_picks_the_lowest_passing_grid_point():
    # 400 positives at 0.97; 50 negatives at 0.93; 400 negatives at 0.5.
    # t <= 0.93 serves 50 false of >= 450 hits (11%); 0.93 < t <= 0.97 serves 400 true hits,
    # whose 95% upper bound 1 - 0.05^(1/400) = 0.0075 <= 0.05. Lowest such grid point: 0.9301.
    scores, labels = _scores((400, 0.97, 1), (50, 0.93, 0), (400, 0.5, 0))
    threshold, bound, reason = choose_threshold(scores, labels, 0.05)
    assert reason is None
    assert threshold == 0.9301
    assert bound == pytest.approx(1 - 0.05 ** (1 / 400))


def test_choose_threshold_agrees_with_a_direct_scan():
    rng = np.random.default_rng(7)
    labels = (rng.random(3000) < 0.4).astype(np.int8)
    scores = np.where(labels == 1, rng.normal(0.92, 0.04, 3000), rng.normal(0.70, 0.08, 3000))
    threshold, bound, _ = choose_threshold(scores, labels, 0.02)
    expected = None
    for t in DEFAULT_GRID:  # independent scan with scipy's beta quantile
        hit = scores >= t
        k, n = int((hit & (labels == 0)).sum()), int(hit.sum())
        upper = 1.0 if k >= n else beta.ppf(0.95, k + 1, n - k)
        if upper <= 0.02:
            expected = t
            break
    assert expected is not None
    assert threshold == expected
    assert bound is not None and bound <= 0.02


def test_none_with_a_reason_when_too_few_hits():
    # 20 perfect positives: even zero false hits bound the rate at 1 - 0.05^(1/20) = 0.139
    scores, labels = _scores((20, 0.99, 1), (20, 0.2, 0))
    threshold, bound, reason = choose_threshold(scores, labels, 0.01)
    assert (threshold, bound) == (None, None)
    assert reason is not None
    assert f"about {hits_needed(0.01, 0.95)} hits" in reason
    assert hits_needed(0.01, 0.95) == 299
    assert hits_needed(0.02, 0.95) == 149
    result = calibrate(scores, labels, 0.01)
    assert result.threshold is None and result.held_out is None and result.holds is None
    assert result.reason == calibrate(scores, labels, 0.01).reason


def test_calibrate_reports_the_held_out_half():
    rng = np.random.default_rng(0)
    labels = (rng.random(4000) < 0.5).astype(np.int8)
    scores = np.where(labels == 1, rng.normal(0.95, 0.02, 4000), rng.normal(0.80, 0.05, 4000))
    result = calibrate(scores, labels, 0.05, seed=1)
    assert result.threshold is not None
    assert result.calibration is not None and result.held_out is not None
    assert result.calibration_pairs + result.held_out_pairs == 4000
    assert result.bound is not None and result.bound <= 0.05
    assert result.calibration.false_hit_rate <= 0.05
    held = result.held_out
    assert held.pairs == result.held_out_pairs
    assert held.false_hit_rate_lo <= held.false_hit_rate <= held.false_hit_rate_hi
    assert result.holds == (held.false_hits <= 0.05 * held.hits)
    assert result.holds  # the same distribution on both halves
    stricter = calibrate(scores, labels, 0.01, seed=1)
    assert stricter.threshold is not None and stricter.threshold > result.threshold
    wilson = calibrate(scores, labels, 0.05, seed=1, method="wilson")
    assert wilson.threshold is not None and wilson.threshold <= result.threshold + 0.01


def test_bad_targets_are_config_errors():
    with pytest.raises(ConfigError):
        calibrate(np.zeros(4), np.zeros(4), 0.0)
    with pytest.raises(ConfigError):
        calibrate(np.zeros(4), np.zeros(4), 0.05, confidence=1.0)


def test_save_threshold_writes_settings_the_cache_reads(tmp_path: Path, monkeypatch):
    for key in ("SEMCACHE_SEMANTIC__THRESHOLD", "SEMCACHE_SEMANTIC__NAMESPACE_THRESHOLDS"):
        monkeypatch.delenv(key, raising=False)
    env = tmp_path / ".env"
    env.write_text("# mine\nSEMCACHE_STORE__PATH=/tmp/x\nSEMCACHE_SEMANTIC__THRESHOLD=0.9\n")
    save_threshold(env, 0.934)
    save_threshold(env, 0.97, namespace="support")
    save_threshold(env, 0.91, namespace="chat")
    save_threshold(env, 0.975, namespace="support")
    text = env.read_text()
    assert text.startswith("# mine\nSEMCACHE_STORE__PATH=/tmp/x\n")
    assert text.count("SEMCACHE_SEMANTIC__THRESHOLD=") == 1
    settings = CacheSettings(_env_file=env)
    assert settings.semantic.threshold == 0.934
    assert settings.semantic.namespace_thresholds == {"chat": 0.91, "support": 0.975}
    assert settings.store.path == "/tmp/x"
    with pytest.raises(ConfigError):
        save_threshold(env, 1.5)
    env.write_text("SEMCACHE_SEMANTIC__NAMESPACE_THRESHOLDS=[1]\n")
    with pytest.raises(ConfigError, match="JSON object"):
        save_threshold(env, 0.9, namespace="x")
