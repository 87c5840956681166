"""The tuning loop keeps the fallback lane apart: a routed hit's similarity is the fallback
embedder's, on another scale, so it never feeds the primary threshold's estimate, near-miss
margin or recalibration (``semantic.fallback_embedder``; doubles from ``test_routing``)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.eval.data import PairDataError
from semcache.eval.recalibrate import gather, primary_lane, read_recorded
from semcache.testing import FakeUpstream, InMemoryStore
from tests.pipeline.test_routing import RU_A, RU_B, English, Multilingual

EN_A = "how do I reset my password"
EN_B = "how do I reset my password please"
ALWAYS = {"sample_rate": 1.0, "seed": 0, "answer_similarity": 0.9}


def make(tmp_path, fallback_threshold=0.85, verify=None, **tuning):
    extra = {} if verify is None else {"verify": verify}
    settings = CacheSettings(
        **extra,
        semantic={"threshold": 0.85, "fallback_threshold": fallback_threshold, "verifier": "none"},
        store={"backend": "edge"},
        tuning={"labels_path": str(tmp_path / "labels.jsonl"), **tuning},
    )
    return SemanticCache(
        settings,
        embedder=English(dim=64, name="en"),
        store=InMemoryStore(),
        fallback_embedder=Multilingual(dim=32, name="multi"),
        fallback_store=InMemoryStore(),
        upstream=FakeUpstream(),
    )


def ask(cache, text):
    return cache.completion(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])


def test_a_routed_hits_verdicts_have_their_own_estimate_and_say_their_lane(tmp_path):
    cache = make(tmp_path, verify=ALWAYS)
    with cache:
        for first, second in ((EN_A, EN_B), (RU_A, RU_B)):
            ask(cache, first)
            cache.flush()
            assert cache_info(ask(cache, second)).tier == "semantic"
        cache.drain_tuning()
        estimates = cache.stats().tuning.estimates
        # the fake upstream answers each question differently: both hits judged wrong
        assert estimates["default"].verdicts == 1
        assert estimates["default@multi-32"].verdicts == 1
        lanes = {(p.text_a, p.routed_to) for p in cache.labeled_pairs()}
        assert lanes == {(EN_B, None), (RU_B, "multi-32")}
    rows = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert {r["text_a"]: r["routed_to"] for r in rows} == {EN_B: None, RU_B: "multi-32"}
    kept, routed = primary_lane(read_recorded(tmp_path / "labels.jsonl"))
    assert len(kept) == 1 and routed == {"multi-32": 1}


@pytest.mark.parametrize("fallback_threshold, recorded", [(0.99, False), (0.95, True)])
def test_a_routed_near_miss_is_judged_against_the_fallbacks_threshold(
    tmp_path, fallback_threshold, recorded
):
    # RU_B is ~0.91 from RU_A: a near miss of 0.95 (margin 0.05), far under 0.99, and a hit
    # at the primary's 0.85 had the primary threshold been used
    cache = make(tmp_path, fallback_threshold=fallback_threshold, miss_margin=0.05)
    with cache:
        ask(cache, RU_A)
        cache.flush()
        assert cache_info(ask(cache, RU_B)).tier == "miss"
        rows = cache.miss_rows()
    if recorded:
        assert [(r["text_a"], r["routed_to"]) for r in rows] == [(RU_B, "multi-32")]
    else:
        assert rows == []


def _labels(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_recalibration_leaves_the_fallbacks_rows_out(tmp_path):
    row = {"text_a": "a", "text_b": "b", "label": 1, "similarity": 0.9}
    mixed = _labels(tmp_path / "mixed.jsonl", [row, {**row, "routed_to": "multi-32"}] * 3)
    args = SimpleNamespace(labels=[mixed], no_thin=True, seed=0, data=None)
    data = gather(args, None)
    assert len(data.labels) == 3 and data.routed == {"multi-32": 3}
    only = _labels(tmp_path / "only.jsonl", [{**row, "routed_to": "multi-32"}])
    with pytest.raises(PairDataError, match="fallback embedder"):
        gather(SimpleNamespace(labels=[only], no_thin=True, seed=0, data=None), None)
    bad = _labels(tmp_path / "bad.jsonl", [{**row, "routed_to": 3}])
    with pytest.raises(PairDataError, match="routed_to"):
        read_recorded(bad)
