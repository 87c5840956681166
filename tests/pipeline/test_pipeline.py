"""The request pipeline with in-process doubles: no HTTP, no model, no private attributes."""

from __future__ import annotations

import threading
import time

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.stats import Tier
from semcache.testing import FakeEmbedder, FakeUpstream

QUESTION = "How do I reset my password?"


def ask(content: str = QUESTION, **extra):
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}], **extra}


def memory_only() -> CacheSettings:
    return CacheSettings(store={"backend": "none"})


class SlowEmbedder(FakeEmbedder):
    """A fake embedder that takes ``delay_s`` per call (runs in a worker thread)."""

    delay_s = 0.0

    def embed(self, texts):
        time.sleep(self.delay_s)
        return super().embed(texts)


@pytest.fixture
def stored(tmp_path):
    """A cache with the embedded store, a slow-able fake embedder and a fake upstream."""
    upstream, embedder = FakeUpstream(), SlowEmbedder()
    settings = CacheSettings(
        semantic={"threshold": 0.9, "verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "edge", "path": str(tmp_path / "s"), "timeout_s": 5.0},
    )
    cache = SemanticCache(settings, embedder=embedder, upstream=upstream)
    cache.ready()
    yield cache, upstream, embedder
    cache.close()


def test_miss_then_exact_from_memory():
    upstream = FakeUpstream()
    with SemanticCache(memory_only(), upstream=upstream) as cache:
        first, second = cache.completion(**ask()), cache.completion(**ask())
        assert (cache_info(first).tier, cache_info(second).tier) == (Tier.MISS, Tier.EXACT)
        assert upstream.call_count == 1
        assert second.choices[0].message.content == first.choices[0].message.content
        stats = cache.stats()
        assert stats.tiers[Tier.MISS] == 1 and stats.tiers[Tier.EXACT] == 1
        assert stats.upstream_calls == 1 and stats.memory_entries == 1


def test_tier_enum_is_defined_once_with_its_properties():
    assert {t for t in Tier if t.is_hit} == {Tier.EXACT, Tier.SEMANTIC, Tier.COALESCED, Tier.MERGED}
    assert {t for t in Tier if t.used_upstream} == {Tier.MISS, Tier.BYPASS}
    assert {t for t in Tier if t.stored} == {Tier.EXACT, Tier.SEMANTIC}
    assert Tier.EXACT == "exact"  # a str: headers and JSON carry the plain name


def test_streaming_goes_through_the_same_path():
    upstream = FakeUpstream(chunks=4)
    with SemanticCache(memory_only(), upstream=upstream) as cache:
        live = list(cache.completion(**ask(stream=True)))
        replay = list(cache.completion(**ask(stream=True)))
        text = "".join(c.choices[0].delta.content or "" for c in live)
        assert text == "".join(c.choices[0].delta.content or "" for c in replay)
        assert cache_info(live[0]).tier == Tier.MISS and cache_info(replay[0]).tier == Tier.EXACT
        assert upstream.call_count == 1
        assert cache_info(cache.completion(**ask())).tier == Tier.EXACT  # non-stream hit too


def test_a_cut_off_stream_is_not_stored():
    upstream = FakeUpstream(chunks=4)
    upstream.abort_after = 2
    with SemanticCache(memory_only(), upstream=upstream) as cache:
        list(cache.completion(**ask(stream=True)))
        upstream.abort_after = None
        assert cache_info(cache.completion(**ask())).tier == Tier.MISS
        assert upstream.call_count == 2


def test_upstream_errors_reach_every_waiter_and_nothing_is_stored():
    upstream = FakeUpstream(delay_s=0.1)
    upstream.fail_next = [ValueError("provider down")]
    with SemanticCache(memory_only(), upstream=upstream) as cache:
        errors = []

        def call():
            try:
                cache.completion(**ask())
            except ValueError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=call) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(errors) == 8 and len({id(e) for e in errors}) == 1
        assert upstream.call_count == 1
        assert cache_info(cache.completion(**ask())).tier == Tier.MISS


def test_purge_wins_over_an_answer_still_in_flight():
    """The request began before the purge; its answer must not be stored after it."""
    upstream = FakeUpstream(delay_s=0.3)
    with SemanticCache(memory_only(), upstream=upstream) as cache:
        thread = threading.Thread(target=lambda: cache.completion(**ask()))
        thread.start()
        deadline = time.monotonic() + 5
        while upstream.call_count == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert cache.purge() == 0
        thread.join()
        assert cache_info(cache.completion(**ask())).tier == Tier.MISS
        assert cache.stats().counts["fenced_writes"] == 1


def test_purge_wins_over_a_pending_store_write(stored):
    cache, upstream, embedder = stored
    embedder.delay_s = 0.3  # no lookup ran, so the write embeds the question: still pending
    fresh = ask(cache={"no-cache": True})
    assert cache_info(cache.completion(**fresh)).tier == Tier.MISS
    cache.purge()
    cache.flush()
    assert cache.stats().store_entries == 0
    assert cache_info(cache.completion(**ask())).tier == Tier.MISS
    assert upstream.call_count == 2


def test_purge_filter_spares_other_partitions_writes(stored):
    cache, _upstream, embedder = stored
    embedder.delay_s = 0.2
    cache.completion(**ask(tenant="a", cache={"no-cache": True}))
    cache.completion(**ask(tenant="b", cache={"no-cache": True}))
    cache.purge(tenant="a")
    cache.flush()
    assert cache.stats().store_entries == 1
    assert [e.tenant for e in cache.recent_entries()] == ["b"]


def test_follower_learns_what_its_leader_was_served_from(tmp_path):
    embedder = SlowEmbedder()
    settings = CacheSettings(
        semantic={"threshold": 0.8, "verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "edge", "path": str(tmp_path / "s")},
    )
    upstream = FakeUpstream(delay_s=0.0)
    with SemanticCache(settings, embedder=embedder, upstream=upstream) as cache:
        cache.completion(**ask("how do I reset my password"))
        cache.flush()
        embedder.delay_s = 0.3
        paraphrase = ask("how do I reset my password please")
        results = []
        threads = [
            threading.Thread(target=lambda: results.append(cache.completion(**paraphrase)))
            for _ in range(3)
        ]
        for t in threads:
            t.start()
            time.sleep(0.05)
        for t in threads:
            t.join()
        infos = sorted((cache_info(r) for r in results), key=lambda i: i.tier)
        assert [i.tier for i in infos] == [Tier.COALESCED, Tier.COALESCED, Tier.SEMANTIC]
        for follower in infos[:2]:
            assert follower.origin == Tier.SEMANTIC
            assert follower.similarity == pytest.approx(infos[2].similarity)
        assert upstream.call_count == 1
