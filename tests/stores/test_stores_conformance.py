"""One behaviour, every backend: the shared VectorStore suite (edge, client memory/path)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from store_helpers import DIM, EMBEDDER, NOW, PERSISTENT, VARIANTS, build, make_entry, unit

from semcache.errors import EmbedderMismatchError, StoreError
from semcache.stores import Entry, VectorStore

ALONG = unit(1.0)  # query direction
AT_0_6 = unit(0.6, 0.8)  # cosine 0.6 to ALONG
ORTHOGONAL = unit(0.0, 1.0)  # cosine 0


def search(store: VectorStore, vector=ALONG, threshold: float = 0.0, **partition):
    where = {"tenant": "t1", "namespace": "ns", "scope": "s1", "now": NOW} | partition
    return store.search(vector, threshold=threshold, limit=10, **where)


def test_is_a_vector_store(store: VectorStore) -> None:
    assert isinstance(store, VectorStore)


def test_upsert_then_retrieve_returns_the_same_entry(store: VectorStore) -> None:
    entry = make_entry("k1", response='{"id": "chatcmpl-1", "choices": []}')
    store.upsert([entry])

    got = store.retrieve("k1", tenant="t1", namespace="ns", now=NOW)

    assert got == entry  # every field but the vector
    assert got.question == "question k1?"
    assert store.retrieve("missing", tenant="t1", namespace="ns", now=NOW) is None


def test_a_question_may_be_absent(store: VectorStore) -> None:
    entry = Entry(**{**_fields(make_entry("k1")), "question": None})
    store.upsert([entry])
    assert store.retrieve("k1", tenant="t1", namespace="ns", now=NOW).question is None


def test_storing_a_key_again_overwrites_it(store: VectorStore) -> None:
    store.upsert([make_entry("k1", response="old", vector=ORTHOGONAL)])
    store.upsert([make_entry("k1", response="new", vector=ALONG)])

    assert store.count() == 1
    assert store.retrieve("k1", tenant="t1", namespace="ns", now=NOW).response == "new"
    [match] = search(store, threshold=0.99)
    assert match.entry.response == "new"


def test_search_returns_exact_cosine_best_first_and_applies_the_threshold(
    store: VectorStore,
) -> None:
    store.upsert(
        [
            make_entry("same", ALONG),
            make_entry("near", AT_0_6),
            make_entry("far", ORTHOGONAL),
        ]
    )

    matches = search(store, threshold=-1.0)
    assert [m.entry.key for m in matches] == ["same", "near", "far"]
    assert [m.similarity for m in matches] == pytest.approx([1.0, 0.6, 0.0], abs=1e-6)

    assert [m.entry.key for m in search(store, threshold=0.5999)] == ["same", "near"]
    assert [m.entry.key for m in search(store, threshold=0.6001)] == ["same"]
    assert search(store, vector=unit(0.0, 0.0, 1.0), threshold=0.1) == []
    assert search(store, threshold=0.0)[0].entry.vector is None  # vectors are not read back


def test_search_limit(store: VectorStore) -> None:
    store.upsert([make_entry("same", ALONG), make_entry("near", AT_0_6)])
    one = store.search(
        ALONG, tenant="t1", namespace="ns", scope="s1", now=NOW, threshold=0.0, limit=1
    )
    assert [m.entry.key for m in one] == ["same"]


@pytest.mark.parametrize("field, other", [("tenant", "t2"), ("namespace", "ns2"), ("scope", "s2")])
def test_no_hit_across_partitions(store: VectorStore, field: str, other: str) -> None:
    store.upsert([make_entry("elsewhere", ALONG, **{field: other})])

    assert search(store, threshold=-1.0) == []
    [match] = search(store, threshold=0.99, **{field: other})
    assert match.entry.key == "elsewhere"


@pytest.mark.parametrize("field, other", [("tenant", "t2"), ("namespace", "ns2")])
def test_retrieve_never_serves_another_tenant_or_namespace(
    store: VectorStore, field: str, other: str
) -> None:
    store.upsert([make_entry("k1", **{field: other})])

    where = {"tenant": "t1", "namespace": "ns"}
    assert store.retrieve("k1", now=NOW, **where) is None
    assert store.retrieve("k1", now=NOW, **(where | {field: other})) is not None


def test_expired_entries_are_not_served(store: VectorStore) -> None:
    store.upsert(
        [
            make_entry("expired", ALONG, expires_at=NOW - 1),
            make_entry("expires-now", ALONG, expires_at=NOW),
            make_entry("live", AT_0_6, expires_at=NOW + 1),
        ]
    )

    assert [m.entry.key for m in search(store, threshold=-1.0)] == ["live"]
    for key in ("expired", "expires-now"):
        assert store.retrieve(key, tenant="t1", namespace="ns", now=NOW) is None
    assert store.retrieve("live", tenant="t1", namespace="ns", now=NOW) is not None
    assert store.count() == 3  # expired entries stay until purged


def test_delete_by_key(store: VectorStore) -> None:
    store.upsert([make_entry("a"), make_entry("b")])
    store.delete(["a", "never-stored"])
    store.delete([])

    assert store.retrieve("a", tenant="t1", namespace="ns", now=NOW) is None
    assert store.retrieve("b", tenant="t1", namespace="ns", now=NOW) is not None


def _population() -> list[Entry]:
    return [
        make_entry("t1-ns-a", tenant="t1", namespace="ns", model="a"),
        make_entry("t1-ns-b", tenant="t1", namespace="ns", model="b"),
        make_entry("t1-ns2-a", tenant="t1", namespace="ns2", model="a"),
        make_entry("t2-ns-a", tenant="t2", namespace="ns", model="a"),
        make_entry("t2-ns2-b", tenant="t2", namespace="ns2", model="b"),
    ]


@pytest.mark.parametrize(
    "selection, removed",
    [
        ({"tenant": "t1"}, {"t1-ns-a", "t1-ns-b", "t1-ns2-a"}),
        ({"namespace": "ns2"}, {"t1-ns2-a", "t2-ns2-b"}),
        ({"model": "b"}, {"t1-ns-b", "t2-ns2-b"}),
        ({"tenant": "t1", "namespace": "ns", "model": "a"}, {"t1-ns-a"}),
        ({"tenant": "nobody"}, set()),
        ({}, {"t1-ns-a", "t1-ns-b", "t1-ns2-a", "t2-ns-a", "t2-ns2-b"}),
    ],
)
def test_purge_removes_exactly_the_selection_and_counts_it(
    store: VectorStore, selection: dict[str, str], removed: set[str]
) -> None:
    population = _population()
    store.upsert(population)

    assert store.purge(**selection) == len(removed)

    assert store.count() == len(population) - len(removed)
    for entry in population:
        found = store.retrieve(entry.key, tenant=entry.tenant, namespace=entry.namespace, now=NOW)
        assert (found is None) == (entry.key in removed), entry.key


def test_purge_expired(store: VectorStore) -> None:
    store.upsert(
        [
            make_entry("old", expires_at=NOW - 5),
            make_entry("edge", expires_at=NOW),
            make_entry("young", expires_at=NOW + 5),
        ]
    )

    assert store.purge_expired(NOW) == 2
    assert store.purge_expired(NOW) == 0
    assert store.count() == 1
    assert store.retrieve("young", tenant="t1", namespace="ns", now=NOW) is not None


def test_recent_is_newest_first_and_filters_by_tenant(store: VectorStore) -> None:
    store.upsert(
        [
            make_entry("second", created_at=NOW - 20),
            make_entry("newest", created_at=NOW - 1),
            make_entry("oldest", created_at=NOW - 300),
            make_entry("other-tenant", tenant="t2", created_at=NOW),
        ]
    )

    assert [e.key for e in store.recent(tenant="t1")] == ["newest", "second", "oldest"]
    assert [e.key for e in store.recent(tenant="t1", limit=2)] == ["newest", "second"]
    assert store.recent(limit=1)[0].key == "other-tenant"
    assert len(store.recent()) == 4


def test_upsert_needs_a_vector(store: VectorStore) -> None:
    entry = Entry(**{**_fields(make_entry("k1")), "vector": None})
    with pytest.raises(StoreError, match="no vector"):
        store.upsert([entry])


def test_wrong_dimension_is_a_store_error(store: VectorStore) -> None:
    with pytest.raises(StoreError):
        store.upsert([make_entry("k1", vector=unit(1.0)[: DIM - 1])])
    with pytest.raises(StoreError):
        search(store, vector=unit(1.0)[: DIM - 1])


def test_setup_again_with_another_embedder_raises(store: VectorStore) -> None:
    store.setup(EMBEDDER, DIM)  # the same embedder again is fine
    with pytest.raises(EmbedderMismatchError):
        store.setup("another-model", DIM)


@pytest.mark.parametrize("variant", PERSISTENT)
def test_entries_survive_close_and_reopen(opener: Callable[..., VectorStore], variant: str) -> None:
    first = opener(variant)
    first.upsert([make_entry("k1", ALONG), make_entry("k2", AT_0_6)])
    first.close()

    again = opener(variant)
    assert again.count() == 2
    assert again.retrieve("k1", tenant="t1", namespace="ns", now=NOW) is not None
    assert [m.entry.key for m in search(again, threshold=0.5)] == ["k1", "k2"]


@pytest.mark.parametrize("variant", PERSISTENT)
@pytest.mark.parametrize("embedder, dim", [("another-model", DIM), (EMBEDDER, DIM * 2)])
def test_reopening_with_another_embedder_or_dimension_raises(
    opener: Callable[..., VectorStore], variant: str, embedder: str, dim: int
) -> None:
    opener(variant).close()
    with pytest.raises(EmbedderMismatchError, match=r"another collection|another store path"):
        opener(variant, embedder=embedder, dim=dim)
    opener(variant).close()  # a failed open leaves the store usable


def test_calls_before_setup_raise_store_error(tmp_path) -> None:

    for variant in VARIANTS:
        with pytest.raises(StoreError, match="setup"):
            build(variant, tmp_path).count()


def _fields(entry: Entry) -> dict[str, object]:
    return {name: getattr(entry, name) for name in Entry.__slots__}


def test_calls_from_several_threads(store: VectorStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def work(worker: int) -> int:
        found = 0
        for i in range(20):
            store.upsert([make_entry(f"w{worker}-{i}", unit(1.0, worker + 1, i))])
            found += len(search(store, threshold=-1.0))
            store.retrieve(f"w{worker}-{i}", tenant="t1", namespace="ns", now=NOW)
        return found

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(4)))

    assert store.count() == 80
    assert all(found >= 20 for found in results)  # each saw at least its own entries
