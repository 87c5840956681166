"""Prometheus metrics of one proxy app, in a registry of its own.

A registry per app lets several apps run in one process and tests read exact counts back.
Label values are bounded: tiers and error kinds are fixed sets, tenants and models come from
the config file, never from request content (``tenant_labels=False``: no tenant label). At
each scrape ``cache.stats()`` is exported: fail-open counters as
``semcache_cache_failures_total{kind}``, shed counters as ``semcache_cache_shed_total{kind}``,
other event counters as ``semcache_cache_events_total{kind}``, and the tuning loop's
estimate (:mod:`semcache.tuning.metrics`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from semcache.stats import CacheInfo, CacheStats, Tier
from semcache.tuning.metrics import TuningCollector

#: Content type of the text exposition format served at /metrics.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.002,
    0.005,
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1.0,
    2.0,
    5.0,
    10.0,
    30.0,
)
_SIMILARITY_BUCKETS = (
    0.5,
    0.6,
    0.7,
    0.8,
    0.85,
    0.9,
    0.92,
    0.94,
    0.95,
    0.96,
    0.97,
    0.98,
    0.99,
    1.0,
)


_DECISIONS = (
    "not_stored",
    "redacted",
    "answers_not_stored",
    "answers_redacted",
    "oversized",
    "scan_timeouts",
)


class CacheCounters(Collector):
    """The cache's own fail-open and shed counters, as of the last scrape's ``cache.stats()``."""

    def __init__(self) -> None:
        self.failures: Mapping[str, int] = {}
        self.shed: Mapping[str, int] = {}
        self.events: Mapping[str, int] = {}
        self.refused: Mapping[str, Mapping[str, int]] = {}

    def collect(self) -> Iterator[Metric]:
        failures = CounterMetricFamily(
            "semcache_cache_failures",
            "Cache failures served as misses (the request went on without the cache), by kind.",
            labels=["kind"],
        )
        for kind, n in sorted(self.failures.items()):
            failures.add_metric([kind], n)
        shed = CounterMetricFamily(
            "semcache_cache_shed",
            "Cache work skipped by admission control because it could not start in time, by kind.",
            labels=["kind"],
        )
        for kind, n in sorted(self.shed.items()):
            shed.add_metric([kind], n)
        events = CounterMetricFamily(
            "semcache_cache_events",
            "What the cache did beside serving: hedged lookups and how they ended, merges, "
            "guard vetoes, gathering holds, ... (cache.stats().counts), by kind.",
            labels=["kind"],
        )
        for kind, n in sorted(self.events.items()):
            events.add_metric([kind], n)
        refused = CounterMetricFamily(
            "semcache_write_refused",
            "Writes a fence refused, by tier (store: write-behind and requested writes; "
            "redis_exact: the shared exact tier) and reason (purged, withdrawn, "
            "purge_log_reset, fence_window, fence_missing).",
            labels=["tier", "reason"],
        )
        for tier, reasons in sorted(self.refused.items()):
            for reason, n in sorted(reasons.items()):
                refused.add_metric([tier, reason], n)
        yield failures
        yield shed
        yield events
        yield refused

    def describe(self) -> Iterator[Metric]:
        return iter(())


class ProxyMetrics:
    """Counters, histograms and gauges of one app; :meth:`render` is the /metrics body."""

    def __init__(self, *, tenant_labels: bool = True) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._tenant_labels = tenant_labels
        tenant = ["tenant"] if tenant_labels else []
        self.cache_counters = CacheCounters()
        r.register(self.cache_counters)
        self.tuning = TuningCollector()
        r.register(self.tuning)
        self.requests = Counter(
            "semcache_requests", "Completed chat requests by tier.", ["tier", *tenant], registry=r
        )
        self.upstream_calls = Counter(
            "semcache_upstream_calls",
            "Requests whose answer needed an upstream call of their own (tier miss or bypass).",
            ["model"],
            registry=r,
        )
        self.errors = Counter(
            "semcache_errors",
            "Requests that ended in an error, by kind and HTTP status.",
            ["kind", "status"],
            registry=r,
        )
        self.lookup_seconds = Histogram(
            "semcache_lookup_seconds",
            "Seconds to answer a request from the exact or semantic tier (the lookup path).",
            ["tier"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.request_seconds = Histogram(
            "semcache_request_duration_seconds",
            "End-to-end seconds per chat request (streams: until the last chunk).",
            ["tier"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.hit_similarity = Histogram(
            "semcache_semantic_hit_similarity",
            "Cosine similarity of served semantic hits.",
            buckets=_SIMILARITY_BUCKETS,
            registry=r,
        )
        self.nearest_miss_similarity = Histogram(
            "semcache_nearest_miss_similarity",
            "Cosine similarity of the nearest stored question on a miss (threshold tuning).",
            buckets=_SIMILARITY_BUCKETS,
            registry=r,
        )
        self.saved_tokens = Counter(
            "semcache_saved_tokens",
            "Upstream tokens not spent thanks to hits.",
            tenant,
            registry=r,
        )
        self.saved_cost = Counter(
            "semcache_saved_cost_usd",
            "Upstream cost not spent thanks to hits, USD.",
            tenant,
            registry=r,
        )
        self.compression_saved_tokens = Counter(
            "semcache_compression_saved_tokens",
            "Input tokens prompt compression removed from upstream calls (apart from hits).",
            registry=r,
        )
        self.compression_saved_cost = Counter(
            "semcache_compression_saved_cost_usd",
            "Price of the input tokens prompt compression removed, USD.",
            registry=r,
        )
        self.provider_cached_tokens = Counter(
            "semcache_provider_cached_tokens",
            "Input tokens the provider's prompt cache served on upstream calls (apart from hits).",
            tenant,
            registry=r,
        )
        self.provider_cache_saved_cost = Counter(
            "semcache_provider_cache_saved_cost_usd",
            "What those tokens saved against uncached input, USD (apart from hits).",
            tenant,
            registry=r,
        )
        self.private_data = Gauge(
            "semcache_private_data_findings",
            "Private-data spans found since start, by kind (questions and answers; never text).",
            ["kind"],
            registry=r,
        )
        self.private_decisions = Gauge(
            "semcache_private_data_decisions",
            "Private-data gate decisions since start: not_stored, redacted, answers_not_stored, "
            "answers_redacted, and oversized and scan_timeouts (treated as private unscanned).",
            ["decision"],
            registry=r,
        )
        self.store_entries = Gauge(
            "semcache_store_entries", "Entries in the store (from cache.stats()).", registry=r
        )

    def record_request(self, *, tenant: str, model: str, info: CacheInfo, latency_s: float) -> None:
        """Count one answered request; ``latency_s`` is its end-to-end duration."""
        tier = info.tier
        by_tenant = {"tenant": tenant} if self._tenant_labels else {}
        self.requests.labels(tier=tier, **by_tenant).inc()
        self.request_seconds.labels(tier=tier).observe(latency_s)
        if tier.used_upstream:
            self.upstream_calls.labels(model=model).inc()
        if tier.stored:
            self.lookup_seconds.labels(tier=tier).observe(latency_s)
        if tier is Tier.SEMANTIC and info.similarity is not None:
            self.hit_similarity.observe(info.similarity)
        if tier is Tier.MISS and info.nearest_similarity is not None:
            self.nearest_miss_similarity.observe(info.nearest_similarity)
        if info.saved_tokens:
            self._by_tenant(self.saved_tokens, by_tenant).inc(info.saved_tokens)
        if info.saved_cost_usd:
            self._by_tenant(self.saved_cost, by_tenant).inc(info.saved_cost_usd)
        if info.compression_saved_tokens:
            self.compression_saved_tokens.inc(info.compression_saved_tokens)
            self.compression_saved_cost.inc(info.compression_saved_usd)
        if info.provider_cached_tokens and not info.hit:
            self._by_tenant(self.provider_cached_tokens, by_tenant).inc(info.provider_cached_tokens)
            self._by_tenant(self.provider_cache_saved_cost, by_tenant).inc(info.provider_cached_usd)

    @staticmethod
    def _by_tenant(counter: Counter, labels: dict[str, str]) -> Counter:
        return counter.labels(**labels) if labels else counter

    def record_error(self, *, kind: str, status: int) -> None:
        self.errors.labels(kind=kind, status=str(status)).inc()

    def render(self, stats: CacheStats | None = None) -> bytes:
        """The exposition text; ``stats`` (``cache.stats()``) refreshes the store gauge."""
        if stats is not None:
            self.cache_counters.failures = dict(stats.errors)
            self.cache_counters.shed = dict(stats.shed)
            self.cache_counters.events = dict(stats.counts)
            self.cache_counters.refused = stats.write_refused
            self.tuning.stats = stats.tuning
            if stats.store_entries is not None:
                self.store_entries.set(stats.store_entries)
        privacy = stats.privacy if stats is not None else None
        if privacy is not None:
            for kind, n in privacy.findings.items():
                self.private_data.labels(kind=kind).set(n)
            for decision in _DECISIONS:
                self.private_decisions.labels(decision=decision).set(getattr(privacy, decision))
        return generate_latest(self.registry)
