"""``learned+guard``: a learned scorer under the answer guard's veto, calibrated and served as one
rule (issue 25: the guard's flags are features, but a few hundred pairs cannot make a
logistic model treat one as decisive; the veto can).

What must hold: calibrate offers it as a candidate with exactly the guard's rejections cut;
the scorer file carries the veto (version 3, so an older reader refuses it rather than
dropping it); the cache runs the veto before anything else, the band's saturated top
included, and counts it as a verifier rejection."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from test_scorer_in_cache import (
    MODEL,
    NEW_A,
    NEW_B,
    RecordingScorer,
    _cache,
    _labeled_pairs,
    _seed,
    _settings,
    cache_embedder,
    calibrated,  # noqa: F401  (the module fixture)
)

from semcache.errors import ConfigError
from semcache.eval import resolve
from semcache.eval.calibrate_cmd import LEARNED_GUARD, _save, build_candidates
from semcache.eval.data import load_pairs
from semcache.eval.frontier import frontier, split_parts
from semcache.guard import get_verifier
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.scoring import Outcome, SavedScorer, ScoreBand, ScoredDecision
from semcache.scoring.saved import load_scorer_file
from semcache.testing import InMemoryStore

DIFFERENT = ("topic alpha takes 6 steps", "topic alpha needs 5 steps")  # the guard: numbers differ
SAME = ("topic beta takes 7 steps", "topic beta needs 7 steps")


def _d(decision) -> tuple:
    return decision.hit, decision.outcome, decision.score


def test_the_veto_comes_before_the_band_and_the_model():
    band = ScoreBand(0.8, 0.98)
    vetoed = ScoredDecision(RecordingScorer(0.9), 0.5, band, veto=get_verifier("details"))
    plain = ScoredDecision(RecordingScorer(0.9), 0.5, band)
    for similarity in (0.9, 0.99):  # scored, and above the band's top (never scored)
        assert plain.decide(*DIFFERENT, similarity).hit
        assert _d(vetoed.decide(*DIFFERENT, similarity)) == (False, Outcome.VETOED, None)
    assert _d(vetoed.decide(*SAME, 0.9)) == (True, Outcome.SCORED_HIT, 0.9)
    assert _d(vetoed.decide(*SAME, 0.99)) == (True, Outcome.ABOVE_BAND, None)
    assert vetoed.decide(*DIFFERENT, 0.5).outcome is Outcome.BELOW_BAND
    # no stored question: nothing to veto with, so a miss even above the band's top
    assert _d(vetoed.decide(SAME[0], None, 0.99)) == (False, Outcome.NO_QUESTION, None)
    assert plain.decide(SAME[0], None, 0.99).hit


def test_the_tier_reports_a_veto_as_a_rejection():
    decision = ScoredDecision(
        RecordingScorer(0.9), 0.5, ScoreBand(0.8, 0.98), veto=get_verifier("details")
    )
    tier = SemanticTier(
        embedder=cache_embedder,
        store=InMemoryStore,
        verifier=get_verifier("none"),
        threshold=0.999,
        scorer=lambda: decision,
    )

    async def run():
        await tier.setup()
        try:
            return [await tier.ajudge(*pair, 0.9, "default") for pair in (DIFFERENT, SAME)]
        finally:
            await tier.close()

    vetoed, served = asyncio.run(run())
    assert (vetoed.hit, vetoed.rejected, vetoed.outcome) == (False, True, Outcome.VETOED)
    assert (served.hit, served.rejected, served.score) == (True, False, 0.9)


def test_scorer_file_carries_the_veto_as_version_3(calibrated: Path, tmp_path):  # noqa: F811
    saved = SavedScorer.load(_settings(calibrated).semantic.scorer)
    assert saved.veto is None and saved.to_json()["version"] == 2  # no veto: files as before
    file = tmp_path / "vetoed.json"
    replace(saved, veto="details").save(file)
    data = json.loads(file.read_text())
    assert (data["version"], data["veto"]) == (3, "details")
    assert load_scorer_file(file).to_json() == replace(saved, veto="details").to_json()
    bad = [
        {**data, "version": 2},  # an older reader's version would drop the veto
        {k: v for k, v in data.items() if k != "veto"},
        {**data, "veto": ""},
        {**data, "kind": "cross-encoder"},
    ]
    for case in bad:
        file.write_text(json.dumps(case))
        with pytest.raises(ConfigError):
            load_scorer_file(file)


def test_the_cache_runs_the_files_veto(calibrated: Path, tmp_path):  # noqa: F811
    """The same saved model, with and without ``veto``: the 0.99 pair with another number is
    refused by the veto first (a verifier rejection, not scored) only when the file says so."""
    saved = SavedScorer.load(_settings(calibrated).semantic.scorer)
    file = tmp_path / "vetoed.json"
    replace(saved, veto="details").save(file)
    plain = str(_settings(calibrated).semantic.scorer)
    for path, rejections, scored in ((plain, 0, 2), (str(file), 1, 1)):
        with _cache(_settings(calibrated, scorer=path)) as cache:
            _seed(cache)
            assert cache.check(NEW_A, model=MODEL) is None
            hit = cache.check(NEW_B, model=MODEL)
            assert hit is not None and hit.text == "answer B"
            stats = cache.stats()
            assert stats.verifier_rejections == rejections, path
            assert stats.counts["scorer_scored"] == scored, path


def test_calibrate_offers_the_vetoed_scorer_and_saves_its_veto(tmp_path, monkeypatch):
    data, embedder = _labeled_pairs(tmp_path)
    monkeypatch.setattr(resolve, "resolve_embedder", lambda *a, **k: embedder)
    pairs = load_pairs(data)
    from semcache.eval.similarity import pair_similarities

    sims = {"numbers": pair_similarities(pairs, embedder).astype(np.float64)}
    parts = split_parts(pairs.labels, 0)
    verifier = get_verifier("details")
    kinds = {"cosine": False, "guard": False, "learned": True}
    candidates, learned = build_candidates(pairs, sims, parts, verifier, kinds, seed=0)
    by_name = {c.name: c for c in candidates}
    assert set(by_name) == {"learned", LEARNED_GUARD}
    accepted = np.array(
        [verifier.verify(a, b) for a, b in zip(pairs.text_a, pairs.text_b, strict=True)]
    )
    assert not accepted.all() and accepted.any()
    for part in ("fit", "test"):
        idx = getattr(parts, part)
        plain, cut = getattr(by_name["learned"], part), getattr(by_name[LEARNED_GUARD], part)
        np.testing.assert_array_equal(cut, np.where(accepted[idx], plain, -np.inf))
    # without a guard (--verifier none) there is nothing to veto with
    none, _ = build_candidates(pairs, sims, parts, get_verifier("none"), kinds, seed=0)
    assert [c.name for c in none] == ["learned"]

    result = frontier(candidates, pairs.labels, parts, deltas=(0.05,), estimate_needed=False)
    chosen = result.rows[(LEARNED_GUARD, 0.05)]
    assert chosen.threshold is not None
    args = argparse.Namespace(
        save=str(tmp_path / ".env"),
        scorer_file=None,
        verifier="auto",
        confidence=0.95,
        seed=0,
        data=str(data),
        fit_fraction=0.2,
        holdout=None,
        add_collisions=False,
    )
    _save(args, chosen, learned, sims, Console(file=io.StringIO()))
    saved = load_scorer_file(tmp_path / "semcache-scorer.json")
    assert isinstance(saved, SavedScorer) and saved.veto == "details"  # resolved, not "auto"
    assert saved.threshold == chosen.threshold
