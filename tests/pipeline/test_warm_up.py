"""The semantic tier warms in the background: lookups never wait for the model, answers given
meanwhile are still stored, ``ready()`` waits, and ``health(wait=False)`` says "warming"."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.embedders import l2_normalise
from semcache.testing import InMemoryStore, hash_embedding

QUESTION = "What is the capital of France?"
PARAPHRASE = "What is the capital of France, please?"


class SlowToLoad:
    """A bag-of-words embedder whose model 'loads' (``dim``) only once ``loaded`` is set;
    counts the texts it embeds."""

    name = "slow-hash"

    def __init__(self) -> None:
        self.loaded = threading.Event()
        self.embedded: list[str] = []

    @property
    def dim(self) -> int:
        if not self.loaded.wait(timeout=60):
            raise TimeoutError("the test never released the model")
        return 64

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded.extend(texts)
        rows = [hash_embedding(text, 64) for text in texts]
        return l2_normalise(np.asarray(rows, dtype=np.float32).reshape(len(rows), 64))


@pytest.fixture
def req(upstream):
    def make(content: str = QUESTION) -> dict[str, object]:
        return {
            "model": "openai/gpt-4o-mini",
            "api_base": upstream.api_base,
            "api_key": "sk-test",
            "messages": [{"role": "user", "content": content}],
        }

    return make


def test_requests_while_warming_go_upstream_and_are_stored_once_warm(upstream, req) -> None:
    embedder, store = SlowToLoad(), InMemoryStore()
    settings = CacheSettings(semantic={"threshold": 0.8, "verifier": "none"})
    with SemanticCache(settings, embedder=embedder, store=store) as cache:
        assert cache.health(wait=False).ready is False  # at once, not after the load
        assert "semantic_warming" in cache.health(wait=False).parts
        first = cache.completion(**req())  # the model is still loading: no wait, upstream
        assert cache_info(first).tier == "miss"
        assert cache.stats().counts.get("semantic_warming", 0) >= 1
        assert cache_info(cache.completion(**req())).tier == "exact"  # memory already has it
        assert len(store.upserted) == 0
        embedder.loaded.set()
        assert cache.ready() is True
        cache.flush()
        assert [entry.question for entry in store.upserted] == [QUESTION]  # stored once warm
        assert cache.health(wait=False).ready is True
        assert cache_info(cache.completion(**req(PARAPHRASE))).tier == "semantic"
    assert upstream.chat_calls == 1


MESSAGES = [{"role": "user", "content": QUESTION}]


def test_a_lookup_then_the_write_of_its_answer_embed_the_question_once() -> None:
    embedder, store = SlowToLoad(), InMemoryStore()
    embedder.loaded.set()
    settings = CacheSettings(semantic={"threshold": 0.99, "verifier": "none"})
    with SemanticCache(settings, embedder=embedder, store=store) as cache:
        assert cache.ready()
        embedder.embedded.clear()  # the readiness probe's own text
        assert cache.check(model="openai/gpt-4o-mini", messages=MESSAGES) is None
        cache.store(model="openai/gpt-4o-mini", messages=MESSAGES, response="Paris.")
        cache.flush()
        assert len(store.upserted) == 1
        assert embedder.embedded == [QUESTION]


def test_the_vector_lru_can_be_turned_off() -> None:
    embedder, store = SlowToLoad(), InMemoryStore()
    embedder.loaded.set()
    settings = CacheSettings(
        semantic={"threshold": 0.99, "verifier": "none", "vector_cache_entries": 0}
    )
    with SemanticCache(settings, embedder=embedder, store=store) as cache:
        assert cache.ready()
        embedder.embedded.clear()
        assert cache.check(model="openai/gpt-4o-mini", messages=MESSAGES) is None
        assert cache.check(model="openai/gpt-4o-mini", messages=MESSAGES) is None
        assert embedder.embedded == [QUESTION, QUESTION]
