"""The semantic tier inside SemanticCache: real MiniLM, embedded Qdrant, real LiteLLM HTTP."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from semcache import CacheSettings, SemanticCache, StoreError, cache_info
from semcache.stores import QdrantEdgeStore
from semcache.testing import InMemoryStore, hash_embedding

QUESTION = "What is the capital of France?"
PARAPHRASE = "Tell me the capital city of France."


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


class CountingEmbedder:
    """Wraps the real embedder and counts embed calls and texts."""

    def __init__(self, inner) -> None:
        self.inner, self.calls, self.texts = inner, 0, 0
        self.fail = False
        self.hang_s = 0.0
        self.released = threading.Event()  # ends a hang early, once the test has seen it

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts):
        self.calls += 1
        self.texts += len(texts)
        if self.hang_s:
            self.released.wait(self.hang_s)
        if self.fail:
            raise RuntimeError("embedder down")
        return self.inner.embed(texts)


#: These tests are about what the semantic tier serves, not about admission control (its
#: own tests are in tests/reliability): with the defaults, a busy machine sheds a lookup
#: now and then (a suite run beside other jobs served 4 embeddings where 5 were asked).
NEVER_SHED = {"wait_ms": 60_000, "max_loop_lag_ms": None}


def settings(path, threshold=0.8, store=None, **overrides):
    overrides.setdefault("admission", NEVER_SHED)
    return CacheSettings(
        semantic={"threshold": threshold, "verifier": "none"},
        store={"backend": "edge", "path": str(path), "timeout_s": 1.0, **(store or {})},
        **overrides,
    )


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def embedder(minilm):
    return CountingEmbedder(minilm)


@pytest.fixture
def make_cache(tmp_path, embedder, clock):
    caches = []

    def make(path=None, **kw):
        cache = SemanticCache(
            settings(path or tmp_path / "store", **kw), embedder=embedder, clock=clock
        )
        caches.append(cache)
        return cache

    yield make
    for cache in caches:
        cache.close()


@pytest.fixture
def req(upstream):
    def make(content=QUESTION, system=None, history=(), **extra):
        messages = [{"role": "system", "content": system}] if system else []
        messages += [*history, {"role": "user", "content": content}]
        return {
            "model": "openai/gpt-4o-mini",
            "api_base": upstream.api_base,
            "api_key": "sk-test",
            "messages": messages,
            **extra,
        }

    return make


def settle(cache):
    """Wait for write-behind stores to finish (they run off the response path)."""
    cache.flush()


def test_paraphrase_hits_with_the_bundled_model(make_cache, upstream, req, embedder):
    cache = make_cache()
    first = cache.completion(**req())
    settle(cache)
    hit = cache.completion(**req(PARAPHRASE))
    info = cache_info(hit)
    assert info.tier == "semantic" and 0.8 <= info.similarity <= 1.0
    assert hit.choices[0].message.content == first.choices[0].message.content
    assert upstream.chat_calls == 1
    # the miss embedded once (lookup) and the store reused that vector: 2 texts in total
    assert embedder.texts == 2


def test_unrelated_question_misses_and_reports_nearest(make_cache, upstream, req):
    cache = make_cache()
    cache.completion(**req())
    settle(cache)
    miss = cache.completion(**req("How do I bake sourdough bread?"))
    info = cache_info(miss)
    assert info.tier == "miss" and info.nearest_similarity is not None
    assert info.nearest_similarity < 0.8


@pytest.mark.parametrize(
    "variant",
    [
        {"tenant": "other"},
        {"cache": {"namespace": "other"}},
        {"model": "openai/gpt-4o"},
        {"system": "Answer in French."},
        {
            "history": [
                {"role": "user", "content": "Let's talk about Texas."},
                {"role": "assistant", "content": "Sure."},
            ]
        },
        {"temperature": 0.3},
        {"max_tokens": 5},
        {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
    ],
    ids=["tenant", "namespace", "model", "system", "history", "temperature", "max_tokens", "tools"],
)
def test_no_semantic_hit_across_partitions_or_scope(make_cache, upstream, req, variant):
    cache = make_cache()
    cache.completion(**req())
    settle(cache)
    paraphrase = req(PARAPHRASE, **variant)
    assert cache_info(cache.completion(**paraphrase)).tier == "miss"
    # and the same paraphrase in the original partition does hit
    assert cache_info(cache.completion(**req(PARAPHRASE))).tier == "semantic"


def test_threshold_decides(make_cache, upstream, req):
    cache = make_cache(threshold=0.999)
    cache.completion(**req())
    settle(cache)
    assert cache_info(cache.completion(**req(PARAPHRASE))).tier == "miss"


def test_namespace_threshold_override(tmp_path, embedder, clock, upstream, req):
    s = settings(tmp_path / "s", threshold=0.999)
    s.semantic.namespace_thresholds = {"loose": 0.8}
    with SemanticCache(s, embedder=embedder, clock=clock) as cache:
        cache.completion(**req(cache={"namespace": "loose"}))
        settle(cache)
        hit = cache.completion(**req(PARAPHRASE, cache={"namespace": "loose"}))
        assert cache_info(hit).tier == "semantic"


def test_expired_entries_are_not_served_and_are_deleted(make_cache, upstream, req, clock):
    cache = make_cache()
    cache.completion(**req(cache={"ttl": 60}))
    settle(cache)
    clock.now += 61
    assert cache_info(cache.completion(**req(PARAPHRASE))).tier == "miss"
    settle(cache)
    assert cache.stats().store_entries == 2  # the expired entry is still stored ...
    cache.close()
    janitor = make_cache(store={"purge_interval_s": 0.05})
    janitor.completion(**req("Something else to start the janitor"))
    janitor.flush()
    deadline = time.monotonic() + 10
    while janitor.stats().store_entries != 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert janitor.stats().store_entries == 2  # ... until the janitor deletes it (3 - 1)


def test_restart_with_the_same_directory_still_hits(tmp_path, embedder, clock, upstream, req):
    path = tmp_path / "persist"
    with SemanticCache(settings(path), embedder=embedder, clock=clock) as cache:
        cache.completion(**req())
    with SemanticCache(settings(path), embedder=embedder, clock=clock) as cache:
        assert cache.ready()  # the store opens in the background; wait for it
        assert cache_info(cache.completion(**req())).tier == "exact"  # from the store
        assert cache_info(cache.completion(**req(PARAPHRASE))).tier == "semantic"
    assert upstream.chat_calls == 1


def test_streaming_semantic_hit_is_served_as_a_stream(make_cache, upstream, req):
    cache = make_cache()
    first = cache.completion(**req())
    settle(cache)
    stream = cache.completion(**req(PARAPHRASE, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in stream)
    assert stream.cache_info.tier == "semantic"
    assert text == first.choices[0].message.content


def test_failing_embedder_degrades_to_a_miss(make_cache, upstream, req, embedder):
    cache = make_cache()
    cache.completion(**req())
    settle(cache)
    embedder.fail = True
    response = cache.completion(**req(PARAPHRASE))
    assert cache_info(response).tier == "miss"
    assert response.choices[0].message.content.endswith(PARAPHRASE)
    errors = cache.stats().errors
    assert errors.get("semantic_lookup", 0) >= 1


def test_hanging_embedder_degrades_to_a_miss_within_the_timeout(
    make_cache, upstream, req, embedder
):
    cache = make_cache()
    cache.completion(**req())  # loads everything
    settle(cache)
    embedder.hang_s = 3.0
    started = time.perf_counter()
    response = cache.completion(**req(PARAPHRASE))
    assert time.perf_counter() - started < 2.5
    embedder.released.set()
    assert cache_info(response).tier == "miss"


class BrokenStore(QdrantEdgeStore):
    def retrieve(self, *args, **kwargs):
        raise StoreError("store down")

    def nearest(self, *args, **kwargs):
        raise StoreError("store down")

    def nearest_k(self, *args, **kwargs):
        raise StoreError("store down")

    def upsert(self, entries):
        raise StoreError("store down")


def test_failing_store_degrades_to_a_miss(tmp_path, embedder, clock, upstream, req):
    store = BrokenStore(tmp_path / "broken")
    with SemanticCache(
        settings(tmp_path / "x"), embedder=embedder, store=store, clock=clock
    ) as cache:
        first = cache.completion(**req())
        settle(cache)
        second = cache.completion(**req(PARAPHRASE))
        assert cache_info(first).tier == "miss" and cache_info(second).tier == "miss"
        errors = cache.stats().errors
        assert errors["store_upsert"] >= 1 and errors["semantic_lookup"] >= 1
        # the memory tier still answers exact repeats
        assert cache_info(cache.completion(**req())).tier == "exact"


def test_purge_returns_counts_and_removes(make_cache, upstream, req):
    cache = make_cache()
    cache.completion(**req(tenant="a"))
    cache.completion(**req("Another question entirely", tenant="b"))
    settle(cache)
    assert cache.purge(tenant="a") == 1
    assert cache_info(cache.completion(**req(PARAPHRASE, tenant="a"))).tier == "miss"
    assert [e.tenant for e in cache.recent_entries(tenant="b")] == ["b"]


def test_exact_only_entries_for_requests_without_a_user_question(make_cache, upstream, req):
    cache = make_cache(exact={"max_entries": 0})  # no memory tier: the store must answer
    request = req(history=[{"role": "user", "content": "hi"}])
    request["messages"].append({"role": "assistant", "content": "Hello! How can I help?"})
    cache.completion(**request)
    settle(cache)
    assert cache_info(cache.completion(**request)).tier == "exact"


def test_concurrent_threads_share_one_semantic_flight(make_cache, upstream, req):
    cache = make_cache()
    # Long enough that a thread scheduled late on a loaded host still finds the flight open
    # (with 0.2 s one thread once came after it ended and was an exact hit instead).
    upstream.delay_s = 1.0
    results = []
    start = threading.Barrier(8)

    def ask():
        start.wait()
        results.append(cache.completion(**req()))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert upstream.chat_calls == 1
    assert sorted(cache_info(r).tier for r in results).count("coalesced") == 7


def test_embedder_vectors_are_reused_not_recomputed(make_cache, upstream, req, embedder):
    cache = make_cache()
    for i in range(5):
        cache.completion(**req(f"Question number {i} about tax forms"))
    settle(cache)
    assert embedder.texts == 5
    assert np.isclose(np.linalg.norm(embedder.inner.embed(["x"])[0]), 1.0)


class SlowSecondRetrieve(QdrantEdgeStore):
    """Once armed, the second retrieve takes long enough for the first request's flight to
    finish (arm it after readiness, whose probe is a retrieve too)."""

    armed_calls: int | None = None

    def retrieve(self, key, where):
        found = super().retrieve(key, where)  # read before the first answer is written
        if self.armed_calls is not None:
            self.armed_calls += 1
            if self.armed_calls == 2:
                time.sleep(0.4)
        return found


async def test_request_finishing_its_store_lookup_after_the_flight_does_not_call_again(
    tmp_path, embedder, clock, upstream, req
):
    import asyncio

    upstream.delay_s = 0.1
    store = SlowSecondRetrieve(tmp_path / "slow")
    cache = SemanticCache(settings(tmp_path / "x"), embedder=embedder, store=store, clock=clock)
    try:
        await cache.aready()
        store.armed_calls = 0
        first = asyncio.ensure_future(cache.acompletion(**req()))
        await asyncio.sleep(0.03)
        second = await cache.acompletion(**req())  # misses memory, the first's store read waits
        await first
        assert upstream.chat_calls == 1
        # the lookup runs inside the exact key's flight: the second joins it, not a store read
        assert cache_info(second).tier == "coalesced"
    finally:
        await cache.aclose()


class RecordingVerifier:
    """A guard that accepts or refuses every candidate, as told, and records what it was asked."""

    name = "recording"

    def __init__(self, accept: bool) -> None:
        self.accept = accept
        self.asked: list[tuple[str, str]] = []

    def verify(self, query: str, candidate: str) -> bool:
        self.asked.append((query, candidate))
        return self.accept


@pytest.mark.parametrize("accept", [True, False], ids=["accepts", "refuses"])
def test_the_guard_judges_every_candidate_above_the_threshold(
    tmp_path, embedder, clock, upstream, req, accept
):
    verifier = RecordingVerifier(accept)
    s = settings(tmp_path / "s")
    with SemanticCache(s, embedder=embedder, clock=clock, verifier=verifier) as cache:
        cache.completion(**req())
        settle(cache)
        info = cache_info(cache.completion(**req(PARAPHRASE)))
        rejections = cache.stats().verifier_rejections
    assert verifier.asked == [(PARAPHRASE, QUESTION)]  # (new question, stored question)
    assert info.tier == ("semantic" if accept else "miss")
    assert upstream.chat_calls == (1 if accept else 2)
    assert rejections == (0 if accept else 1)


@pytest.mark.parametrize(
    ("name", "tier"), [("none", "semantic"), ("details", "miss"), ("auto", "miss")]
)
def test_the_configured_guard_decides_a_near_duplicate(
    tmp_path, embedder, clock, upstream, req, name, tier
):
    s = settings(tmp_path / "s")
    s.semantic.verifier = name
    two, three = "How do I reset my password in 2 steps?", "How do I reset my password in 3 steps?"
    with SemanticCache(s, embedder=embedder, clock=clock) as cache:
        cache.completion(**req(two))
        settle(cache)
        info = cache_info(cache.completion(**req(three)))
    assert info.tier == tier
    closeness = info.similarity if tier == "semantic" else info.nearest_similarity
    assert closeness is not None and closeness >= 0.8  # the guard, not the threshold, decided


class HashEmbedder:
    """Bag-of-words vectors: instant, and texts with the same words are identical."""

    name = "hash-64"
    dim = 64

    def embed(self, texts):
        return np.array([hash_embedding(t, self.dim) for t in texts], dtype=np.float32)


class RequestPathOnly:
    """A VectorStore without the optional StoreAdmin operations."""

    def __init__(self) -> None:
        self.inner = InMemoryStore()

    def setup(self, embedder, dim):
        self.inner.setup(embedder, dim)

    def close(self):
        self.inner.close()

    def retrieve(self, key, where):
        return self.inner.retrieve(key, where)

    def nearest(self, vector, where):
        return self.inner.nearest(vector, where)

    def nearest_k(self, vector, where, k):
        return self.inner.nearest_k(vector, where, k)

    def upsert(self, entries):
        self.inner.upsert(entries)

    def purge_expired(self, now):
        return self.inner.purge_expired(now)


def test_the_in_memory_store_serves_the_cache(tmp_path, clock, upstream, req):
    store = InMemoryStore()
    with SemanticCache(
        settings(tmp_path / "unused"), embedder=HashEmbedder(), store=store, clock=clock
    ) as cache:
        cache.completion(**req(tenant="a"))
        settle(cache)
        [stored] = store.upserted
        assert (stored.tenant, stored.embedder) == ("a", "hash-64")
        reordered = "The capital of France is what?"  # the same words: cosine 1
        assert cache_info(cache.completion(**req(reordered, tenant="a"))).tier == "semantic"
        assert cache_info(cache.completion(**req(reordered, tenant="b"))).tier == "miss"
        settle(cache)
        assert cache.stats().store_entries == store.count() == 2
        assert [e.tenant for e in cache.recent_entries(tenant="b")] == ["b"]
        assert cache.purge(tenant="a") == 1
        assert store.count() == 1
        assert cache_info(cache.completion(**req(tenant="a"))).tier == "miss"
    assert upstream.chat_calls == 3


def test_a_store_without_admin_operations_serves_but_refuses_to_purge(
    tmp_path, clock, upstream, req
):
    store = RequestPathOnly()
    with SemanticCache(
        settings(tmp_path / "unused"), embedder=HashEmbedder(), store=store, clock=clock
    ) as cache:
        cache.completion(**req())
        settle(cache)
        assert cache.stats().store_entries is None
        assert cache.recent_entries() == []
        with pytest.raises(StoreError, match="cannot purge"):
            cache.purge()
        assert cache_info(cache.completion(**req())).tier == "exact"  # nothing was purged
        assert store.inner.count() == 1
