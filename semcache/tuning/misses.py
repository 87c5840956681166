"""Miss analysis: record misses that came close, group them, export them for labeling.

A miss whose nearest stored question was within ``margin`` under the threshold (or over
it but vetoed by the answer guard) is the kind of miss a recalibration could turn into a
hit. :class:`MissStage` records them; :func:`cluster_misses` groups them by the stored
question they came close to (a group that keeps growing is a frequent near miss), and
:func:`export_rows` writes pairs in the format ``semcache calibrate`` reads, with ``label``
left null for a person (or an oracle) to fill in with 0 or 1.

The nearest stored question is found by a second, background nearest-neighbour query (the
lookup on the request path returns only the similarity): it never delays the caller, is
bounded (``max_pending``; beyond it the record is skipped and counted as shed
``miss_lookup``), and a result that is the query's own entry (written behind meanwhile)
is dropped.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from semcache._failopen import FailOpen
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Next, Request
from semcache.stores.where import Where
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
    """Records near misses; sits right after the semantic stage (which sets ``nearest``)."""

    def __init__(
        self,
        backend: SemanticBackend,
        log: MissLog,
        failopen: FailOpen,
        clock: Callable[[], float],
        *,
        margin: float,
        max_pending: int = 16,
    ) -> None:
        self._backend = backend
        self._log = log
        self._failopen = failopen
        self._clock = clock
        self._margin = margin
        self._max_pending = max_pending
        self._tasks: set[asyncio.Task[None]] = set()

    async def __call__(self, request: Request, call_next: Next) -> Found:
        tier = self._backend.started
        nearest, vector, prompt = request.nearest, request.vector, request.keys.prompt
        scope = request.keys.scope
        if (
            tier is not None
            and self._margin > 0
            and nearest is not None
            and vector is not None
            and prompt is not None
            and scope is not None
        ):
            threshold = tier.threshold_for(request.control.namespace)
            if nearest >= threshold - self._margin:
                self._start(request, prompt, scope, threshold)
        return await call_next(request)

    def _start(self, request: Request, prompt: str, scope: str, threshold: float) -> None:
        if len(self._tasks) >= self._max_pending:
            self._failopen.shed("miss_lookup")
            return
        task = asyncio.get_running_loop().create_task(
            self._failopen.call(
                "miss_lookup", lambda: self._record(request, prompt, scope, threshold), None
            )
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _record(self, request: Request, prompt: str, scope: str, threshold: float) -> None:
        tier = self._backend.started
        store = None if tier is None else tier.store
        if tier is None or store is None or tier.embedder is None or request.vector is None:
            return
        now = self._clock()
        where = Where(request.tenant, request.control.namespace, scope, tier.embedder.name, now)
        match = await asyncio.to_thread(store.nearest, request.vector, where)
        if match is None or match.entry.question is None or match.entry.key == request.keys.exact:
            return
        self._log.add(
            NearMiss(
                tenant=request.tenant,
                namespace=request.control.namespace,
                query=prompt,
                key=match.entry.key,
                question=match.entry.question,
                similarity=match.similarity,
                threshold=threshold,
                at=now,
            )
        )

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)


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
    to fill with 0/1), and ``similarity``, ``count``, ``tenant``, ``namespace``, ``cluster``."""
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
            }
        else:
            row["count"] += 1
    return sorted(rows.values(), key=lambda r: (-r["count"], -r["similarity"]))
