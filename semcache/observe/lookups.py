"""The lookups a cache answered, kept as bounded aggregates (never a list of requests), and
the :class:`Observer` the facade reports each public operation to.

:class:`LookupLog` counts every answered request by time bucket, tier and tenant, adds up
the cost saved, and keeps two histograms of the nearest similarity a semantic lookup saw:
one for hits, one for misses. Its size depends on the settings (buckets kept, tenants
counted one by one, histogram bins), not on traffic, so ``stats()`` and the dashboard cost
the same after a hundred lookups or a hundred million. Recording is O(1) under one lock.

Without OpenTelemetry an operation costs the :class:`Observer` one such count; its span
context manager is then a shared no-op, so the hot path runs no tracing code.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from semcache.stats import CacheInfo, LookupBucket, LookupStats, Tier, cache_info

if TYPE_CHECKING:
    from semcache.observe.otel import Telemetry

#: Histogram bins of the nearest similarity over [0, 1] (a cosine below 0 counts in the first).
SIMILARITY_BINS = 40

#: Time buckets a snapshot carries by default (the most recent): an hour of 60 s buckets.
RECENT_BUCKETS = 60

#: The name tenants past ``max_tenants`` are counted under.
OTHER_TENANTS = "(other)"


@dataclass(slots=True)
class _Bucket:
    start: float
    tiers: dict[str, int] = field(default_factory=dict)
    tenants: dict[str, dict[str, int]] = field(default_factory=dict)  # tier -> count
    saved: float = 0.0


_HIT_TIERS = frozenset(str(t) for t in Tier if t.is_hit)


def _hits_and_lookups(tiers: dict[str, int]) -> tuple[int, int]:
    return sum(n for t, n in tiers.items() if t in _HIT_TIERS), sum(tiers.values())


def similarity_bin(similarity: float) -> int:
    """The histogram bin of a cosine (clamped to [0, 1])."""
    return min(SIMILARITY_BINS - 1, max(0, int(similarity * SIMILARITY_BINS)))


class LookupLog:
    """Counts by time, tier and tenant (each bucket: by tenant and tier), and
    nearest-similarity histograms (thread-safe)."""

    def __init__(
        self,
        *,
        bucket_s: int = 60,
        buckets: int = 1440,
        max_tenants: int = 100,
        clock: Callable[[], float],
    ) -> None:
        self._bucket_s = bucket_s
        self._max_buckets = buckets
        self._max_tenants = max_tenants
        self._clock = clock
        self._lock = threading.Lock()
        self._history: OrderedDict[float, _Bucket] = OrderedDict()
        self._tiers: dict[str, int] = {}
        self._tenants: dict[str, dict[str, int]] = {}
        self._saved = 0.0
        self._hits = [0] * SIMILARITY_BINS
        self._misses = [0] * SIMILARITY_BINS
        self._dropped_tenants = 0

    def record(self, tenant: str, info: CacheInfo) -> None:
        """Count one answered request of ``tenant``."""
        tier = str(info.tier)
        hit = info.tier.is_hit
        nearest = info.nearest_similarity
        if nearest is None and info.tier is Tier.SEMANTIC:
            nearest = info.similarity
        start = self._clock() // self._bucket_s * self._bucket_s
        with self._lock:
            if tenant not in self._tenants and len(self._tenants) >= self._max_tenants:
                self._dropped_tenants += tenant != OTHER_TENANTS
                tenant = OTHER_TENANTS
            bucket = self._history.get(start)
            if bucket is None:
                bucket = self._history[start] = _Bucket(start)
                while len(self._history) > self._max_buckets:
                    self._history.popitem(last=False)
            bucket.tiers[tier] = bucket.tiers.get(tier, 0) + 1
            counts = bucket.tenants.setdefault(tenant, {})
            counts[tier] = counts.get(tier, 0) + 1
            totals = self._tenants.setdefault(tenant, {})
            totals[tier] = totals.get(tier, 0) + 1
            self._tiers[tier] = self._tiers.get(tier, 0) + 1
            if hit:
                bucket.saved += info.saved_cost_usd
                self._saved += info.saved_cost_usd
            if nearest is not None:
                (self._hits if hit else self._misses)[similarity_bin(nearest)] += 1

    def snapshot(self, buckets: int | None = RECENT_BUCKETS) -> LookupStats:
        """The aggregates now, with the last ``buckets`` time buckets (None: every one kept)."""
        with self._lock:
            kept = list(self._history.values())
            recent = kept if buckets is None else kept[-buckets:] if buckets > 0 else []
            history = tuple(
                LookupBucket(
                    b.start,
                    dict(b.tiers),
                    {t: _hits_and_lookups(c) for t, c in b.tenants.items()},
                    b.saved,
                    {t: dict(c) for t, c in b.tenants.items()},
                )
                for b in recent
            )
            tiers = dict(self._tiers)
            return LookupStats(
                bucket_s=self._bucket_s,
                lookups=sum(tiers.values()),
                hits=sum(n for t, n in tiers.items() if Tier(t).is_hit),
                saved_cost_usd=self._saved,
                tiers=tiers,
                tenants={t: dict(c) for t, c in self._tenants.items()},
                history=history,
                similarity_edges=tuple(i / SIMILARITY_BINS for i in range(SIMILARITY_BINS + 1)),
                hit_similarity=tuple(self._hits),
                miss_similarity=tuple(self._misses),
                dropped_tenants=self._dropped_tenants,
            )


_NO_SPAN: AbstractContextManager[object] = contextlib.nullcontext()


class Observer:
    """The recorded lookups of one cache, and its telemetry (None: OpenTelemetry off)."""

    def __init__(self, lookups: LookupLog, telemetry: Telemetry | None = None) -> None:
        self.lookups = lookups
        self.telemetry = telemetry

    def operation(self, name: str, started_ns: int | None = None) -> AbstractContextManager[object]:
        """The span of one public operation (``semcache.<name>``), current while it runs,
        from ``started_ns`` (``time.time_ns()``; default: now)."""
        if self.telemetry is None:
            return _NO_SPAN
        return self.telemetry.operation(name, started_ns)

    def answered(
        self, name: str, tenant: str, response: Any, started_ns: int, *, stream: bool = False
    ) -> Any:
        """An operation answered at once (a memory-tier hit: no phase ran; ``stream``: to be
        replayed as a stream): ``response`` is recorded, and with OpenTelemetry gets a
        ``semcache.<name>`` span from ``started_ns`` to now that is never made current.
        Returns ``response``."""
        info = _info(response)
        if info is not None:
            self.lookups.record(tenant, info)
        if self.telemetry is not None:
            self.telemetry.answered(name, tenant, info, started_ns, stream)
        return response

    def served(self, tenant: str, response: Any) -> Any:
        """Record the answer ``response`` (tagged with its ``CacheInfo``) for ``tenant``;
        returns ``response``."""
        info = _info(response)
        if info is not None:
            self.info(tenant, info)
        return response

    def info(self, tenant: str, info: CacheInfo) -> None:
        self.lookups.record(tenant, info)
        if self.telemetry is not None:
            self.telemetry.served(tenant, info)

    async def stream(
        self, tenant: str, items: AsyncGenerator[Any, None], name: str = "completion"
    ) -> AsyncGenerator[Any, None]:
        """A streamed answer's items, passed on (closing this closes ``items``); its
        ``CacheInfo`` is recorded. With OpenTelemetry the pipeline starts (on the first
        item) under a ``semcache.<name>`` span that ends with the stream."""
        telemetry = self.telemetry
        span: Any = None
        try:
            if telemetry is None:
                async for item in items:
                    if isinstance(item, CacheInfo):
                        self.lookups.record(tenant, item)
                    yield item
                return
            from opentelemetry import context, trace

            span, started = telemetry.start(name)
            span.set_attribute("semcache.stream", True)
            token = context.attach(trace.set_span_in_context(span))
            try:  # the pipeline's task starts here and keeps this context
                first = await anext(items, _END)
            finally:
                context.detach(token)
            if first is _END:
                return
            self._note(tenant, first, telemetry, span)
            yield first
            async for item in items:
                self._note(tenant, item, telemetry, span)
                yield item
        finally:
            await items.aclose()
            if telemetry is not None and span is not None:
                telemetry.end(name, span, started)

    def _note(self, tenant: str, item: Any, telemetry: Telemetry, span: Any) -> None:
        if isinstance(item, CacheInfo):
            self.lookups.record(tenant, item)
            telemetry.served(tenant, item, span)


def _info(response: Any) -> CacheInfo | None:
    hidden = getattr(response, "_hidden_params", None)  # where Delivery tags it
    info = hidden.get("semcache") if isinstance(hidden, dict) else cache_info(response)
    return info if isinstance(info, CacheInfo) else None


_END = object()
