"""Length buckets: every text embedded once, batches bounded, similar lengths together."""

from __future__ import annotations

import numpy as np
import pytest

from semcache.embedders._buckets import plan_batches, token_batches


def _flat(batches: list[np.ndarray]) -> list[int]:
    return sorted(int(i) for batch in batches for i in batch)


@pytest.mark.parametrize("max_batch", [1, 3, 16, 64])
def test_every_index_once_and_no_batch_too_big(max_batch: int) -> None:
    lengths = np.random.default_rng(7).integers(1, 200, size=301)
    batches = plan_batches(lengths, max_batch)
    assert _flat(batches) == list(range(301))
    assert all(1 <= len(batch) <= max_batch for batch in batches)


def test_empty_input_plans_nothing() -> None:
    assert plan_batches(np.array([], dtype=np.int64), 8) == []


def test_a_few_long_texts_get_their_own_batch() -> None:
    lengths = np.array([12] * 60 + [250, 240])
    batches = plan_batches(lengths, 64)
    long_batch = next(batch for batch in batches if 60 in batch)
    assert sorted(long_batch.tolist()) == [60, 61]  # the short ones are not padded to 250
    assert len(batches) == 2


def test_equal_lengths_fill_whole_batches() -> None:
    batches = plan_batches(np.full(128, 20), 32)
    assert [len(batch) for batch in batches] == [32, 32, 32, 32]


def test_small_length_differences_are_not_worth_a_new_batch() -> None:
    """Splitting saves 1 token a text here, less than one batch's fixed cost."""
    batches = plan_batches(np.array([10] * 20 + [11] * 20), 64)
    assert len(batches) == 1


def test_bad_max_batch_is_refused() -> None:
    with pytest.raises(ValueError, match="max_batch"):
        plan_batches(np.array([1, 2]), 0)


def test_token_batches_counts_tokens_and_skips_a_lone_text() -> None:
    calls: list[list[str]] = []

    def tokenizer(texts: list[str], truncation: bool, max_length: int | None) -> dict:
        calls.append(texts)
        return {"input_ids": [text.split() for text in texts]}

    texts = ["a b"] * 40 + ["a " * 200]  # one long text among short ones
    batches = token_batches(tokenizer, texts, 256, 64)
    assert _flat(batches) == list(range(41))
    assert [40] in [batch.tolist() for batch in batches]  # the long one alone
    assert [len(c) for c in calls] == [41]
    assert [b.tolist() for b in token_batches(tokenizer, ["only"], 256, 64)] == [[0]]
    assert len(calls) == 1  # no count for a single text
    by_characters = token_batches(None, ["ab"] * 3 + ["x" * 500], None, 64)
    assert [3] in [batch.tolist() for batch in by_characters]
