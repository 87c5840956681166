"""OpenTelemetry's SDK with in-memory readers, installed once as the global providers (the
API lets a process set them once: a tracer provider another test installed is joined);
each test starts from an empty span list."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@dataclass(frozen=True)
class Otel:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader


_OTEL: Otel | None = None


def _install() -> Otel:
    global _OTEL
    if _OTEL is None:
        exporter = InMemorySpanExporter()
        tracer_provider = trace.get_tracer_provider()
        if not isinstance(tracer_provider, TracerProvider):  # else another test's: join it
            tracer_provider = TracerProvider()
            trace.set_tracer_provider(tracer_provider)
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        reader = InMemoryMetricReader()
        assert not isinstance(metrics.get_meter_provider(), MeterProvider), (
            "a meter provider was installed before these tests (readers cannot join it)"
        )
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _OTEL = Otel(exporter, reader)
    return _OTEL


@pytest.fixture
def otel() -> Otel:
    found = _install()
    found.spans.clear()
    found.metrics.get_metrics_data()  # drop what earlier tests recorded (cumulative stays)
    return found
