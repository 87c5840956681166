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

Metrics: ``semcache.lookups`` (by tier and hashed tenant), ``semcache.lookup.
nearest_similarity`` (every semantic lookup, hits and misses), ``semcache.phase.duration``
(seconds, by phase), ``semcache.cost_saved`` (USD) and the live wrong-answer estimate
``semcache.false_hit.rate`` (by namespace and bound: rate, low, high).
"""

from __future__ import annotations

import hashlib
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.metrics import CallbackOptions, Observation
from opentelemetry.trace import Span

from semcache.stats import CacheInfo, LookupStats, Tier
from semcache.tuning.estimate import Estimate

#: Instrumentation scope of every span and metric.
SCOPE = "semcache"

_SIMILARITY_BOUNDS = [i / 20 for i in range(1, 20)] + [0.96, 0.97, 0.98, 0.99]


@lru_cache(maxsize=4096)
def tenant_hash(tenant: str) -> str:
    """What identifies a tenant in telemetry: 16 hex digits of its SHA-256."""
    return hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:16]


#: Attribute sets shared by every span and point of one kind (tier and tenant); a cap keeps
#: a stream of new tenants from growing them without bound (past it they are rebuilt).
_SHARED_MAX = 4096


@lru_cache(maxsize=_SHARED_MAX)
def _base(tier: str, tenant: str) -> dict[str, Any]:
    """Tier and hashed tenant, one dict per pair: handed to spans as is (the SDK copies
    attributes it keeps and never writes into the mapping it is given)."""
    return {"semcache.tier": tier, "semcache.tenant_hash": tenant_hash(tenant)}


def _extra(info: CacheInfo) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if info.similarity is not None:
        found["semcache.similarity"] = info.similarity
    if info.nearest_similarity is not None:
        found["semcache.nearest_similarity"] = info.nearest_similarity
    if info.miss_reason is not None:
        found["semcache.miss_reason"] = str(info.miss_reason)
    if info.saved_cost_usd:
        found["semcache.saved_cost_usd"] = info.saved_cost_usd
    return found


def _span_attributes(info: CacheInfo, tenant: str) -> Mapping[str, Any]:
    """The span attributes of one answered request (the tier says hit or miss); the shared
    tier-and-tenant dict itself when the request adds nothing to it (an exact hit of a free
    answer)."""
    base = _base(str(info.tier), tenant)
    extra = _extra(info)
    return {**base, **extra} if extra else base


class _Instruments:
    """The process's ``semcache`` instruments, created once (an instrument name is
    registered once per meter); the observable ones read every live :class:`Telemetry`."""

    def __init__(self) -> None:
        meter = metrics.get_meter(SCOPE)
        self.sources: weakref.WeakSet[Telemetry] = weakref.WeakSet()
        meter.create_observable_counter(
            "semcache.lookups",
            callbacks=[self._observe_lookups],
            unit="{lookup}",
            description="Answered requests by tier (hits: exact, semantic, coalesced, merged; "
            "misses: miss, bypass) and hashed tenant.",
        )
        meter.create_observable_counter(
            "semcache.cost_saved",
            callbacks=[self._observe_saved],
            unit="USD",
            description="Upstream cost hits did not spend.",
        )
        meter.create_observable_gauge(
            "semcache.false_hit.rate",
            callbacks=[self._observe_estimates],
            unit="1",
            description="Live estimate of wrong answers among semantic hits (shadow "
            "verdicts), by namespace and bound (rate, low, high of the 95% interval).",
        )
        self.nearest = meter.create_histogram(
            "semcache.lookup.nearest_similarity",
            unit="1",
            description="Cosine of the nearest stored question on every semantic lookup, "
            "hits and misses (semcache.hit says which).",
            explicit_bucket_boundaries_advisory=_SIMILARITY_BOUNDS,
        )
        self.phase = meter.create_histogram(
            "semcache.phase.duration",
            unit="s",
            description="Seconds per phase: embed, search, retrieve, judge, upstream, write, "
            "upsert, and a whole stream (its operation: completion, responses, messages).",
        )

    def _observe_lookups(self, options: CallbackOptions) -> Iterable[Observation]:
        counts: Counter[tuple[str, str]] = Counter()
        for source in list(self.sources):
            found = source.lookups()
            for tenant, tiers in ({} if found is None else found.tenants).items():
                for tier, n in tiers.items():
                    counts[(tier, tenant_hash(tenant))] += n
        for (tier, tenant), n in counts.items():
            yield Observation(n, {"semcache.tier": tier, "semcache.tenant_hash": tenant})

    def _observe_saved(self, options: CallbackOptions) -> Iterable[Observation]:
        found = [source.lookups() for source in list(self.sources)]
        yield Observation(sum(f.saved_cost_usd for f in found if f is not None))

    def _observe_estimates(self, options: CallbackOptions) -> Iterable[Observation]:
        for source in list(self.sources):
            for namespace, e in source.estimates().items():
                for bound, value in (("rate", e.rate), ("low", e.low), ("high", e.high)):
                    labels = {"semcache.namespace": namespace, "semcache.bound": bound}
                    yield Observation(value, labels)


_INSTRUMENTS: _Instruments | None = None
_CREATING = threading.Lock()


def _instruments() -> _Instruments:
    global _INSTRUMENTS
    with _CREATING:
        if _INSTRUMENTS is None:
            _INSTRUMENTS = _Instruments()
        return _INSTRUMENTS


class Telemetry:
    """The tracer and instruments of one cache (global providers, scope ``semcache``).

    Counts that every request adds to (lookups by tier and tenant, cost saved) are read from
    the cache's :class:`~semcache.observe.lookups.LookupLog` when metrics are collected
    (observable counters, summed over the live caches of the process), so a request pays
    for no counter of its own; tenants past ``telemetry.max_tenants`` count as ``(other)``.
    """

    def __init__(self) -> None:
        self.tracer = trace.get_tracer(SCOPE)
        self._instruments = _instruments()
        self._nearest = self._instruments.nearest
        self._phase = self._instruments.phase
        self._names: dict[str, str] = {}
        self._phase_points: dict[str, dict[str, str]] = {}
        self._nearest_points = {
            (tier, hit): {"semcache.tier": str(tier), "semcache.hit": hit}
            for tier in Tier
            for hit in (False, True)
        }
        self.estimates: Callable[[], Mapping[str, Estimate]] = dict
        self.lookups: Callable[[], LookupStats | None] = lambda: None

    def watch(
        self,
        estimates: Callable[[], Mapping[str, Estimate]],
        lookups: Callable[[], LookupStats | None],
    ) -> None:
        """Where the live false-hit estimates and the recorded lookups are read at each
        metric collection (from now on)."""
        self.estimates = estimates
        self.lookups = lookups
        self._instruments.sources.add(self)

    def _name(self, name: str) -> str:
        found = self._names.get(name)
        if found is None:
            found = self._names[name] = f"{SCOPE}.{name}"
        return found

    def _record_phase(self, name: str, seconds: float) -> None:
        point = self._phase_points.get(name)
        if point is None:
            point = self._phase_points[name] = {"semcache.phase": name}
        self._phase.record(seconds, point)

    @contextmanager
    def phase(self, name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[Span]:
        """A child span ``semcache.<name>`` of the current one, its duration recorded."""
        started = time.perf_counter()
        with self.tracer.start_as_current_span(self._name(name), attributes=attributes) as span:
            try:
                yield span
            finally:
                self._record_phase(name, time.perf_counter() - started)

    def operation(self, name: str, started_ns: int | None = None) -> AbstractContextManager[Span]:
        """The span of one public operation, current while it runs, from ``started_ns``
        (``time.time_ns()``; default: now). Its duration is the span's own: no phase
        histogram point."""
        return self.tracer.start_as_current_span(self._name(name), start_time=started_ns)

    def answered(
        self, name: str, tenant: str, info: CacheInfo | None, started_ns: int, stream: bool
    ) -> None:
        """The span of an operation answered without a phase of its own (a hit of the
        memory tier, ``stream``: replayed as a stream), opened at ``started_ns`` and ended now
        with the request's attributes: never current, so it costs no context switch; then
        :meth:`record`."""
        attributes = None if info is None else _span_attributes(info, tenant)
        if stream:
            attributes = {**(attributes or {}), "semcache.stream": True}
        self.tracer.start_span(self._name(name), start_time=started_ns, attributes=attributes).end()
        if info is not None:
            self.record(info)

    def start(self, name: str) -> tuple[Span, float]:
        """A phase span that ends later (:meth:`end`): a write that finishes in the
        background, a stream that ends when its last chunk is read."""
        return self.tracer.start_span(self._name(name)), time.perf_counter()

    def end(self, name: str, span: Span, started: float) -> None:
        span.end()
        self._record_phase(name, time.perf_counter() - started)

    def served(self, tenant: str, info: CacheInfo, span: Span | None = None) -> None:
        """Record one answered request: its attributes on ``span`` (default: the current
        span), then :meth:`record`."""
        span = span or trace.get_current_span()
        if span.is_recording():  # a trace the sampler left out costs no attributes
            span.set_attributes(_span_attributes(info, tenant))
        self.record(info)

    def record(self, info: CacheInfo) -> None:
        """The request's nearest similarity (semantic lookups only, hits and misses)."""
        nearest = info.nearest_similarity
        if nearest is None and info.tier is Tier.SEMANTIC:
            nearest = info.similarity
        if nearest is not None:
            self._nearest.record(nearest, self._nearest_points[(info.tier, info.hit)])
