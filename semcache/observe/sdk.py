"""OpenTelemetry's SDK as the standard ``OTEL_*`` variables describe it, for a process whose
application configured none (``semcache serve``, a script).

``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER`` name the exporter (``otlp``, the
default when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set; ``console``; ``none``); the OTLP
exporter reads its own ``OTEL_EXPORTER_OTLP_*`` variables and needs
``opentelemetry-exporter-otlp-proto-http``; ``OTEL_SERVICE_NAME`` and
``OTEL_RESOURCE_ATTRIBUTES`` name the resource. A provider the application installed
itself is left alone: then it alone decides where telemetry goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

from semcache.errors import ConfigError

_OTLP = "opentelemetry-exporter-otlp-proto-http"


def _exporter(variable: str, environ: Mapping[str, str]) -> str:
    default = "otlp" if environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") else "none"
    name = environ.get(variable, default).strip().lower() or default
    if name not in ("otlp", "console", "none"):
        raise ConfigError(f"{variable}={name!r}: semcache knows otlp, console and none")
    return name


def _otlp(kind: str, variable: str) -> Any:
    try:
        if kind == "traces":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter,
            )

            return OTLPSpanExporter()
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import (  # type: ignore[import-not-found]
            OTLPMetricExporter,
        )

        return OTLPMetricExporter()
    except ImportError as exc:
        raise ConfigError(f"{variable}=otlp needs the OTLP exporter: pip install {_OTLP}") from exc


def configure_from_environ(environ: Mapping[str, str]) -> None:
    """Install SDK providers with the exporters the variables name (see the module doc)."""
    resource = Resource.create()
    traces = _exporter("OTEL_TRACES_EXPORTER", environ)
    if traces != "none" and not isinstance(trace.get_tracer_provider(), TracerProvider):
        span_exporter = (
            ConsoleSpanExporter()
            if traces == "console"
            else _otlp("traces", "OTEL_TRACES_EXPORTER")
        )
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
        trace.set_tracer_provider(tracer_provider)
    kind = _exporter("OTEL_METRICS_EXPORTER", environ)
    if kind != "none" and not isinstance(metrics.get_meter_provider(), MeterProvider):
        metric_exporter = (
            ConsoleMetricExporter()
            if kind == "console"
            else _otlp("metrics", "OTEL_METRICS_EXPORTER")
        )
        reader = PeriodicExportingMetricReader(metric_exporter)
        metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))
