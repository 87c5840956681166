"""What a cache would serve, per kind of pair, at one threshold: wrong answers and paraphrases.

A pair is served when its effective score is ``>= threshold``; a served label-0 pair is a
wrong answer. Per kind shows which shapes of input confuse the embedder and guard, which one
rate over a whole set hides.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

TOTAL = "total"


@dataclass(frozen=True)
class KindCounts:
    """One kind's pairs at one threshold (``kind`` is :data:`TOTAL` for all of them)."""

    kind: str
    negatives: int
    wrong_served: int
    positives: int
    paraphrases_served: int

    def __post_init__(self) -> None:
        wrong_ok = 0 <= self.wrong_served <= self.negatives
        if not (wrong_ok and 0 <= self.paraphrases_served <= self.positives):
            raise ValueError(f"served counts exceed the pairs of kind {self.kind!r}: {self}")

    @property
    def paraphrase_share(self) -> float:
        """Share of label-1 pairs served; NaN without any."""
        return self.paraphrases_served / self.positives if self.positives else float("nan")


def served_by_kind(
    scores: np.ndarray, labels: np.ndarray, kinds: list[str], threshold: float
) -> list[KindCounts]:
    """Counts per kind, in order of first appearance, then the :data:`TOTAL` row."""
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels)
    if not len(scores) == len(labels) == len(kinds):
        raise ValueError(f"lengths differ: {len(scores)}, {len(labels)}, {len(kinds)}")
    served = scores >= threshold
    kind_array = np.asarray(kinds, dtype=object)
    rows = []
    for kind in [*dict.fromkeys(kinds), TOTAL]:
        mask = np.ones(len(kinds), dtype=bool) if kind == TOTAL else kind_array == kind
        negative, positive = mask & (labels == 0), mask & (labels == 1)
        rows.append(
            KindCounts(
                kind=kind,
                negatives=int(negative.sum()),
                wrong_served=int((negative & served).sum()),
                positives=int(positive.sum()),
                paraphrases_served=int((positive & served).sum()),
            )
        )
    return rows


def kinds_json(threshold: float, rows: list[KindCounts]) -> dict[str, Any]:
    """``{"threshold": t, "kinds": [{kind, negatives, wrong_served, positives,
    paraphrases_served}, ...]}`` for ``summary.json``."""
    return {"threshold": float(threshold), "kinds": [asdict(row) for row in rows]}
