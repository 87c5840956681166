"""The answer guard's plug point: the ``HitVerifier`` protocol and ``NoGuard``, its null object.

A guard is the last check on a semantic candidate before it is served. The cache always holds
one: "no guard" is ``NoGuard``, which accepts every candidate, never ``None``, so the lookup
path has one shape and no branch to forget.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class HitVerifier(Protocol):
    """Decides whether the answer stored for ``candidate`` may be served for ``query``.

    Called only for semantic candidates already above the similarity threshold; returning
    False turns the hit into a miss. Must be pure and cheap (it runs on the lookup path).
    """

    @property
    def name(self) -> str: ...

    def verify(self, query: str, candidate: str) -> bool: ...


@runtime_checkable
class EmbeddingVerifier(Protocol):
    """A ``HitVerifier`` whose ``verify`` may run an embedder for some pairs: blocking work,
    so callers on an event loop call it in a worker thread when ``embeds`` says so (a text
    check, cheap) and inline otherwise."""

    def embeds(self, query: str, candidate: str) -> bool: ...


class NoGuard:
    """The null guard, named ``"none"``: every candidate above the threshold is served.

    Also the public test double for code that needs a ``HitVerifier`` but not its judgement.
    """

    @property
    def name(self) -> str:
        return "none"

    def verify(self, query: str, candidate: str) -> bool:
        return True
