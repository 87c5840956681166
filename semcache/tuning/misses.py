"""Miss analysis: record misses that came close, group them, export them for labeling.

A miss within ``margin`` under the threshold (or over it but vetoed) is one a recalibration
could turn into a hit. :class:`MissStage` records it from the candidate the lookup already
judged (no second search); :func:`cluster_misses` groups by stored question;
:func:`export_rows` writes pairs for ``semcache calibrate`` with ``label`` null.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Next, Request
from semcache.tuning.records import NearMiss


class MissLog:
    """The most recent ``capacity`` near misses (thread-safe)."""

    def __init__(self, capacity: int) -> None:
        self._misses: deque[NearMiss] = deque(maxlen=capacity)
        self._lock = threading.Lock()

    def add(self, miss: NearMiss) -> None:
        with self._lock:
            self._misses.append(miss)

    def recent(self) -> list[NearMiss]:
        with self._lock:
            return list(self._misses)

    def __len__(self) -> int:
        return len(self._misses)


class MissStage:
    """Records near misses; sits right after the semantic stage (which sets ``nearest`` and
    ``candidate``)."""

    def __init__(
        self,
        backend: SemanticBackend,
        log: MissLog,
        clock: Callable[[], float],
        *,
        margin: float,
    ) -> None:
        self._backend = backend
        self._log = log
        self._clock = clock
        self._margin = margin

    async def __call__(self, request: Request, call_next: Next) -> Found:
        tier = self._backend.started
        candidate, prompt = request.candidate, request.keys.prompt
        if tier is not None and self._margin > 0 and candidate is not None and prompt is not None:
            # the lane's own threshold: a routed question's similarity is the fallback's
            threshold = tier.lane(prompt).threshold_for(request.control.namespace)
            question = candidate.entry.question
            if candidate.similarity >= threshold - self._margin and question is not None:
                self._log.add(
                    NearMiss(
                        tenant=request.tenant,
                        namespace=request.control.namespace,
                        query=prompt,
                        key=candidate.entry.key,
                        question=question,
                        similarity=candidate.similarity,
                        threshold=threshold,
                        at=self._clock(),
                        routed_to=request.routed_to,
                    )
                )
        return await call_next(request)


@dataclass(frozen=True, slots=True)
class MissCluster:
    """Near misses around one stored question: how many, how close, which queries."""

    tenant: str
    namespace: str
    key: str
    question: str
    count: int
    mean_similarity: float
    max_similarity: float
    examples: tuple[tuple[str, float], ...]


def cluster_misses(
    misses: Iterable[NearMiss],
    *,
    tenant: str | None = None,
    min_count: int = 1,
    examples: int = 5,
) -> list[MissCluster]:
    """Group by (tenant, namespace, stored question), largest group first (then closest)."""
    groups: dict[tuple[str, str, str], list[NearMiss]] = {}
    for miss in misses:
        if tenant is None or miss.tenant == tenant:
            groups.setdefault((miss.tenant, miss.namespace, miss.key), []).append(miss)
    clusters = []
    for (ten, ns, key), group in groups.items():
        if len(group) < min_count:
            continue
        sims = [m.similarity for m in group]
        distinct: dict[str, float] = {}
        for m in sorted(group, key=lambda m: -m.similarity):
            distinct.setdefault(m.query, m.similarity)
        clusters.append(
            MissCluster(
                tenant=ten,
                namespace=ns,
                key=key,
                question=group[-1].question,
                count=len(group),
                mean_similarity=sum(sims) / len(sims),
                max_similarity=max(sims),
                examples=tuple(list(distinct.items())[:examples]),
            )
        )
    clusters.sort(key=lambda c: (-c.count, -c.max_similarity))
    return clusters


def export_rows(misses: Iterable[NearMiss], *, tenant: str | None = None) -> list[dict[str, Any]]:
    """One row per distinct (query, stored question): ``text_a``, ``text_b``, ``label`` (null,
    to fill with 0/1), and ``similarity``, ``count``, ``tenant``, ``namespace``, ``cluster``,
    ``routed_to`` (the fallback embedder whose lane missed; None: the primary)."""
    rows: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for miss in misses:
        if tenant is not None and miss.tenant != tenant:
            continue
        ident = (miss.tenant, miss.namespace, miss.query, miss.key)
        row = rows.get(ident)
        if row is None:
            rows[ident] = {
                "text_a": miss.query,
                "text_b": miss.question,
                "label": None,
                "similarity": miss.similarity,
                "count": 1,
                "tenant": miss.tenant,
                "namespace": miss.namespace,
                "cluster": miss.key,
                "routed_to": miss.routed_to,
            }
        else:
            row["count"] += 1
    return sorted(rows.values(), key=lambda r: (-r["count"], -r["similarity"]))
