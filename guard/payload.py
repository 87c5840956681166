"""``PayloadGuard``: when two questions share most of their words, judge what differs.

A long shared template with a short differing payload embeds close together however
different the payloads are (mean pooling weighs a few payload tokens against many shared
ones). When the shared beginning and end (:func:`semcache.guard.opposites.differing`) hold
at least ``min_shared`` tokens and ``shared_ratio`` times the longer differing part, the two
differing parts are embedded on their own and must be at least ``min_similarity`` alike. A
part empty on one side is not judged; an embedder that cannot embed vetoes.
"""

from __future__ import annotations

from collections.abc import Callable

from semcache.embedders.base import Embedder
from semcache.errors import EmbedderError
from semcache.guard.base import HitVerifier
from semcache.guard.features import extract
from semcache.guard.opposites import differing, words

Lane = Callable[[str], "Embedder | None"]
"""The embedder that embeds a given question (the semantic tier's lane for it)."""


class PayloadGuard:
    """A ``HitVerifier``: ``inner`` must accept, and a templated pair's payloads must match."""

    def __init__(
        self,
        inner: HitVerifier,
        embedder: Lane,
        *,
        min_similarity: float = 0.7,
        min_shared: int = 10,
        shared_ratio: float = 2.0,
    ) -> None:
        self._inner = inner
        self._embedder = embedder
        self.min_similarity = min_similarity
        self.min_shared = min_shared
        self.shared_ratio = shared_ratio

    @property
    def name(self) -> str:
        """The inner guard's name: this one adds a check, it is not another guard."""
        return self._inner.name

    @property
    def inner(self) -> HitVerifier:
        return self._inner

    def verify(self, query: str, candidate: str) -> bool:
        if not self._inner.verify(query, candidate):
            return False
        parts = self.payloads(query, candidate)
        if parts is None:
            return True
        embedder = self._embedder(query)
        if embedder is None:
            return False
        try:
            one, other = embedder.embed(list(parts))
        except EmbedderError:
            return False
        return float(one @ other) >= self.min_similarity

    def embeds(self, query: str, candidate: str) -> bool:
        """Whether :meth:`verify` may embed for this pair (it is templated)."""
        return self.payloads(query, candidate) is not None

    def payloads(self, query: str, candidate: str) -> tuple[str, str] | None:
        """The two differing parts when the pair is templated (see the module docstring),
        else None."""
        if query == candidate:
            return None
        a, b = extract(query).sequence, extract(candidate).sequence
        part_a, part_b = differing(a, b)
        if not (part_a and part_b):
            return None
        shared = len(a) - len(part_a)
        if shared < self.min_shared or shared < self.shared_ratio * max(len(part_a), len(part_b)):
            return None
        return words(a[part_a.start : part_a.stop]), words(b[part_b.start : part_b.stop])
