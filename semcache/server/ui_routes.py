"""The dashboard: ``GET /ui`` (one static page, no build step, nothing loaded from
outside) and the admin JSON it reads and writes.

The page holds no data: it asks for the admin key (kept in the tab's session storage)
and reads everything from ``GET /admin/dashboard`` with it, so what it shows is behind
the admin key like every admin route. ``POST /admin/dashboard/labels`` records an
operator's yes / no on a near miss (into ``tuning.labels_path``, where ``semcache
calibrate --labels`` reads it); "apply" is ``POST /admin/threshold``, the route
``semcache calibrate --apply --reload-url`` uses.
"""

from __future__ import annotations

import asyncio
from functools import lru_cache
from importlib import resources
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from semcache.observe.dashboard import document
from semcache.observe.lookups import RECENT_BUCKETS
from semcache.server.admin_routes import _answer, _body, _int_param, _require_admin, _tenant_param
from semcache.server.state import READ_METHODS

router = APIRouter()

#: The most time buckets ``GET /admin/dashboard?buckets=N`` returns.
MAX_BUCKETS = 100_000

#: The page may load only what it carries inline, and talk only to its own origin.
_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)


class LabelRequest(BaseModel):
    """``id``: a near miss's id from ``GET /admin/dashboard``; ``correct``: whether its
    stored answer would have been right for the query."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200)
    correct: bool = Field(strict=True)


@lru_cache(maxsize=1)
def page() -> str:
    return resources.files("semcache.server").joinpath("dashboard.html").read_text("utf-8")


async def _dashboard(request: Request) -> dict[str, Any]:
    proxy = await _require_admin(request)
    tenant = _tenant_param(request)
    buckets = _int_param(request, "buckets", RECENT_BUCKETS, 1, MAX_BUCKETS)
    return await asyncio.to_thread(document, proxy.cache, tenant=tenant, buckets=buckets)


async def _label(request: Request) -> dict[str, Any]:
    proxy = await _require_admin(request)
    body = await _body(request, LabelRequest)
    pair = await asyncio.to_thread(proxy.cache.label_near_miss, body.id, body.correct)
    return {"object": "label", **pair.row()}


@router.get("/ui")
async def ui() -> Response:
    return HTMLResponse(
        page(),
        headers={
            "content-security-policy": _POLICY,
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
        },
    )


@router.api_route("/admin/dashboard", methods=READ_METHODS)
async def dashboard(request: Request) -> Response:
    return await _answer(request, _dashboard)


@router.post("/admin/dashboard/labels")
async def label(request: Request) -> Response:
    return await _answer(request, _label)
