"""The dashboard's data, one JSON document: what ``GET /admin/dashboard`` returns and the
page at ``/ui`` draws.

Fields: ``threshold`` (served now: ``default`` and ``namespaces``; ``persisted``: whether
an applied one outlives a restart), ``lookups`` (the
recorded lookups: totals by tier and tenant, ``history`` by time bucket (each: by tier,
(hits, lookups) by tenant, by tenant and tier), the
nearest-similarity histograms of hits and misses, ``saved_cost_usd``), ``estimate`` (the
live wrong-answer rate of semantic hits per namespace, from shadow verdicts, with its 95%
interval, against ``delta``), ``near_misses`` (to label, each with an ``id``),
``labels`` (counts by source and verdict) and ``what_if`` (per threshold: the share of
labeled pairs served and the wrong answers among them; the certified threshold). Every
part is bounded by settings, never by traffic.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from semcache.observe.lookups import RECENT_BUCKETS
from semcache.observe.whatif import what_if

if TYPE_CHECKING:
    from semcache.cache import SemanticCache
    from semcache.stats import CacheStats

#: Near misses listed to label.
MISSES_SHOWN = 50


def document(
    cache: SemanticCache, *, tenant: str | None = None, buckets: int = RECENT_BUCKETS
) -> dict[str, Any]:
    """The dashboard's JSON document with the last ``buckets`` time buckets (blocking: call
    it in a worker thread)."""
    stats = replace(cache.stats(), lookups=cache.lookups(buckets=buckets))
    default, namespaces = cache.served_thresholds()
    pairs = cache.labeled_pairs()
    tuning = stats.tuning
    delta = tuning.delta if tuning is not None else None
    whatif = None
    if default is not None and delta is not None:
        whatif = asdict(what_if(pairs, default, target=delta))
    sources = Counter(f"{p.source}:{'yes' if p.label else 'no'}" for p in pairs)
    return {
        "object": "dashboard",
        "threshold": {
            "default": default,
            "namespaces": namespaces,
            "persisted": cache.thresholds_persisted(),
        },
        "lookups": _lookups(stats),
        "estimate": _estimate(stats),
        "near_misses": cache.near_misses_to_label(tenant=tenant, limit=MISSES_SHOWN),
        "labels": {"total": len(pairs), "by_source": dict(sorted(sources.items()))},
        "what_if": whatif,
    }


def _lookups(stats: CacheStats) -> dict[str, Any]:
    found = stats.lookups
    if found is None:
        return {}
    return {
        "bucket_s": found.bucket_s,
        "lookups": found.lookups,
        "hits": found.hits,
        "hit_rate": found.hit_rate,
        "saved_cost_usd": found.saved_cost_usd,
        "tiers": found.tiers,
        "tenants": found.tenants,
        "dropped_tenants": found.dropped_tenants,
        "history": [
            {
                "start": b.start,
                "tiers": b.tiers,
                "tenants": b.tenants,
                "tenant_tiers": b.tenant_tiers,
                "saved_cost_usd": b.saved_cost_usd,
            }
            for b in found.history
        ],
        "similarity_edges": found.similarity_edges,
        "hit_similarity": found.hit_similarity,
        "miss_similarity": found.miss_similarity,
    }


def _estimate(stats: CacheStats) -> dict[str, Any]:
    tuning = stats.tuning
    if tuning is None:
        return {"delta": None, "namespaces": {}}
    return {
        "delta": tuning.delta,
        "shadow_sampled": tuning.shadow_sampled,
        "namespaces": {ns: {**asdict(e), "alert": e.alert} for ns, e in tuning.estimates.items()},
    }
