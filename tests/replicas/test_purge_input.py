"""A purge whose filter is not valid text fails with an error naming the filter, before any
tier is touched (every key hashes the filter's UTF-8 bytes, which a lone surrogate lacks).

Measured before: ``purge(tenant="\\ud800")`` raised ``UnicodeEncodeError`` from deep inside
the shared tier."""

from __future__ import annotations

import pytest

from semcache import CacheSettings, SemanticCache
from semcache.errors import InvalidRequest
from semcache.testing import FakeEmbedder

LONE = "\ud800"


@pytest.fixture
def cache(redis_url: str):
    settings = CacheSettings(
        semantic={"threshold": 0.95, "verifier": "none"},
        store={"backend": "redis", "timeout_s": 2.0},
        redis={"url": redis_url, "key_prefix": "pi"},
        admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
    )
    made = SemanticCache(settings, embedder=FakeEmbedder(dim=256))
    yield made
    made.close()


@pytest.mark.parametrize("field", ["tenant", "namespace", "model"])
def test_a_purge_filter_that_is_not_text_names_the_field_and_purges_nothing(cache, field):
    cache.store("what is the capital of france", "Paris", model="gpt-4o-mini", tenant="t1")
    cache.flush()
    with pytest.raises(InvalidRequest) as raised:
        cache.purge(**{field: LONE})
    assert raised.value.field == field and "Unicode" in str(raised.value)
    with pytest.raises(InvalidRequest, match="tenant"):
        cache.purge(tenant=7)  # type: ignore[arg-type]
    hit = cache.check("what is the capital of france", model="gpt-4o-mini", tenant="t1")
    assert hit is not None and hit.text == "Paris"
    assert cache.stats().store_entries == 1


def test_a_request_whose_tenant_is_not_text_names_the_field(cache):
    with pytest.raises(InvalidRequest) as raised:
        cache.check("what is the capital of france", model="gpt-4o-mini", tenant=LONE)
    assert raised.value.field == "tenant"
