"""Operations endpoints: liveness, readiness and Prometheus metrics (no auth, no tenant data)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from semcache.server.metrics import CONTENT_TYPE
from semcache.server.state import proxy_of

router = APIRouter()


@router.get("/healthz")
async def healthz() -> Response:
    """The process is up and serving HTTP."""
    return JSONResponse({"status": "ok"})


@router.get("/readyz")
async def readyz(request: Request) -> Response:
    """The cache can answer: store opened and embedder loaded (503 until then)."""
    ready = await asyncio.to_thread(proxy_of(request).cache.ready)
    return JSONResponse({"ready": ready}, status_code=200 if ready else 503)


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    proxy = proxy_of(request)
    stats = await asyncio.to_thread(proxy.cache.stats)
    return Response(proxy.metrics.render(stats), media_type=CONTENT_TYPE)
