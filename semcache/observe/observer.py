"""What the facade reports about each public operation: the recorded lookups, and (when
OpenTelemetry is on) the operation's span with the request's outcome on it.

Without OpenTelemetry an operation costs one O(1) count in the :class:`LookupLog`; the
span context manager is then a shared no-op, so the hot path imports and runs no tracing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from semcache.observe.lookups import LookupLog
from semcache.stats import CacheInfo, cache_info

if TYPE_CHECKING:
    from semcache.observe.otel import Telemetry

_NO_SPAN: AbstractContextManager[object] = contextlib.nullcontext()


class Observer:
    """The recorded lookups of one cache, and its telemetry (None: OpenTelemetry off)."""

    def __init__(self, lookups: LookupLog, telemetry: Telemetry | None = None) -> None:
        self.lookups = lookups
        self.telemetry = telemetry

    def operation(self, name: str) -> AbstractContextManager[object]:
        """The span of one public operation (``semcache.<name>``), current while it runs."""
        if self.telemetry is None:
            return _NO_SPAN
        return self.telemetry.phase(name)

    def served(self, tenant: str, response: Any) -> Any:
        """Record the answer ``response`` (tagged with its ``CacheInfo``) for ``tenant``;
        returns ``response``."""
        hidden = getattr(response, "_hidden_params", None)  # where Delivery tags it
        info = hidden.get("semcache") if isinstance(hidden, dict) else cache_info(response)
        if isinstance(info, CacheInfo):
            self.info(tenant, info)
        return response

    def info(self, tenant: str, info: CacheInfo) -> None:
        self.lookups.record(tenant, info)
        if self.telemetry is not None:
            self.telemetry.served(tenant, info)

    async def stream(
        self, tenant: str, items: AsyncGenerator[Any, None]
    ) -> AsyncGenerator[Any, None]:
        """A streamed answer's items, passed on (closing this closes ``items``); its
        ``CacheInfo`` is recorded. With OpenTelemetry the pipeline starts (on the first
        item) under a ``semcache.completion`` span that ends with the stream."""
        telemetry = self.telemetry
        span: Any = None
        try:
            if telemetry is None:
                async for item in items:
                    if isinstance(item, CacheInfo):
                        self.lookups.record(tenant, item)
                    yield item
                return
            from opentelemetry import context, trace

            span, started = telemetry.start("completion")
            span.set_attribute("semcache.stream", True)
            token = context.attach(trace.set_span_in_context(span))
            try:  # the pipeline's task starts here and keeps this context
                first = await anext(items, _END)
            finally:
                context.detach(token)
            if first is _END:
                return
            self._note(tenant, first, telemetry, span)
            yield first
            async for item in items:
                self._note(tenant, item, telemetry, span)
                yield item
        finally:
            await items.aclose()
            if telemetry is not None and span is not None:
                telemetry.end("completion", span, started)

    def _note(self, tenant: str, item: Any, telemetry: Telemetry, span: Any) -> None:
        if isinstance(item, CacheInfo):
            self.lookups.record(tenant, item)
            telemetry.served(tenant, item, span)


_END = object()
