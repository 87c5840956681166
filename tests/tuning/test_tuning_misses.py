"""Miss analysis: near misses recorded with the stored question they came close to,
grouped, and exported in the format calibrate reads."""

from __future__ import annotations

import json

from tuning_helpers import QUESTION, ask, make_cache

from semcache.eval.data import load_pairs
from semcache.eval.recalibrate import read_recorded
from semcache.tuning.misses import cluster_misses, export_rows
from semcache.tuning.records import NearMiss

NEAR = "what is the capital of france"  # close to QUESTION, under a 0.99 threshold
FAR = "how do I bake sourdough bread at home"


def test_near_misses_are_recorded_with_the_nearest_question():
    cache, _, _ = make_cache(threshold=0.99, tuning={"miss_margin": 0.2})
    with cache:
        ask(cache, QUESTION)
        cache.flush()
        keep_out = {"cache": {"no-store": True}}  # so each is nearest to QUESTION
        ask(cache, NEAR, **keep_out)
        ask(cache, NEAR + " now", **keep_out)
        ask(cache, FAR, **keep_out)  # far below the margin: not recorded
        cache.drain_tuning()
        [cluster] = cache.misses()
        assert cluster.question == QUESTION and cluster.count == 2
        assert {q for q, _ in cluster.examples} == {NEAR, NEAR + " now"}
        assert 0.79 <= cluster.max_similarity < 0.99
        rows = cache.miss_rows()
        assert {r["text_a"] for r in rows} == {NEAR, NEAR + " now"}
        assert all(r["text_b"] == QUESTION and r["label"] is None for r in rows)
        assert cache.stats().tuning.near_misses == 2


def test_margin_zero_records_nothing():
    cache, _, _ = make_cache(threshold=0.99, tuning={"miss_margin": 0.0})
    with cache:
        ask(cache, QUESTION)
        cache.flush()
        ask(cache, NEAR)
        cache.drain_tuning()
        assert cache.misses() == []


def test_other_tenants_misses_are_kept_apart():
    cache, _, _ = make_cache(threshold=0.99, tuning={"miss_margin": 0.2})
    with cache:
        ask(cache, QUESTION, tenant="a")
        cache.flush()
        ask(cache, NEAR, tenant="b")  # b has no entry near it
        cache.drain_tuning()
        assert cache.misses() == []


def _miss(query: str, key: str, sim: float) -> NearMiss:
    return NearMiss("t", "ns", query, key, f"question {key}", sim, 0.9, 0.0)


def test_clusters_are_ordered_by_size_and_export_counts_repeats(tmp_path):
    misses = [
        _miss("a", "k1", 0.85),
        _miss("a", "k1", 0.85),
        _miss("b", "k1", 0.8),
        _miss("c", "k2", 0.88),
    ]
    clusters = cluster_misses(misses)
    assert [(c.key, c.count) for c in clusters] == [("k1", 3), ("k2", 1)]
    assert cluster_misses(misses, min_count=2)[0].examples == (("a", 0.85), ("b", 0.8))
    rows = export_rows(misses)
    assert rows[0]["text_a"] == "a" and rows[0]["count"] == 2
    path = tmp_path / "misses.jsonl"
    for row in rows:
        row["label"] = 1  # a person labels them
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert len(load_pairs(path)) == 3  # the format calibrate reads
    recorded = read_recorded(path)
    assert [r.label for r in recorded] == [1, 1, 1] and recorded[0].similarity == 0.85
    assert [r.count for r in recorded] == [2, 1, 1] and recorded[0].probability is None
