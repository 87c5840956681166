"""Entries written under one embedder identity (model + precision) are never served to
another, even when the vectors would match: a threshold means something for one identity."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from semcache import CacheSettings, SemanticCache
from semcache.embedders import l2_normalise
from semcache.embedders.onnx_runtime import INT8_SUFFIX
from semcache.testing import hash_embedding

MODEL = "openai/gpt-4o-mini"
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
PARAPHRASE = [{"role": "user", "content": "What is the capital of France, please?"}]


class Named:
    """Bag-of-words vectors under a chosen name (the same vectors for every name)."""

    dim = 64

    def __init__(self, name: str) -> None:
        self.name = name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [hash_embedding(text, 64) for text in texts]
        return l2_normalise(np.asarray(rows, dtype=np.float32).reshape(len(rows), 64))


def _cache(name: str, path: Path) -> SemanticCache:
    settings = CacheSettings(
        semantic={"threshold": 0.8, "verifier": "none"},
        store={"backend": "edge", "path": str(path)},
    )
    cache = SemanticCache(settings, embedder=Named(name))
    cache.ready()  # False for the int8 reader when the store refuses a second identity
    return cache


def test_an_int8_embedder_never_sees_float32_entries(tmp_path: Path) -> None:
    store = tmp_path / "store"  # persists across caches, unlike the in-memory double
    fp32 = "sentence-transformers/all-MiniLM-L6-v2"
    with _cache(fp32, store) as writer:
        writer.store(model=MODEL, messages=QUESTION, response="Paris.")
        writer.flush()
        assert writer.check(model=MODEL, messages=PARAPHRASE) is not None  # same identity
    with _cache(fp32 + INT8_SUFFIX, store) as reader:
        assert reader.check(model=MODEL, messages=PARAPHRASE) is None  # semantic: filtered
        assert reader.check(model=MODEL, messages=QUESTION) is None  # exact from the store too
    with _cache(fp32, store) as again:  # the entry was there all along
        assert again.check(model=MODEL, messages=QUESTION) is not None
