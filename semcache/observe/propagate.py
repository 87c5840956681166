"""The caller's trace for the proxy's requests: a request that carries a W3C ``traceparent``
header has its cache spans recorded in the caller's trace.

The proxy installs :class:`CallerTrace` when the cache's OpenTelemetry is on and FastAPI's
own HTTP telemetry (which would read the header itself) is off. A request without the header
costs one scan of its header names; one with it, the standard propagators' extraction.
"""

from __future__ import annotations

from opentelemetry import context, propagate
from starlette.types import ASGIApp, Receive, Scope, Send

#: The headers the standard propagators read (W3C trace context and baggage).
_TRACE_HEADERS = frozenset({b"traceparent", b"tracestate", b"baggage"})


class CallerTrace:
    """ASGI middleware: the trace context of a request's ``traceparent`` header is current
    while the request is handled, so the cache's operation span is a child of the caller's."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        carrier = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in scope["headers"]
            if name in _TRACE_HEADERS
        }
        if "traceparent" not in carrier:
            await self.app(scope, receive, send)
            return
        token = context.attach(propagate.extract(carrier))
        try:
            await self.app(scope, receive, send)
        finally:
            context.detach(token)
