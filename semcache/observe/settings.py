"""``TelemetrySettings``: OpenTelemetry and the recorded lookups (``SEMCACHE_TELEMETRY__*``).

Mounted by ``CacheSettings`` as ``telemetry``; only the composition root reads it.
"""

from __future__ import annotations

from pydantic import Field

from semcache.config.check import SettingsSection


class TelemetrySettings(SettingsSection):
    """Spans and metrics through OpenTelemetry, and the lookups the dashboard shows."""

    otel: bool | None = Field(
        None,
        description="Emit OpenTelemetry spans and metrics (needs the otel extra) through the "
        "global tracer and meter providers. None: on when a standard OTEL_TRACES_EXPORTER, "
        "OTEL_METRICS_EXPORTER or OTEL_EXPORTER_OTLP_ENDPOINT variable is set and "
        "OTEL_SDK_DISABLED is not true. Nothing is sent unless a provider with an exporter "
        "is configured.",
    )
    bucket_s: int = Field(
        60,
        ge=1,
        description="Seconds per time bucket of the recorded lookups (hit rate over time).",
    )
    buckets: int = Field(
        1440, ge=1, description="Time buckets of recorded lookups kept (oldest dropped first)."
    )
    max_tenants: int = Field(
        100,
        ge=1,
        description="Tenants counted one by one in the recorded lookups; the rest are "
        "counted together as '(other)'.",
    )
