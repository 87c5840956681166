"""The proxy says why a request went upstream: ``x-semcache-miss-reason``."""

from __future__ import annotations

from collections.abc import Callable

from proxy_harness import Proxy

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def test_miss_reason_header(start_proxy: Callable[..., Proxy]) -> None:
    proxy = start_proxy()
    assert proxy.cache.ready()
    client = proxy.client()
    create = client.chat.completions.with_raw_response.create
    first = create(model="fast", messages=QUESTION)
    assert first.headers["x-semcache-tier"] == "miss"
    assert first.headers["x-semcache-miss-reason"] == "semantic_off"  # the harness has none
    again = create(model="fast", messages=QUESTION)
    assert again.headers["x-semcache-tier"] == "exact"
    assert "x-semcache-miss-reason" not in again.headers
    fresh = create(model="fast", messages=QUESTION, extra_headers={"x-semcache-no-cache": "true"})
    assert fresh.headers["x-semcache-miss-reason"] == "bypass"


def test_a_question_past_the_embedders_window_says_so(start_proxy, upstream, minilm) -> None:
    from proxy_harness import proxy_config

    from semcache.cache import SemanticCache
    from semcache.testing import InMemoryStore

    config = proxy_config(upstream.api_base)
    cache = SemanticCache(config.cache, embedder=minilm, store=InMemoryStore())
    proxy = start_proxy(cache=cache, config=config)
    create = proxy.client().chat.completions.with_raw_response.create
    document = " ".join(
        f"Section {i} of the report lists the figures of region {i}." for i in range(60)
    )
    long = [{"role": "user", "content": f"{document}\nQuestion: what was the total revenue?"}]
    first = create(model="fast", messages=long)
    assert first.headers["x-semcache-tier"] == "miss"
    assert first.headers["x-semcache-miss-reason"] == "beyond_window"
    assert cache.stats().counts["beyond_window"] == 1
