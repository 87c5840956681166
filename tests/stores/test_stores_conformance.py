"""One behaviour, every backend: the shared store suite (edge, client memory/path, in-memory).

Each partition field and the expiry rule is tested on both lookups (``nearest`` and
``retrieve``) with a decoy that only a dropped condition would let through, so a backend
that loses any of them in its filter or its post-check fails here.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from store_helpers import DIM, EMBEDDER, NOW, PERSISTENT, VARIANTS, build, make_entry, unit, where

from semcache.errors import EmbedderMismatchError, StoreError
from semcache.stores import Entry, StoreAdmin, VectorStore

ALONG = unit(1.0)  # query direction
AT_0_6 = unit(0.6, 0.8)  # cosine 0.6 to ALONG
ORTHOGONAL = unit(0.0, 1.0)  # cosine 0
OPPOSITE = unit(-1.0)  # cosine -1

#: each partition field, and a value of it other than make_entry's / where's default
PARTITION = [("tenant", "t2"), ("namespace", "ns2"), ("scope", "s2"), ("embedder", "other-model")]


def nearest_key(store: VectorStore, vector=ALONG, **partition) -> str | None:
    match = store.nearest(vector, where(**partition))
    return None if match is None else match.entry.key


def test_implements_both_protocols(store: VectorStore) -> None:
    assert isinstance(store, VectorStore)
    assert isinstance(store, StoreAdmin)


def test_upsert_then_retrieve_returns_the_same_entry(store: VectorStore) -> None:
    entry = make_entry("k1", response='{"id": "chatcmpl-1", "choices": []}')
    store.upsert([entry])

    got = store.retrieve("k1", where())

    assert got == entry  # every field but the vector
    assert got.question == "question k1?"
    assert store.retrieve("missing", where()) is None


def test_a_question_may_be_absent(store: VectorStore) -> None:
    entry = Entry(**{**_fields(make_entry("k1")), "question": None})
    store.upsert([entry])
    assert store.retrieve("k1", where()).question is None


def test_storing_a_key_again_overwrites_it(store: VectorStore) -> None:
    store.upsert([make_entry("k1", response="old", vector=ORTHOGONAL)])
    store.upsert([make_entry("k1", response="new", vector=ALONG)])

    assert store.count() == 1
    assert store.retrieve("k1", where()).response == "new"
    match = store.nearest(ALONG, where())
    assert match.entry.response == "new"
    assert match.similarity == pytest.approx(1.0, abs=1e-6)


def test_nearest_is_the_single_closest_entry_with_its_exact_cosine(store: VectorStore) -> None:
    store.upsert([make_entry("near", AT_0_6), make_entry("far", ORTHOGONAL)])
    match = store.nearest(ALONG, where())
    assert match.entry.key == "near"
    assert match.similarity == pytest.approx(0.6, abs=1e-6)
    assert match.entry.vector is None  # vectors are not read back

    store.upsert([make_entry("same", ALONG)])
    assert nearest_key(store) == "same"
    assert nearest_key(store, vector=ORTHOGONAL) == "far"


def test_nearest_applies_no_threshold(store: VectorStore) -> None:
    store.upsert([make_entry("opposite", OPPOSITE)])
    match = store.nearest(ALONG, where())
    assert match.entry.key == "opposite"
    assert match.similarity == pytest.approx(-1.0, abs=1e-6)


def test_nearest_in_an_empty_partition_is_none(store: VectorStore) -> None:
    assert store.nearest(ALONG, where()) is None


@pytest.mark.parametrize("field, other", PARTITION)
def test_nearest_never_crosses_a_partition_field(
    store: VectorStore, field: str, other: str
) -> None:
    store.upsert([make_entry("elsewhere", ALONG, **{field: other})])
    assert store.nearest(ALONG, where()) is None

    # a worse match at home wins over a perfect one next door
    store.upsert([make_entry("home", ORTHOGONAL)])
    assert nearest_key(store) == "home"
    assert nearest_key(store, **{field: other}) == "elsewhere"


@pytest.mark.parametrize("field, other", PARTITION)
def test_retrieve_never_crosses_a_partition_field(
    store: VectorStore, field: str, other: str
) -> None:
    store.upsert([make_entry("k1", **{field: other})])

    assert store.retrieve("k1", where()) is None
    assert store.retrieve("k1", where(**{field: other})).key == "k1"


def test_nearest_serves_only_live_entries(store: VectorStore) -> None:
    store.upsert(
        [
            make_entry("expired", ALONG, expires_at=NOW - 1),
            make_entry("expires-now", ALONG, expires_at=NOW),
        ]
    )
    assert store.nearest(ALONG, where()) is None

    store.upsert([make_entry("live", ORTHOGONAL, expires_at=NOW + 1)])
    assert nearest_key(store) == "live"
    assert nearest_key(store, now=NOW - 2) in {"expired", "expires-now"}  # earlier, both live
    assert store.count() == 3  # expired entries stay until purged


def test_retrieve_serves_only_live_entries(store: VectorStore) -> None:
    store.upsert(
        [
            make_entry("expired", expires_at=NOW - 1),
            make_entry("expires-now", expires_at=NOW),
            make_entry("live", expires_at=NOW + 1),
        ]
    )
    for key in ("expired", "expires-now"):
        assert store.retrieve(key, where()) is None
        assert store.retrieve(key, where(now=NOW - 2)).key == key
    assert store.retrieve("live", where()).key == "live"


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
        found = store.retrieve(entry.key, where(tenant=entry.tenant, namespace=entry.namespace))
        assert (found is None) == (entry.key in removed), entry.key


def test_purge_expired_removes_exactly_what_lookups_no_longer_serve(store: VectorStore) -> None:
    store.upsert(
        [
            make_entry("old", expires_at=NOW - 5),
            make_entry("boundary", expires_at=NOW),
            make_entry("young", expires_at=NOW + 5),
        ]
    )

    assert store.purge_expired(NOW) == 2
    assert store.purge_expired(NOW) == 0
    assert store.count() == 1
    assert store.retrieve("young", where()) is not None
    assert store.retrieve("boundary", where(now=NOW - 1)) is None  # gone, not just hidden


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
    assert all(e.vector is None for e in store.recent())


def test_upsert_needs_a_vector(store: VectorStore) -> None:
    entry = Entry(**{**_fields(make_entry("k1")), "vector": None})
    with pytest.raises(StoreError, match="no vector"):
        store.upsert([entry])


def test_wrong_dimension_is_a_store_error(store: VectorStore) -> None:
    short = unit(1.0)[: DIM - 1]
    with pytest.raises(StoreError):
        store.upsert([make_entry("k1", vector=short)])
    store.upsert([make_entry("k2")])
    with pytest.raises(StoreError):
        store.nearest(short, where())


def test_setup_again_with_another_embedder_raises(store: VectorStore) -> None:
    store.setup(EMBEDDER, DIM)  # the same embedder again is fine
    with pytest.raises(EmbedderMismatchError):
        store.setup("another-model", DIM)
    with pytest.raises(EmbedderMismatchError):
        store.setup(EMBEDDER, DIM * 2)


@pytest.mark.parametrize("variant", PERSISTENT)
def test_entries_survive_close_and_reopen(opener: Callable[..., VectorStore], variant: str) -> None:
    first = opener(variant)
    first.upsert([make_entry("k1", ALONG), make_entry("k2", AT_0_6)])
    first.close()

    again = opener(variant)
    assert again.count() == 2
    assert again.retrieve("k1", where()) is not None
    assert nearest_key(again) == "k1"
    assert nearest_key(again, vector=AT_0_6) == "k2"


@pytest.mark.parametrize("variant", PERSISTENT)
@pytest.mark.parametrize("embedder, dim", [("another-model", DIM), (EMBEDDER, DIM * 2)])
def test_reopening_with_another_embedder_or_dimension_raises(
    opener: Callable[..., VectorStore], variant: str, embedder: str, dim: int
) -> None:
    opener(variant).close()
    with pytest.raises(EmbedderMismatchError, match=r"another collection|another store path"):
        opener(variant, embedder=embedder, dim=dim)
    opener(variant).close()  # a failed open leaves the store usable


@pytest.mark.parametrize("variant", VARIANTS)
def test_calls_before_setup_raise_store_error(tmp_path, variant: str) -> None:
    store = build(variant, tmp_path)
    calls = [
        lambda: store.retrieve("k1", where()),
        lambda: store.nearest(ALONG, where()),
        lambda: store.upsert([make_entry("k1")]),
        lambda: store.purge_expired(NOW),
        lambda: store.purge(),
        store.count,
        store.recent,
    ]
    for call in calls:
        with pytest.raises(StoreError, match="setup"):
            call()
    store.close()  # closing a store that was never set up is harmless


def _fields(entry: Entry) -> dict[str, object]:
    return {name: getattr(entry, name) for name in Entry.__slots__}


def test_calls_from_several_threads(store: VectorStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def work(worker: int) -> int:
        found = 0
        for i in range(20):
            key = f"w{worker}-{i}"
            store.upsert([make_entry(key, unit(1.0, worker + 1, i), tenant=f"t{worker}")])
            found += store.nearest(ALONG, where(tenant=f"t{worker}")) is not None
            found += store.retrieve(key, where(tenant=f"t{worker}")) is not None
        return found

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(4)))

    assert store.count() == 80
    assert results == [40] * 4  # each saw its own entries through both lookups
    for worker in range(4):
        assert len(store.recent(tenant=f"t{worker}", limit=100)) == 20
