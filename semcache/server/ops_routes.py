"""Operations endpoints: liveness, readiness and Prometheus metrics.

``/readyz`` reports ``cache.health(wait=False)``: 200 while the cache can serve (degraded
parts listed), 503 while the model warms up or a local part is down. ``/metrics`` needs
``server.metrics_key`` when set, with tenant labels only under ``server.metrics_tenant_labels``.
"""

from __future__ import annotations

import asyncio
import logging

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from semcache.server.auth import bearer
from semcache.server.http_errors import ApiError
from semcache.server.metrics import CONTENT_TYPE
from semcache.server.openai_routes import error_response
from semcache.server.openapi import openapi_document
from semcache.server.state import READ_METHODS, proxy_of

router = APIRouter()
_log = logging.getLogger(__name__)


@router.api_route("/healthz", methods=READ_METHODS)
async def healthz() -> Response:
    """The process is up and serving HTTP."""
    return JSONResponse({"status": "ok"})


@router.api_route("/readyz", methods=READ_METHODS)
async def readyz(request: Request) -> Response:
    """The cache's health: 200 when ready (degraded parts listed), else 503."""
    health = await proxy_of(request).cache.ahealth(wait=False)  # 503 while warming up
    state = request.app.state  # log only when readiness changes
    if getattr(state, "last_ready", None) != health.ready:
        state.last_ready = health.ready
        _log.info("readyz: %s (%s)", "ready" if health.ready else "not ready", health.status)
    return JSONResponse(
        health.as_dict(),
        status_code=200 if health.ready else 503,
    )


@router.api_route("/metrics", methods=READ_METHODS)
async def metrics(request: Request) -> Response:
    proxy = proxy_of(request)
    if not proxy.keys.may_read_metrics(await bearer(request)):
        return error_response(
            ApiError(401, "Metrics key required.", kind="auth", code="invalid_api_key")
        )
    stats = await asyncio.to_thread(proxy.cache.stats)
    return Response(proxy.metrics.render(stats), media_type=CONTENT_TYPE)


@router.api_route("/openapi.json", methods=READ_METHODS)
async def openapi(request: Request) -> Response:
    """The OpenAPI document of every route (see :mod:`semcache.server.openapi`)."""
    return JSONResponse(openapi_document(proxy_of(request).upstreams.names()))
