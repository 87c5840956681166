"""Answer guard interface: a last check on a semantic candidate before it is served."""

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
