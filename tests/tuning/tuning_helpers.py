"""Shared pieces of the tuning tests: a cache on fakes whose answers depend on the city."""

from __future__ import annotations

from typing import Any

from semcache import CacheSettings, SemanticCache
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

MODEL = "gpt-4o-mini"
QUESTION = "what is the capital city of france"
PARAPHRASE = "what is the capital city of france please"
OTHER = "what is the capital city of spain"  # close in words, a different answer


def city_answer(params: Any) -> str:
    text = params["messages"][-1]["content"]
    for city, answer in (("france", "Paris."), ("spain", "Madrid."), ("italy", "Rome.")):
        if city in text:
            return answer
    return "I do not know."


def make_cache(
    store: Any = None, upstream: FakeUpstream | None = None, threshold: float = 0.8, **settings: Any
) -> tuple[SemanticCache, FakeUpstream, Any]:
    upstream = upstream or FakeUpstream(city_answer)
    store = store if store is not None else InMemoryStore()
    cache = SemanticCache(
        CacheSettings(
            semantic={"threshold": threshold, "verifier": "none"},
            store={"backend": "none"},
            **settings,
        ),
        embedder=FakeEmbedder(),
        store=store,
        upstream=upstream,
    )
    return cache, upstream, store


def ask(c: SemanticCache, text: str, **kwargs: Any) -> Any:
    return c.completion(model=MODEL, messages=[{"role": "user", "content": text}], **kwargs)
