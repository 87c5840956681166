"""Every embedder keeps the Embedder contract: shape, float32, unit rows, deterministic."""

from __future__ import annotations

import numpy as np
import pytest

from semcache.embedders import Embedder, LiteLLMEmbedder

TEXTS = [
    "What is the capital of France?",
    "How do I reverse a list in Python?",
    "Wie spät ist es?",
    "你好，世界",
    "",
]

EMBEDDERS = ["minilm", "use_multilingual", "e5_small", "litellm_fake", "hash_embedder"]


@pytest.fixture
def litellm_fake(upstream) -> LiteLLMEmbedder:
    return LiteLLMEmbedder(
        "openai/text-embedding-3-small", api_base=upstream.api_base, api_key="sk-test"
    )


@pytest.fixture(params=EMBEDDERS)
def embedder(request) -> Embedder:
    return request.getfixturevalue(request.param)


def test_satisfies_the_protocol(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert isinstance(embedder.name, str) and embedder.name
    assert isinstance(embedder.dim, int) and embedder.dim > 0


def test_shape_dtype_and_unit_norms(embedder: Embedder) -> None:
    texts = [text for text in TEXTS if text]  # an empty input is a provider error for OpenAI
    vectors = embedder.embed(texts)
    assert vectors.shape == (len(texts), embedder.dim)
    assert vectors.dtype == np.float32
    assert vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_deterministic_and_independent_of_batch(embedder: Embedder) -> None:
    texts = TEXTS[:3]
    batch = embedder.embed(texts)
    again = embedder.embed(texts)
    alone = np.vstack([embedder.embed([text]) for text in texts])
    np.testing.assert_allclose(batch, again, atol=1e-6)
    np.testing.assert_allclose(batch, alone, atol=2e-3)  # batch padding moves the last digits


def test_empty_list_gives_zero_rows(embedder: Embedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, embedder.dim)
    assert vectors.dtype == np.float32


def test_different_texts_give_different_vectors(embedder: Embedder) -> None:
    vectors = embedder.embed(TEXTS[:2])
    assert float(vectors[0] @ vectors[1]) < 0.99


@pytest.mark.parametrize("name", [n for n in EMBEDDERS if n != "hash_embedder"])
def test_a_bare_string_is_refused(request, name: str) -> None:
    embedder = request.getfixturevalue(name)
    with pytest.raises(TypeError, match="not a single str"):
        embedder.embed("What is the capital of France?")
