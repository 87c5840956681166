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
