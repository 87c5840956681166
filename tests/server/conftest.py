"""Fixtures of the proxy tests (helpers live in ``proxy_harness``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from proxy_harness import ENVIRON, LiveServer, Proxy, proxy_config

from semcache.server.app import create_app
from semcache.server.config import ProxyConfig
from semcache.testing import FakeOpenAIServer


@pytest.fixture
def start_proxy(upstream: FakeOpenAIServer) -> Iterator[Callable[..., Proxy]]:
    """Factory: ``start_proxy(cache=None, **cache_settings)`` → a running :class:`Proxy`."""
    from semcache.cache import SemanticCache

    started: list[Proxy] = []

    def start(cache: Any = None, config: ProxyConfig | None = None, **settings: Any) -> Proxy:
        config = config or proxy_config(upstream.api_base, **settings)
        if cache is None:
            cache = SemanticCache(config.cache)
        proxy = Proxy(LiveServer(create_app(config, cache, environ=ENVIRON)).start(), cache)
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.server.stop()
        for client in proxy.clients:
            client.close()
        proxy.cache.close()
