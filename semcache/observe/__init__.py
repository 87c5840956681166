"""Seeing the cache: the lookups it recorded (bounded aggregates for ``stats()`` and the
dashboard), OpenTelemetry spans and metrics (the ``otel`` extra), and the dashboard's data.

``lookups`` keeps counts by time, tier and tenant and the distribution of nearest
similarity; ``otel`` and ``traced`` emit spans and metrics through the global OpenTelemetry
providers when the telemetry settings turn them on; ``dashboard`` and ``whatif`` build what
``GET /admin/dashboard`` returns.
"""
