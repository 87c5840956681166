"""The lookups a cache answered, kept as bounded aggregates (never a list of requests).

:class:`LookupLog` counts every answered request by time bucket, tier and tenant, adds up
the cost saved, and keeps two histograms of the nearest similarity a semantic lookup saw:
one for hits, one for misses. Its size depends on the settings (buckets kept, tenants
counted one by one, histogram bins), not on traffic, so ``stats()`` and the dashboard cost
the same after a hundred lookups or a hundred million. Recording is O(1) under one lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from semcache.stats import CacheInfo, Tier

#: Histogram bins of the nearest similarity over [0, 1] (a cosine below 0 counts in the first).
SIMILARITY_BINS = 40

#: Time buckets a snapshot carries by default (the most recent): an hour of 60 s buckets.
RECENT_BUCKETS = 60

#: The name tenants past ``max_tenants`` are counted under.
OTHER_TENANTS = "(other)"


@dataclass(frozen=True, slots=True)
class LookupBucket:
    """One time bucket: ``start`` (epoch seconds), answers by tier, (hits, lookups) by
    tenant, and the upstream cost hits saved (USD)."""

    start: float
    tiers: Mapping[str, int]
    tenants: Mapping[str, tuple[int, int]]
    saved_cost_usd: float


@dataclass(frozen=True, slots=True)
class LookupStats:
    """What :class:`LookupLog` holds (``CacheStats.lookups``).

    ``tiers`` and ``tenants`` are totals since start (``tenants``: tier -> count each);
    ``history`` the most recent time buckets (:data:`RECENT_BUCKETS` unless asked for more),
    oldest first, ``bucket_s`` seconds each;
    ``similarity_edges`` the ``SIMILARITY_BINS + 1`` bin edges of ``hit_similarity`` and
    ``miss_similarity`` (counts of the nearest similarity of semantic lookups that hit and
    that missed; requests that ran no semantic lookup are not in them).
    """

    bucket_s: int
    lookups: int
    hits: int
    saved_cost_usd: float
    tiers: Mapping[str, int]
    tenants: Mapping[str, Mapping[str, int]]
    history: tuple[LookupBucket, ...]
    similarity_edges: tuple[float, ...]
    hit_similarity: tuple[int, ...]
    miss_similarity: tuple[int, ...]
    dropped_tenants: int = 0

    @property
    def hit_rate(self) -> float:
        return self.hits / self.lookups if self.lookups else 0.0


@dataclass(slots=True)
class _Bucket:
    start: float
    tiers: dict[str, int] = field(default_factory=dict)
    tenants: dict[str, list[int]] = field(default_factory=dict)
    saved: float = 0.0


def similarity_bin(similarity: float) -> int:
    """The histogram bin of a cosine (clamped to [0, 1])."""
    return min(SIMILARITY_BINS - 1, max(0, int(similarity * SIMILARITY_BINS)))


class LookupLog:
    """Counts by time, tier and tenant, and nearest-similarity histograms (thread-safe)."""

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
            counts = bucket.tenants.setdefault(tenant, [0, 0])
            counts[0] += hit
            counts[1] += 1
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
                    {t: (c[0], c[1]) for t, c in b.tenants.items()},
                    b.saved,
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
