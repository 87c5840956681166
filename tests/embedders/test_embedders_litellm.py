"""LiteLLMEmbedder through LiteLLM's real HTTP client against the local fake OpenAI server."""

from __future__ import annotations

import numpy as np
import pytest

from semcache.embedders import LiteLLMEmbedder
from semcache.errors import ConfigError, EmbedderError
from semcache.testing import hash_embedding

MODEL = "openai/text-embedding-3-small"


def make(upstream, **kwargs) -> LiteLLMEmbedder:
    return LiteLLMEmbedder(MODEL, api_base=upstream.api_base, api_key="sk-test", **kwargs)


def test_vectors_are_the_servers_in_input_order(upstream) -> None:
    texts = ["alpha beta", "gamma", "delta epsilon zeta"]
    vectors = make(upstream).embed(texts)
    expected = np.asarray([hash_embedding(t, upstream.embedding_dim) for t in texts], np.float32)
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    assert upstream.requests[-1]["model"] == "text-embedding-3-small"
    assert upstream.headers[-1]["authorization"] == "Bearer sk-test"


def test_dim_is_discovered_lazily_by_one_call(upstream) -> None:
    embedder = make(upstream)
    assert upstream.calls["embeddings"] == 0  # the constructor does no I/O
    assert embedder.dim == upstream.embedding_dim
    assert embedder.dim == upstream.embedding_dim
    assert upstream.calls["embeddings"] == 1


def test_given_dim_needs_no_call_and_is_checked(upstream) -> None:
    embedder = make(upstream, dim=upstream.embedding_dim)
    assert embedder.embed([]).shape == (0, upstream.embedding_dim)
    assert upstream.calls["embeddings"] == 0
    wrong = make(upstream, dim=upstream.embedding_dim + 1)
    with pytest.raises(EmbedderError, match="expected"):
        wrong.embed(["hello"])


def test_batches_of_batch_size(upstream) -> None:
    vectors = make(upstream, batch_size=2).embed([f"text {i}" for i in range(5)])
    assert vectors.shape == (5, upstream.embedding_dim)
    assert [len(request["input"]) for request in upstream.requests] == [2, 2, 1]


def test_provider_error_becomes_embedder_error(upstream) -> None:
    upstream.fail_next = [401]
    embedder = make(upstream, dim=upstream.embedding_dim, max_retries=0)
    with pytest.raises(EmbedderError, match="litellm:openai/text-embedding-3-small") as caught:
        embedder.embed(["hello"])
    assert caught.value.__cause__ is not None
    np.testing.assert_equal(embedder.embed(["hello"]).shape, (1, upstream.embedding_dim))


def test_unreachable_server_becomes_embedder_error() -> None:
    embedder = LiteLLMEmbedder(
        MODEL, api_base="http://127.0.0.1:9/v1", api_key="sk-test", max_retries=0, timeout=5
    )
    with pytest.raises(EmbedderError):
        embedder.embed(["hello"])


def test_extra_kwargs_reach_litellm(upstream) -> None:
    make(upstream, user="tenant-7").embed(["hello"])
    assert upstream.requests[-1]["user"] == "tenant-7"


def test_name_and_argument_checks() -> None:
    assert LiteLLMEmbedder("text-embedding-3-small").name == "litellm:text-embedding-3-small"
    with pytest.raises(ConfigError, match="input"):
        LiteLLMEmbedder("m", input=["x"])
    with pytest.raises(ConfigError, match="dim"):
        LiteLLMEmbedder("m", dim=0)
    with pytest.raises(ConfigError):
        LiteLLMEmbedder("")
