"""Eval fixtures: a tiny pair file with known cosines and the fake embedder that yields them."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_fakes import TINY, FakeEmbedder, with_cosine, write_jsonl


@pytest.fixture
def tiny_pairs_file(tmp_path: Path) -> Path:
    """Twelve pairs whose fake-embedder cosines are ``TINY`` (see ``tiny_embedder``)."""
    rows = [
        {"text_a": "anchor", "text_b": f"text {i} cos {cosine}", "label": label}
        for i, (cosine, label) in enumerate(TINY)
    ]
    return write_jsonl(tmp_path / "tiny.jsonl", rows)


@pytest.fixture
def tiny_embedder() -> FakeEmbedder:
    vectors = {"anchor": [1.0, 0.0]}
    for i, (cosine, _) in enumerate(TINY):
        vectors[f"text {i} cos {cosine}"] = with_cosine(cosine)
    return FakeEmbedder(vectors)
