"""Sharing policy and per-request controls (pure logic)."""

from __future__ import annotations

import pytest

from semcache.core.policy import CacheControl, decide, validate_sampling, validate_tenant
from semcache.errors import InvalidRequest, InvalidRequestType


@pytest.mark.parametrize(
    ("params", "shared"),
    [
        ({}, True),
        ({"temperature": 0.8}, True),
        ({"temperature": 0.81}, False),
        ({"temperature": 0}, True),
        ({"n": 1}, True),
        ({"n": 2}, False),
        ({"temperature": None}, True),
    ],
)
def test_sampling_requests_bypass(params, shared):
    decision = decide(params, CacheControl(), 0.8)
    assert decision.bypass is (not shared)
    if not shared:
        assert decision.reason


def test_opting_in_shares_sampling_requests():
    decision = decide({"temperature": 1.5}, CacheControl.parse({"share-sampled": True}), 0.8)
    assert decision.lookup and decision.store and decision.coalesce


def test_no_cache_skips_lookup_and_coalescing_but_stores():
    decision = decide({}, CacheControl.parse({"no-cache": True}), 0.8)
    assert not decision.lookup and not decision.coalesce and decision.store


def test_no_store_and_zero_ttl_do_not_store():
    assert not decide({}, CacheControl.parse({"no-store": True}), 0.8).store
    assert not decide({}, CacheControl.parse({"ttl": 0}), 0.8).store
    assert decide({}, CacheControl.parse({"ttl": 1}), 0.8).store


def test_control_parsing_accepts_litellm_names_and_the_typed_form():
    control = CacheControl.parse({"no-cache": True, "no-store": True, "ttl": 5, "namespace": "x"})
    assert (control.no_cache, control.no_store, control.ttl, control.namespace) == (
        True,
        True,
        5,
        "x",
    )
    typed = CacheControl(ttl=3)
    assert CacheControl.parse(typed) is typed
    assert CacheControl.parse(None) == CacheControl()


@pytest.mark.parametrize(
    ("value", "field", "error"),
    [
        ({"ttl": -1}, "cache.ttl", InvalidRequest),
        ({"unknown": 1}, "cache.unknown", InvalidRequest),
        ({"namespace": ""}, "cache.namespace", InvalidRequest),
        ({"ttl": False}, "cache.ttl", InvalidRequest),  # not 0 seconds
        ({"ttl": "5"}, "cache.ttl", InvalidRequest),
        ({"s-maxage": True}, "cache.s-maxage", InvalidRequest),
        ({"no-cache": "no"}, "cache.no-cache", InvalidRequest),  # not false
        ({"no-store": 1}, "cache.no-store", InvalidRequest),
        ("x", "cache", InvalidRequestType),
    ],
)
def test_bad_controls_name_the_field(value, field, error):
    with pytest.raises(error) as info:
        CacheControl.parse(value)
    assert info.value.field == field


def test_tenant_and_sampling_validation():
    assert validate_tenant(None) == "default"
    with pytest.raises(InvalidRequestType):
        validate_tenant("")
    with pytest.raises(InvalidRequestType):
        validate_sampling({"temperature": "0.5"})
    with pytest.raises(InvalidRequest):
        validate_sampling({"n": 0})
    with pytest.raises(InvalidRequestType):
        validate_sampling({"temperature": True})
