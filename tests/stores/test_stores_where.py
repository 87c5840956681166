"""The pure partition and expiry rules (``Where``, ``Selection``, ``is_live``)."""

from __future__ import annotations

import dataclasses
import math

import pytest
from store_helpers import EMBEDDER, NOW, make_entry, where

from semcache.errors import ConfigError
from semcache.stores import NEVER_EXPIRES, Selection, Where, is_live
from semcache.stores.where import KEYWORD_FIELDS, PARTITION_FIELDS


def test_the_partition_is_tenant_namespace_scope_and_embedder() -> None:
    assert PARTITION_FIELDS == ("tenant", "namespace", "scope", "embedder")
    assert where().equalities() == (
        ("tenant", "t1"),
        ("namespace", "ns"),
        ("scope", "s1"),
        ("embedder", EMBEDDER),
    )
    assert set(KEYWORD_FIELDS) == {*PARTITION_FIELDS, "model"}  # every field gets an index


def test_admits_an_entry_of_its_partition_live_at_now() -> None:
    assert where().admits(make_entry("k1"))


@pytest.mark.parametrize("field", PARTITION_FIELDS)
def test_any_other_partition_value_is_refused(field: str) -> None:
    entry = make_entry("k1", **{field: "something-else"})
    assert not where().admits(entry)
    assert where(**{field: "something-else"}).admits(entry)


def test_an_entry_expires_at_its_expiry_time() -> None:
    assert is_live(NOW + 0.001, NOW)
    assert not is_live(NOW, NOW)
    assert not is_live(NOW - 1, NOW)
    assert where().admits(make_entry("k1", expires_at=NOW + 0.001))
    assert not where().admits(make_entry("k1", expires_at=NOW))


def test_retrieved_checks_the_key_and_the_partition() -> None:
    entry = make_entry("k1")
    assert where().retrieved("k1", entry) is entry
    assert where().retrieved("k2", entry) is None  # another key behind the same id
    assert where().retrieved("k1", None) is None
    assert where(tenant="t2").retrieved("k1", entry) is None
    assert where(now=NEVER_EXPIRES - 1).retrieved("k1", entry) is entry
    assert where(now=NEVER_EXPIRES).retrieved("k1", entry) is None


@pytest.mark.parametrize("field", PARTITION_FIELDS)
def test_a_partition_field_must_be_a_string(field: str) -> None:
    with pytest.raises(ConfigError, match=rf"Where\.{field}"):
        where(**{field: None})


@pytest.mark.parametrize("now", [math.nan, math.inf, "1", None, True])
def test_now_must_be_finite_seconds(now: object) -> None:
    with pytest.raises(ConfigError, match=r"Where\.now"):
        where(now=now)


def test_where_is_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        where().tenant = "t2"  # type: ignore[misc]
    assert where() == Where("t1", "ns", "s1", EMBEDDER, NOW)


def test_selection_matches_every_given_field() -> None:
    entry = make_entry("k1", tenant="t1", namespace="ns", model="m")
    assert Selection().equalities() == ()
    assert Selection().selects(entry)
    assert Selection(tenant="t1", model="m").equalities() == (("tenant", "t1"), ("model", "m"))
    assert Selection(tenant="t1", namespace="ns", model="m").selects(entry)
    for field in ("tenant", "namespace", "model"):
        assert not Selection(**{field: "other"}).selects(entry)
    with pytest.raises(ConfigError, match="model"):
        Selection(model=3)  # type: ignore[arg-type]


def test_verified_passes_an_admitted_match_and_raises_on_a_filter_bug() -> None:
    from semcache.errors import StoreError
    from semcache.stores import Match

    match = Match(make_entry("k1"), similarity=0.9)
    assert where().verified(match) is match
    assert where().verified(None) is None
    with pytest.raises(StoreError, match="outside the lookup's partition"):
        where(scope="s2").verified(match)
    with pytest.raises(StoreError, match="expired"):
        where(now=NEVER_EXPIRES).verified(match)
