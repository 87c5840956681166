"""After a restart, the on-disk exact tier answers before the embedder's model has loaded.

The second cache's embedder is the public ``FakeEmbedder`` gated on an event (a model still
loading: its name is known, its dimension and vectors are not), over the same edge store
directory. Issue 24 item 7: those first requests used to skip the store and go upstream.
"""

from __future__ import annotations

import contextlib
import threading
import time

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.stats import MissReason, Tier
from semcache.testing import FakeEmbedder, FakeUpstream

QUESTION = "How do I export my invoices as CSV?"
PARAPHRASE = "How do I export invoices as a CSV file?"


def settings(path) -> CacheSettings:
    return CacheSettings(
        semantic={"threshold": 0.5, "verifier": "none"},
        store={"backend": "edge", "path": str(path)},
        admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
    )


@contextlib.contextmanager
def restarted(path, embedder, loaded, upstream):
    """The second cache; the model "finishes loading" before it closes (close waits)."""
    cache = SemanticCache(settings(path), embedder=embedder, upstream=upstream)
    try:
        yield cache
    finally:
        loaded.set()
        cache.close()


def ask(semcache, text, **kwargs):
    messages = [{"role": "user", "content": text}]
    return semcache.completion(model="openai/gpt-4o-mini", messages=messages, **kwargs)


def probe(cache, text):
    """Ask without keeping the answer (not even in memory), so a hit can only be the
    store's."""
    return cache_info(ask(cache, text, cache={"no-store": True}))


def test_an_exact_repeat_hits_from_disk_while_the_model_loads(tmp_path):
    path = tmp_path / "store"
    first = FakeUpstream()
    with SemanticCache(settings(path), embedder=FakeEmbedder(), upstream=first) as cache:
        cache.ready()
        ask(cache, QUESTION)
        assert cache.flush().written == 1

    loaded = threading.Event()
    embedder = FakeEmbedder(loaded=loaded)
    upstream = FakeUpstream()
    with restarted(path, embedder, loaded, upstream) as cache:
        deadline = time.monotonic() + 5.0
        info = probe(cache, QUESTION)
        while info.tier is not Tier.EXACT and time.monotonic() < deadline:
            time.sleep(0.02)  # the store opens in the background (milliseconds)
            info = probe(cache, QUESTION)
        assert info.tier is Tier.EXACT, info
        assert not loaded.is_set() and embedder.calls == 0  # the model is not ready
        answered_before = upstream.call_count
        # The semantic tier still waits for the model: a paraphrase goes upstream.
        warming = cache_info(ask(cache, PARAPHRASE))
        assert warming.tier is Tier.MISS and warming.miss_reason is MissReason.WARMING
        assert upstream.call_count == answered_before + 1
        loaded.set()
        assert cache.ready()
        assert cache_info(ask(cache, QUESTION)).tier is Tier.EXACT


def test_a_store_of_another_embedder_is_not_read_before_the_model_loads(tmp_path):
    path = tmp_path / "store"
    with SemanticCache(
        settings(path), embedder=FakeEmbedder(name="other"), upstream=FakeUpstream()
    ) as cache:
        cache.ready()
        ask(cache, QUESTION)
        cache.flush()

    loaded = threading.Event()
    with restarted(path, FakeEmbedder(loaded=loaded), loaded, FakeUpstream()) as cache:
        for _ in range(10):
            info = probe(cache, QUESTION)
            assert info.tier is Tier.MISS, info  # never opened under another model
            time.sleep(0.02)
        loaded.set()
        assert not cache.ready()  # then the usual mismatch: the store is refused
