"""OpenTelemetry for one cache: its tracer, its instruments, and what one request records.

Spans and metrics go through the *global* providers of the OpenTelemetry API (what a
library should do: the application chooses the SDK, exporters and sampling, usually from
the standard ``OTEL_*`` variables), so nothing is sent anywhere unless the application
configured a provider with an exporter. The composition root builds a :class:`Telemetry`
only when ``telemetry.otel`` is on; otherwise no code of this module runs.

Spans: one per cache operation (``semcache.completion``, ...) with children for the phases
the plug-point decorators of :mod:`semcache.observe.traced` time (``semcache.embed``,
``semcache.search``, ``semcache.judge``, ``semcache.upstream``, ``semcache.write``). The
operation span carries ``semcache.tier``, ``semcache.similarity``,
``semcache.nearest_similarity``, ``semcache.miss_reason`` and ``semcache.tenant_hash`` (a
SHA-256 prefix: never the tenant's name).

Metrics: ``semcache.lookups`` (by tier, hit and hashed tenant), ``semcache.lookup.
nearest_similarity`` (every semantic lookup, hits and misses), ``semcache.phase.duration``
(seconds, by phase), ``semcache.cost_saved`` (USD, by hashed tenant) and the live
wrong-answer estimate ``semcache.false_hit.rate`` (by namespace and bound: rate, low, high).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.trace import Span

from semcache.stats import CacheInfo
from semcache.tuning.estimate import Estimate

#: Instrumentation scope of every span and metric.
SCOPE = "semcache"

_SIMILARITY_BOUNDS = [i / 20 for i in range(1, 20)] + [0.96, 0.97, 0.98, 0.99]


@lru_cache(maxsize=4096)
def tenant_hash(tenant: str) -> str:
    """What identifies a tenant in telemetry: 16 hex digits of its SHA-256."""
    return hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:16]


def attributes(info: CacheInfo, tenant: str) -> dict[str, Any]:
    """The span attributes of one answered request."""
    found: dict[str, Any] = {
        "semcache.tier": str(info.tier),
        "semcache.hit": info.hit,
        "semcache.tenant_hash": tenant_hash(tenant),
    }
    if info.similarity is not None:
        found["semcache.similarity"] = info.similarity
    if info.nearest_similarity is not None:
        found["semcache.nearest_similarity"] = info.nearest_similarity
    if info.miss_reason is not None:
        found["semcache.miss_reason"] = str(info.miss_reason)
    if info.saved_cost_usd:
        found["semcache.saved_cost_usd"] = info.saved_cost_usd
    return found


class Telemetry:
    """The tracer and instruments of one cache (global providers, scope ``semcache``)."""

    def __init__(self) -> None:
        self.tracer = trace.get_tracer(SCOPE)
        meter = metrics.get_meter(SCOPE)
        self._estimates: Callable[[], Mapping[str, Estimate]] = dict
        self._lookups = meter.create_counter(
            "semcache.lookups",
            unit="{lookup}",
            description="Answered requests by tier (hit or miss) and hashed tenant.",
        )
        self._nearest = meter.create_histogram(
            "semcache.lookup.nearest_similarity",
            unit="1",
            description="Cosine of the nearest stored question on every semantic lookup, "
            "hits and misses (semcache.hit says which).",
            explicit_bucket_boundaries_advisory=_SIMILARITY_BOUNDS,
        )
        self._phase = meter.create_histogram(
            "semcache.phase.duration",
            unit="s",
            description="Seconds per phase: operation, embed, search, judge, upstream, write.",
        )
        self._saved = meter.create_counter(
            "semcache.cost_saved",
            unit="USD",
            description="Upstream cost hits did not spend, by hashed tenant.",
        )
        meter.create_observable_gauge(
            "semcache.false_hit.rate",
            callbacks=[self._observe_estimates],
            unit="1",
            description="Live estimate of wrong answers among semantic hits (shadow "
            "verdicts), by namespace and bound (rate, low, high of the 95% interval).",
        )

    def watch_estimates(self, estimates: Callable[[], Mapping[str, Estimate]]) -> None:
        """Where the live false-hit estimates are read at each metric collection."""
        self._estimates = estimates

    def _observe_estimates(self, options: CallbackOptions) -> Iterable[Observation]:
        for namespace, e in self._estimates().items():
            for bound, value in (("rate", e.rate), ("low", e.low), ("high", e.high)):
                yield Observation(value, {"semcache.namespace": namespace, "semcache.bound": bound})

    @contextmanager
    def phase(self, name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[Span]:
        """A child span ``semcache.<name>`` of the current one, its duration recorded."""
        started = time.perf_counter()
        with self.tracer.start_as_current_span(f"semcache.{name}", attributes=attributes) as span:
            try:
                yield span
            finally:
                self._phase.record(time.perf_counter() - started, {"semcache.phase": name})

    def start(self, name: str) -> tuple[Span, float]:
        """A phase span that ends later (:meth:`end`): a write that finishes in the
        background, a stream that ends when its last chunk is read."""
        return self.tracer.start_span(f"semcache.{name}"), time.perf_counter()

    def end(self, name: str, span: Span, started: float) -> None:
        span.end()
        self._phase.record(time.perf_counter() - started, {"semcache.phase": name})

    def served(self, tenant: str, info: CacheInfo, span: Span | None = None) -> None:
        """Record one answered request: attributes on ``span`` (default: the current span),
        the lookup counters and the nearest similarity."""
        found = attributes(info, tenant)
        (span or trace.get_current_span()).set_attributes(found)
        labels = {
            "semcache.tier": found["semcache.tier"],
            "semcache.hit": info.hit,
            "semcache.tenant_hash": found["semcache.tenant_hash"],
        }
        self._lookups.add(1, labels)
        nearest = info.nearest_similarity
        if nearest is None:
            nearest = info.similarity if str(info.tier) == "semantic" else None
        if nearest is not None:
            self._nearest.record(
                nearest, {"semcache.tier": labels["semcache.tier"], "semcache.hit": info.hit}
            )
        if info.hit and info.saved_cost_usd:
            self._saved.add(
                info.saved_cost_usd, {"semcache.tenant_hash": labels["semcache.tenant_hash"]}
            )
