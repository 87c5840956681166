"""Embedder and verifier names, as the eval and calibrate commands spell them: whatever
:func:`semcache.embedders.load_embedder` and :func:`semcache.guard.get_verifier` accept.
"""

from __future__ import annotations

from semcache.embedders.base import Embedder
from semcache.guard import HitVerifier, get_verifier, registered_names


def verifier_names() -> tuple[str, ...]:
    """Every name :func:`resolve_verifier` accepts."""
    return registered_names()


def resolve_verifier(name: str) -> HitVerifier:
    """The verifier called ``name`` (``NoGuard`` for the ``none`` baseline); unknown names
    raise :class:`~semcache.errors.ConfigError`."""
    return get_verifier(name)


def resolve_embedder(
    name: str,
    batch_size: int,
    runtime: str = "auto",
    *,
    threads: int | None = None,
    precision: str = "auto",
) -> Embedder:
    """The embedder called ``name``, at most ``batch_size`` texts per model call, run by
    ``runtime`` in ``precision`` when it is a sentence-transformers model, on at most
    ``threads`` CPU threads (every local runtime honours it; None: the runtime's default)."""
    from semcache.embedders import load_embedder

    return load_embedder(
        name, batch_size=batch_size, runtime=runtime, threads=threads, precision=precision
    )
