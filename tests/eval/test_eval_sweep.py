"""Sweeps through a fake embedder: counts against brute force, dedupe, verifiers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from eval_fakes import TINY, DigitsVerifier, FakeEmbedder

from semcache.errors import ConfigError, EmbedderError
from semcache.eval.data import PairSet, load_pairs
from semcache.eval.similarity import distinct_texts, embed_texts, pair_similarities
from semcache.eval.sweep import DEFAULT_THRESHOLDS, evaluate, sweep_verifiers, threshold_grid


def test_threshold_grid_is_exact_and_inclusive():
    assert DEFAULT_THRESHOLDS.tolist() == [
        0.9,
        0.91,
        0.92,
        0.93,
        0.94,
        0.95,
        0.96,
        0.97,
        0.98,
        0.99,
    ]
    assert threshold_grid(0.5, 0.6, 0.05).tolist() == [0.5, 0.55, 0.6]
    with pytest.raises(ValueError):
        threshold_grid(0.9, 0.8, 0.01)


def test_similarities_are_the_chosen_cosines(tiny_pairs_file: Path, tiny_embedder: FakeEmbedder):
    similarities = pair_similarities(load_pairs(tiny_pairs_file), tiny_embedder)
    assert similarities.dtype == np.float32
    np.testing.assert_allclose(similarities, [c for c, _ in TINY], atol=1e-6)


def test_sweep_counts_match_brute_force(tiny_pairs_file: Path, tiny_embedder: FakeEmbedder):
    pairs = load_pairs(tiny_pairs_file)
    [result] = evaluate(pairs, tiny_embedder)
    assert (result.dataset, result.embedder, result.verifier) == ("tiny", "fake", "none")
    for i, threshold in enumerate(result.table.thresholds):
        hits = [label for cosine, label in TINY if cosine >= threshold]
        assert result.table.hits[i] == len(hits)
        assert result.table.true_hits[i] == sum(hits)
        assert result.table.false_hits[i] == len(hits) - sum(hits)
    # 0.90: 10 hits, 4 false; 0.95: 0.995 0.985 0.975(F) 0.965 0.955 -> 1 false of 5
    assert result.table.false_hit_rate[0] == pytest.approx(0.4)
    assert result.table.false_hit_rate[5] == pytest.approx(0.2)
    assert result.table.recall[5] == pytest.approx(4 / 6)
    # lowest threshold with false-hit rate <= 0.05 is 0.985 (0.975 is a false hit)
    at_5 = result.recall_at[0.05]
    assert at_5 is not None
    assert at_5.threshold == pytest.approx(0.985, abs=1e-6)
    assert at_5.recall == pytest.approx(2 / 6)


def test_each_distinct_text_is_embedded_once_shortest_first():
    pairs = PairSet(
        name="dupes",
        text_a=["same", "a much longer question here", "same", "b"],
        text_b=["b", "same", "other text", "a much longer question here"],
        labels=np.array([1, 0, 0, 1], dtype=np.int8),
    )
    texts, index_a, index_b = distinct_texts(pairs)
    assert sorted(texts) == sorted({*pairs.text_a, *pairs.text_b})
    assert [texts[i] for i in index_a] == pairs.text_a
    assert [texts[i] for i in index_b] == pairs.text_b
    embedder = FakeEmbedder(dim=8)
    progress: list[tuple[int, int]] = []
    similarities = pair_similarities(
        pairs, embedder, chunk_size=2, progress=lambda done, total: progress.append((done, total))
    )
    assert set(embedder.embedded.values()) == {1}
    assert len(embedder.embedded) == 4
    assert [len(call) for call in embedder.calls] == [2, 2]
    assert embedder.calls[0] == ["b", "same"]
    assert progress == [(2, 4), (4, 4)]
    expected = [
        float(embedder._vector(a) @ embedder._vector(b))
        for a, b in zip(pairs.text_a, pairs.text_b, strict=True)
    ]
    np.testing.assert_allclose(similarities, expected, atol=1e-6)


def test_vectors_are_renormalised_and_bad_shapes_rejected():
    class Unnormalised(FakeEmbedder):
        def embed(self, texts):
            return 3.0 * super().embed(texts)

    vectors = embed_texts(Unnormalised({"x": [0.6, 0.8]}), ["x"])
    np.testing.assert_allclose(vectors, [[0.6, 0.8]], atol=1e-6)

    class Short(FakeEmbedder):
        def embed(self, texts):
            return super().embed(texts)[:-1]

    with pytest.raises(EmbedderError, match="shape"):
        embed_texts(Short(), ["x", "y"])


def test_verifier_asked_once_per_pair_and_only_removes_hits():
    pairs = PairSet(
        name="numbers",
        text_a=["price in 2024", "price in 2024", "cats", "dogs"],
        text_b=["price in 2025", "cost in 2024", "cat", "dog"],
        labels=np.array([0, 1, 1, 1], dtype=np.int8),
    )
    similarities = np.array([0.97, 0.96, 0.951, 0.93], dtype=np.float32)
    verifier = DigitsVerifier()
    decisions: dict[str, np.ndarray] = {}
    for embedder in ("e1", "e2"):  # a second embedder reuses the decisions
        baseline, verified = sweep_verifiers(
            pairs, similarities, embedder=embedder, verifiers=[verifier], decisions=decisions
        )
    assert verifier.calls == len(pairs)
    assert decisions["digits"].tolist() == [False, True, True, True]
    assert (baseline.verifier, verified.verifier, verified.vetoed) == ("none", "digits", 1)
    assert np.all(verified.table.hits <= baseline.table.hits)
    # at 0.95 the baseline serves 2024 -> 2025 (false); the verifier drops it
    row = DEFAULT_THRESHOLDS.tolist().index(0.95)
    assert (baseline.table.hits[row], baseline.table.false_hits[row]) == (3, 1)
    assert (verified.table.hits[row], verified.table.false_hits[row]) == (2, 0)
    assert verified.curve.thresholds.tolist() == pytest.approx([0.96, 0.951, 0.93])


def test_named_verifiers_resolve_to_the_answer_guard():
    from semcache.eval.resolve import resolve_verifier, verifier_names

    assert {"none", "details", "auto"} <= set(verifier_names())
    assert resolve_verifier("none").name == "none"
    guard = resolve_verifier("details")
    assert guard.name == "details"
    assert not guard.verify("reset my password in 2 steps", "reset my password in 3 steps")
    assert guard.verify("How do I reset my password?", "How can I reset my password?")
    with pytest.raises(ConfigError, match="unknown verifier"):
        resolve_verifier("psychic")
