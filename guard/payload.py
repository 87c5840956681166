"""``PayloadGuard``: when two questions share most of their words, judge what differs.

A long shared template or context with a short differing payload ("You are a support agent
for ... Customer message: my internet is down" / "... really slow") embeds close together
however different the payloads are: mean pooling weighs each payload token against a hundred
shared ones, so the pair passes any threshold (0.97-0.999 on such pairs). Here the shared
beginning and end are set aside (:func:`semcache.guard.opposites.differing`) and, when they
are most of the text, the two differing parts are embedded on their own, with the cache's
embedder, and must be at least ``min_similarity`` alike.

Applies only when the shared part holds at least ``min_shared`` tokens and at least
``shared_ratio`` times the longer differing part; short questions, whose cosine already
reflects their difference, are never re-embedded. A differing part that is empty on one side
(context added to one question only) is not judged, as in ``DetailGuard``. The default 0.7:
on the team's collision corpus (MiniLM), template pairs with different requests score their
payloads mostly under 0.65, paraphrased payloads mostly over 0.7.

Embedding two short texts costs a few milliseconds of CPU, on the lookup path but only for
the rare candidate that is over the threshold, passes the inner guard and shares a template.
An embedder that is not loaded, or cannot embed, vetoes (an unjudged pair is not served).
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
