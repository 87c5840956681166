"""``store.backend = "redis"`` inside SemanticCache: one semantic store shared by every
process; what one withdraws (purge, model change) no other serves."""

from __future__ import annotations

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.compose.semantic import store_factory
from semcache.config.settings import StoreSettings
from semcache.errors import ConfigError
from semcache.replicas.settings import RedisSettings
from semcache.stores import RedisVectorStore
from semcache.testing import FakeEmbedder, FakeUpstream

QUESTION = "what is the capital city of france"
PARAPHRASE = "what is the capital city of france please"
OTHER_PARAPHRASE = "tell me what is the capital city of france"


def settings(redis_url: str | None) -> CacheSettings:
    return CacheSettings(
        semantic={"threshold": 0.8, "verifier": "none"},
        store={"backend": "redis", "timeout_s": 2.0},
        redis={"url": redis_url, "key_prefix": "rs"},
        admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
    )


def req(content: str) -> dict:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]}


@pytest.fixture
def two(redis_url):
    made: list[SemanticCache] = []

    def make(upstream: FakeUpstream) -> list[SemanticCache]:
        for _ in range(2):
            made.append(
                SemanticCache(settings(redis_url), upstream=upstream, embedder=FakeEmbedder())
            )
        return made

    yield make
    for cache in made:
        cache.close()


def test_a_paraphrase_hits_on_another_process_and_a_purge_ends_it_there(two, raw):
    upstream = FakeUpstream()
    a, b = two(upstream)
    a.completion(**req(QUESTION))
    a.flush()
    assert raw.keys("rs:vs:{*}:v")  # in the vector sets, not in a's process

    hit = b.completion(**req(PARAPHRASE))
    assert cache_info(hit).tier == "semantic" and upstream.call_count == 1

    a.purge()
    assert cache_info(b.completion(**req(OTHER_PARAPHRASE))).tier == "miss"
    assert upstream.call_count == 2


def test_a_model_change_noticed_by_one_process_withdraws_older_answers_for_all(two, raw):
    upstream = FakeUpstream(system_fingerprint="fp-1")
    a, b = two(upstream)
    a.completion(**req(QUESTION))
    a.flush()
    assert cache_info(b.completion(**req(PARAPHRASE))).tier == "semantic"

    upstream.system_fingerprint = "fp-2"
    a.completion(**req("an unrelated question about rivers"))  # a notices the new snapshot
    a.flush()
    # removed from the shared store itself, not only hidden by each process's watch
    stored = [q for key in raw.keys("rs:vs:{*}:p") for q in raw.hvals(key)]
    assert len(stored) == 1 and b"rivers" in stored[0]
    assert cache_info(b.completion(**req(OTHER_PARAPHRASE))).tier == "miss"


def test_the_redis_backend_needs_redis_url():
    with pytest.raises(ConfigError, match=r"store.backend.*redis.url"):
        SemanticCache(settings(None), upstream=FakeUpstream(), embedder=FakeEmbedder())


def test_the_store_is_built_from_the_redis_settings(redis_url):
    store = store_factory(
        StoreSettings(backend="redis"), RedisSettings(url=redis_url, key_prefix="p1")
    )()
    assert isinstance(store, RedisVectorStore)
    store.setup("e", 4)
    assert store._layout.prefix == "p1"
    store.close()
