"""Shared fixtures: offline environment, a local OpenAI-compatible upstream, caches."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

from semcache.testing import FakeOpenAIServer  # noqa: E402


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def upstream(upstream_server: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    """The session's fake upstream, reset to defaults for each test."""
    upstream_server.reset()
    upstream_server.delay_s = 0.0
    upstream_server.chunk_delay_s = 0.0
    upstream_server.chunks = 4
    yield upstream_server
    upstream_server.reset()


@pytest.fixture(scope="session")
def minilm():
    """The bundled all-MiniLM-L6-v2 embedder, loaded once per session."""
    from semcache.embedders import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    return embedder
