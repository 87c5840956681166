"""The tuning loop's records: one served semantic hit, one labeled pair, one near miss."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from semcache.stores.base import Entry


class Source(enum.StrEnum):
    """Where a label came from. Only ``shadow`` labels are a probability sample of hits (the
    live estimate uses them); feedback is whatever users chose to report."""

    FEEDBACK = "feedback"
    SHADOW = "shadow"
    REVIEW = "review"
    """An operator's verdict on a near miss (the dashboard): read like a labeled exported
    near miss, recorded whatever its similarity."""


@dataclass(frozen=True, slots=True)
class Served:
    """One answer served from storage: who asked what, and which entry answered (``scope`` and
    ``model`` find it again). ``routed_to``: the fallback embedder whose lane served it (None:
    the primary's); its similarities calibrate ``semantic.fallback_threshold`` only.
    """

    serve_id: str
    tenant: str
    namespace: str
    scope: str
    key: str
    query: str | None
    question: str | None
    similarity: float | None
    score: float | None
    at: float
    model: str = ""  # the entry's model: names its copy in a shared (Redis) tier
    routed_to: str | None = None

    @classmethod
    def of_entry(cls, entry: Entry, *, at: float) -> Served:
        """``entry`` as served by its exact key, with no serve record: the stored question is
        the query (an exact hit asked it word for word), no similarity or score."""
        return cls(
            serve_id="",
            tenant=entry.tenant,
            namespace=entry.namespace,
            scope=entry.scope,
            key=entry.key,
            query=entry.question,
            question=entry.question,
            similarity=None,
            score=None,
            at=at,
            model=entry.model,
        )


@dataclass(frozen=True, slots=True)
class LabeledPair:
    """A query and the stored question whose answer served it, with a verdict (``label`` 1 right,
    0 wrong, as ``semcache calibrate`` reads it). ``sample_probability``: a shadow label's chance
    of being verified (None for feedback). Rows with ``routed_to`` set are left out of calibration.
    """

    text_a: str
    text_b: str
    label: int
    source: Source
    tenant: str
    namespace: str
    similarity: float | None
    score: float | None
    sample_probability: float | None
    at: float
    routed_to: str | None = None

    def row(self) -> dict[str, Any]:
        """One JSONL row (``text_a``/``text_b``/``label`` plus provenance)."""
        data = asdict(self)
        data["source"] = str(self.source)
        return data


@dataclass(frozen=True, slots=True)
class NearMiss:
    """A miss whose nearest stored question came within the margin under the threshold."""

    tenant: str
    namespace: str
    query: str
    key: str
    question: str
    similarity: float
    threshold: float
    at: float
    routed_to: str | None = None  # the fallback lane's miss (its similarity, its threshold)
