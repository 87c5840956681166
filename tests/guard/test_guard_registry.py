"""The one registry of guards, and NoGuard: "no guard" is a guard that accepts, never None."""

from __future__ import annotations

import pytest

import semcache
from semcache.errors import ConfigError
from semcache.guard import (
    DEFAULT_VERIFIER,
    DetailGuard,
    HitVerifier,
    NoGuard,
    get_verifier,
    register,
    registered_names,
)
from semcache.guard import registry as registry_module


class Shouty:
    """A user's guard: refuses candidates written in capitals."""

    name = "shouty"

    def verify(self, query: str, candidate: str) -> bool:
        return not candidate.isupper()


@pytest.fixture
def registry(monkeypatch):
    """The registry, restored after the test (``register`` has no undo, by design)."""
    monkeypatch.setattr(registry_module, "_FACTORIES", dict(registry_module._FACTORIES))
    return registry_module


def test_no_guard_is_a_verifier_that_accepts_everything() -> None:
    guard = get_verifier("none")
    assert isinstance(guard, NoGuard) and isinstance(guard, HitVerifier)
    assert guard.name == "none"
    assert guard.verify("2 steps", "3 steps")
    assert guard.verify("Can I cancel?", "Can't I cancel?")


def test_built_in_names() -> None:
    assert registered_names() == ("auto", "none", "details")
    details = get_verifier("details")
    assert isinstance(details, DetailGuard) and details.rules == DetailGuard().rules
    auto = get_verifier("auto")
    assert type(auto) is type(get_verifier(DEFAULT_VERIFIER))
    assert auto.name == DEFAULT_VERIFIER == "details"
    assert get_verifier("details") is not details  # a fresh guard per call


def test_every_settings_name_resolves_to_a_verifier() -> None:
    from typing import get_args

    from semcache.config.settings import SemanticSettings

    names = get_args(SemanticSettings.model_fields["verifier"].annotation)
    assert set(names) <= set(registered_names())
    for name in names:
        assert isinstance(get_verifier(name), HitVerifier)


def test_unknown_name_is_a_config_error_naming_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown verifier 'strict'.*'auto', 'none', 'details'"):
        get_verifier("strict")
    with pytest.raises(ConfigError):
        get_verifier("")


def test_register_adds_a_guard(registry) -> None:
    register("shouty", Shouty)
    assert registered_names() == ("auto", "none", "details", "shouty")
    guard = get_verifier("shouty")
    assert isinstance(guard, Shouty) and isinstance(guard, HitVerifier)
    assert guard.verify("hi", "hello") and not guard.verify("hi", "HELLO")


@pytest.mark.parametrize("name", ["none", "details", "auto", ""])
def test_register_refuses_taken_and_empty_names(registry, name) -> None:
    with pytest.raises(ConfigError, match="cannot register guard"):
        register(name, Shouty)
    assert registered_names() == ("auto", "none", "details")
    assert get_verifier("none").name == "none"


def test_the_facade_exports_the_same_objects() -> None:
    assert semcache.get_verifier is get_verifier
    assert semcache.NoGuard is NoGuard
    assert semcache.DetailGuard is DetailGuard
    assert semcache.HitVerifier is HitVerifier
