"""Near misses an operator labels one by one (the dashboard's yes / no).

Each near miss to label is a row of :func:`semcache.tuning.misses.export_rows` with an
``id`` (a digest of tenant, namespace, query and stored question, stable while the miss is
remembered); a verdict becomes a :class:`LabeledPair` of source ``review`` in the cache's
label log, so it lands in ``tuning.labels_path``, the file ``semcache calibrate --labels``
reads, and leaves the list of misses to label.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from semcache.tuning.misses import export_rows
from semcache.tuning.records import LabeledPair, NearMiss, Source


def miss_id(tenant: str, namespace: str, query: str, question: str) -> str:
    """The id of one (query, stored question) near miss."""
    digest = hashlib.sha256("\0".join((tenant, namespace, query, question)).encode("utf-8"))
    return digest.hexdigest()[:20]


def to_label(
    misses: Iterable[NearMiss],
    labeled: Sequence[LabeledPair],
    *,
    tenant: str | None = None,
    limit: int = 50,
) -> list[dict[str, Any]]:
    """Near misses nobody labeled yet, most frequent first (then closest), with an ``id``."""
    done = {
        miss_id(p.tenant, p.namespace, p.text_a, p.text_b)
        for p in labeled
        if p.source is Source.REVIEW
    }
    rows = []
    for row in export_rows(misses, tenant=tenant):
        ident = miss_id(row["tenant"], row["namespace"], row["text_a"], row["text_b"])
        if ident not in done:
            rows.append({"id": ident, **row})
            if len(rows) >= limit:
                break
    return rows


def review_pair(miss: NearMiss, correct: bool, at: float) -> LabeledPair:
    """The labeled pair an operator's verdict on ``miss`` records."""
    return LabeledPair(
        text_a=miss.query,
        text_b=miss.question,
        label=1 if correct else 0,
        source=Source.REVIEW,
        tenant=miss.tenant,
        namespace=miss.namespace,
        similarity=miss.similarity,
        score=None,
        sample_probability=None,
        at=at,
        routed_to=miss.routed_to,
    )


def find_miss(misses: Iterable[NearMiss], ident: str) -> NearMiss | None:
    """The most recent near miss with id ``ident`` (None: not remembered)."""
    found = None
    for miss in misses:
        if miss_id(miss.tenant, miss.namespace, miss.query, miss.question) == ident:
            found = miss
    return found
