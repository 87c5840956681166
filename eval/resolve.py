"""Embedder and verifier names, as the eval and calibrate commands spell them.

Embedder names are whatever :func:`semcache.embedders.load_embedder` accepts. Verifier names
come from the small table below: ``none`` (the no-verifier baseline), ``details`` (the answer
guard, :class:`semcache.guard_details.DetailGuard`, that rejects candidates differing in
numbers, dates, negation, entities or comparisons) and ``auto`` (what the cache uses by
default). Implementations are imported only when asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from semcache.embedders.base import Embedder
from semcache.errors import ConfigError
from semcache.guard import HitVerifier

from .sweep import NO_VERIFIER


def _from_guard(name: str) -> Callable[[], HitVerifier | None]:
    def build() -> HitVerifier | None:
        return importlib.import_module("semcache.guard_details").get_verifier(name)

    return build


_VERIFIERS: dict[str, Callable[[], HitVerifier | None]] = {
    "details": _from_guard("details"),
    "auto": _from_guard("auto"),
}


def verifier_names() -> tuple[str, ...]:
    """Every name :func:`resolve_verifier` accepts."""
    return (NO_VERIFIER, *_VERIFIERS)


def resolve_verifier(name: str) -> HitVerifier | None:
    """The verifier called ``name``, or None for the ``none`` baseline."""
    if name == NO_VERIFIER:
        return None
    factory = _VERIFIERS.get(name)
    if factory is None:
        raise ConfigError(f"unknown verifier {name!r}; choices: {', '.join(verifier_names())}")
    return factory()


def resolve_embedder(name: str, batch_size: int, runtime: str = "torch") -> Embedder:
    """The embedder called ``name``, at most ``batch_size`` texts per model call, run by
    ``runtime`` when it is a sentence-transformers model."""
    from semcache.embedders import load_embedder

    return load_embedder(name, batch_size=batch_size, runtime=runtime)
