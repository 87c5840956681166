"""The one registry of answer guards: a name (as settings, the CLI and eval spell it) to a guard.

Built in: ``"none"``, ``"details"`` and ``"auto"`` (``DEFAULT_VERIFIER``); users add their
own with ``register``. Factories run only when asked for, so a lookup is cheap.
"""

from __future__ import annotations

from collections.abc import Callable

from semcache.errors import ConfigError
from semcache.guard.base import HitVerifier, NoGuard
from semcache.guard.details import DetailGuard

AUTO = "auto"
DEFAULT_VERIFIER = "details"
"""What ``verifier='auto'`` resolves to. On, because ``benchmarks/guard_effect.py`` (MiniLM,
thresholds 0.85/0.90/0.95) found it lowers the false-hit rate at equal recall where the
difference is measurable (percentage points: QQP -4.3/-5.8/-3.3, Redis LangCache
-8.1/-7.0/-5.5, STS-B -2.5/-5.2/-2.1, LCQMC -0.6/-0.6/-0.1, our set about -30) and never
raised it beyond noise (MRPC +0.5/+0.7/+2.6, PAWS-X zh +0.5 at 0.95: 95% bootstrap intervals
include 0), at a cost of about 10-20 us per lookup."""

_FACTORIES: dict[str, Callable[[], HitVerifier]] = {
    "none": NoGuard,
    "details": DetailGuard,
}


def registered_names() -> tuple[str, ...]:
    """Every name ``get_verifier`` accepts, ``"auto"`` first."""
    return (AUTO, *_FACTORIES)


def register(name: str, factory: Callable[[], HitVerifier]) -> None:
    """Make ``get_verifier(name)`` return ``factory()``. ``name`` must be new (registering over a
    guard would silently change what settings mean), not ``"auto"`` and not empty: ``ConfigError``.
    """
    if not name or name == AUTO or name in _FACTORIES:
        taken = ", ".join(repr(n) for n in registered_names())
        raise ConfigError(
            f"cannot register guard {name!r}: names must be new and not empty; taken: {taken}"
        )
    _FACTORIES[name] = factory


def get_verifier(name: str) -> HitVerifier:
    """A fresh guard for a ``SemanticSettings.verifier`` value (never None); ``ConfigError`` naming
    the valid names for anything unknown.
    """
    factory = _FACTORIES.get(DEFAULT_VERIFIER if name == AUTO else name)
    if factory is None:
        valid = ", ".join(repr(n) for n in registered_names())
        raise ConfigError(f"unknown verifier {name!r}; expected one of {valid}")
    return factory()
