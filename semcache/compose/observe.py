"""The cache's observers as ``telemetry`` describes it: the recorded lookups always, and
OpenTelemetry (spans, metrics, the plug-point decorators) only when it is on."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from semcache.errors import ConfigError
from semcache.observe.lookups import LookupLog, Observer
from semcache.observe.settings import TelemetrySettings
from semcache.pipeline.write_behind import WriteBehind

if TYPE_CHECKING:
    from semcache.embedders.base import Embedder
    from semcache.guard import HitVerifier
    from semcache.observe.otel import Telemetry
    from semcache.runtime.upstream import Upstream
    from semcache.stores.base import VectorStore
    from semcache.tuning.estimate import Estimate

#: The standard variables that, set, turn OpenTelemetry on when ``telemetry.otel`` is None.
OTEL_VARIABLES = ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT")


def otel_enabled(t: TelemetrySettings, environ: Mapping[str, str]) -> bool:
    """``telemetry.otel`` when set; else on when a standard exporter variable is set and
    ``OTEL_SDK_DISABLED`` is not true."""
    if t.otel is not None:
        return t.otel
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(environ.get(name) for name in OTEL_VARIABLES)


def telemetry(t: TelemetrySettings, environ: Mapping[str, str] | None = None) -> Telemetry | None:
    """The cache's OpenTelemetry (None: off). Asked for explicitly without the ``otel``
    extra: a :class:`ConfigError` naming the install; turned on by a variable alone: off.
    When the application installed no SDK provider, the exporters the standard variables
    name are installed (:mod:`semcache.observe.sdk`)."""
    environ = os.environ if environ is None else environ
    if not otel_enabled(t, environ):
        return None
    try:
        from semcache.observe.otel import Telemetry
        from semcache.observe.sdk import configure_from_environ
    except ImportError as exc:
        if t.otel:
            raise ConfigError(
                f"telemetry.otel needs OpenTelemetry: pip install 'semcache-llm[otel]' ({exc})"
            ) from exc
        return None
    configure_from_environ(environ)
    return Telemetry()


def observer(
    t: TelemetrySettings,
    clock: Callable[[], float],
    found: Telemetry | None,
    estimates: Callable[[], Mapping[str, Estimate]],
) -> Observer:
    """The recorded lookups, and the telemetry that reads them and the live estimates."""
    lookups = LookupLog(
        bucket_s=t.bucket_s, buckets=t.buckets, max_tenants=t.max_tenants, clock=clock
    )
    if found is not None:
        found.watch(estimates, lambda: lookups.snapshot(buckets=0))
    return Observer(lookups, found)


def traced_embedder(
    make: Callable[[], Embedder], found: Telemetry | None
) -> Callable[[], Embedder]:
    if found is None:
        return make
    from semcache.observe.traced import TracedEmbedder

    return lambda: TracedEmbedder(make(), found)


def traced_store(
    make: Callable[[], VectorStore], found: Telemetry | None
) -> Callable[[], VectorStore]:
    if found is None:
        return make
    from semcache.observe.traced import TracedStore

    return lambda: TracedStore(make(), found)


def traced_verifier(guard: HitVerifier, found: Telemetry | None) -> HitVerifier:
    if found is None:
        return guard
    from semcache.observe.traced import traced_verifier as wrap

    return wrap(guard, found)


def traced_upstream(upstream: Upstream, found: Telemetry | None) -> Upstream:
    if found is None:
        return upstream
    from semcache.observe.traced import TracedUpstream

    return TracedUpstream(upstream, found)


def write_behind(otel: Telemetry | None) -> Callable[..., WriteBehind]:
    """Write-behind, traced when OpenTelemetry is on."""
    if otel is None:
        return WriteBehind
    from semcache.observe.traced import TracedWriteBehind

    return partial(TracedWriteBehind, telemetry=otel)
