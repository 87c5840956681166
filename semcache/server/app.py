"""``create_app``: the FastAPI application of the caching proxy."""

from __future__ import annotations

import inspect
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from semcache.config.settings import CacheSettings
from semcache.server import (
    admin_routes,
    more_routes,
    openai_routes,
    ops_routes,
    protocol_routes,
    tuning_routes,
    ui_routes,
)
from semcache.server.auth import KeyRing
from semcache.server.config import ProxyConfig
from semcache.server.http_errors import ApiError, invalid_request
from semcache.server.metrics import ProxyMetrics
from semcache.server.openai_routes import error_response
from semcache.server.state import Proxy
from semcache.server.upstreams import UpstreamTable

if TYPE_CHECKING:
    from semcache.cache import SemanticCache


async def _http_error(request: Request, exc: HTTPException) -> Response:
    # Starlette's 405 carries ``Allow`` in its headers (RFC 9110 requires it on a 405)
    error = ApiError(exc.status_code, str(exc.detail), kind="http")
    return error_response(error, headers=dict(exc.headers or {}))


async def _validation_error(request: Request, exc: RequestValidationError) -> Response:
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error.get("loc", ())) or "body"
    return error_response(invalid_request(field, str(error.get("msg"))))


class WorkerHeader:
    """Every response names the process that answered it (``x-semcache-worker``: its pid),
    errors and streams included: with ``serve --workers N`` a client can tell which worker's
    cache served it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.header = (b"x-semcache-worker", str(os.getpid()).encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def named(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), self.header]
            await send(message)

        await self.app(scope, receive, named)


def check_app_config(config: ProxyConfig, environ: Mapping[str, str] | None = None) -> None:
    """Raise the :class:`ConfigError` :func:`create_app` would (client keys, upstreams and the
    variables they name), without building a cache: for a process that serves no request
    itself (the ``--workers`` supervisor, which must not load the model)."""
    KeyRing.from_config(config, environ)
    UpstreamTable.from_config(config, environ)


def _http_telemetry(on: bool) -> dict[str, Any]:
    """FastAPI's keyword for its own OpenTelemetry (versions that have it): left at
    FastAPI's defaults when ``server.http_telemetry`` is on, else every part off."""
    if on or "telemetry" not in inspect.signature(FastAPI).parameters:
        return {}
    return {"telemetry": {"tracing": False, "metrics": False, "logs": False}}


def _join_caller_traces(app: FastAPI, config: ProxyConfig, environ: Mapping[str, str]) -> None:
    """With the cache's OpenTelemetry on, a request's ``traceparent`` header makes the
    cache's spans part of the caller's trace (without the ``otel`` extra nothing is traced:
    nothing to join)."""
    from semcache.compose.observe import otel_enabled

    if not otel_enabled(config.cache.telemetry, environ):
        return
    try:
        from semcache.observe.propagate import CallerTrace
    except ImportError:
        return
    app.add_middleware(CallerTrace)


def create_app(
    config: ProxyConfig,
    cache: SemanticCache | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    settings_source: Callable[[], CacheSettings] | None = None,
) -> FastAPI:
    """The proxy app for ``config``.

    Keys are read from ``environ`` now, so a missing variable fails here, not at the first
    request. Without ``cache`` one is built from ``config.cache`` and closed when the lifespan
    ends; a cache passed in stays the caller's. No I/O here. ``settings_source`` re-reads the
    cache settings for ``POST /admin/reload``.
    """
    keys = KeyRing.from_config(config, environ)
    upstreams = UpstreamTable.from_config(config, environ)
    owns_cache = cache is None
    if cache is None:
        from semcache.cache import SemanticCache  # lazy: imports LiteLLM

        cache = SemanticCache(config.cache)
    proxy = Proxy(
        config=config,
        cache=cache,
        keys=keys,
        upstreams=upstreams,
        metrics=ProxyMetrics(tenant_labels=config.server.metrics_tenant_labels),
        owns_cache=owns_cache,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if proxy.owns_cache:
            await proxy.cache.aclose()

    app = FastAPI(
        title="semcache proxy",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        **_http_telemetry(config.server.http_telemetry),
    )
    app.state.proxy = proxy
    setattr(app.state, tuning_routes.SETTINGS_SOURCE, settings_source or CacheSettings)
    app.include_router(openai_routes.router)
    app.include_router(more_routes.router)
    app.include_router(protocol_routes.router)
    app.include_router(
        more_routes.unprefixed(openai_routes.router, more_routes.router, protocol_routes.router)
    )
    app.include_router(admin_routes.router)
    app.include_router(tuning_routes.router)
    app.include_router(more_routes.unprefixed(tuning_routes.router))
    app.include_router(ops_routes.router)
    app.include_router(ui_routes.router)
    app.add_middleware(WorkerHeader)
    if not config.server.http_telemetry:
        _join_caller_traces(app, config, os.environ if environ is None else environ)
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    return app
