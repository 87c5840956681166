"""The tuning loop's endpoints: client feedback, and the admin's misses, labels and thresholds.

``POST /v1/feedback`` is authenticated like chat: an answer served to another tenant is "not
found" (404), as an unknown one is, so a tenant can neither mark nor probe another's entries.
Behind the admin key: ``GET /admin/misses``, ``GET /admin/labels``, ``POST /admin/reload``,
and ``GET``/``POST /admin/threshold``, the one source of truth for the threshold served now.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import Response

from semcache.config.settings import CacheSettings
from semcache.errors import UnknownServe
from semcache.server.admin_routes import (
    _answer,
    _body,
    _int_param,
    _plain,
    _require_admin,
    _tenant_param,
)
from semcache.server.auth import bearer
from semcache.server.http_errors import ApiError, unauthorized
from semcache.server.state import READ_METHODS, proxy_of

router = APIRouter()

#: ``app.state`` attribute holding the callable that re-reads the cache settings on reload.
SETTINGS_SOURCE = "cache_settings_source"


class FeedbackRequest(BaseModel):
    """``id``: the ``x-semcache-serve-id`` of a semantic hit, or the ``x-semcache-key`` of a
    cached answer; ``correct``: whether the answer was right for the question."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200)
    correct: bool = Field(strict=True)


class ThresholdRequest(BaseModel):
    """``threshold``: cosine similarity, a hit when >=; ``namespace``: set only that
    namespace's override (default: the default threshold)."""

    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(strict=True, ge=0.0, le=1.0)
    namespace: str | None = Field(default=None, min_length=1, max_length=200)


def _served(proxy: Any) -> dict[str, Any]:
    threshold, namespaces = proxy.cache.served_thresholds()
    return {"object": "threshold", "threshold": threshold, "namespace_thresholds": namespaces}


async def _threshold(request: Request) -> dict[str, Any]:
    return _served(await _require_admin(request))


async def _set_threshold(request: Request) -> dict[str, Any]:
    proxy = await _require_admin(request)
    body = await _body(request, ThresholdRequest)
    change = proxy.cache.serve_threshold(body.threshold, body.namespace)
    return {**_served(proxy), "changed": change.changed, **asdict(change)}


async def _feedback(request: Request) -> dict[str, Any]:
    proxy = proxy_of(request)
    tenant = proxy.keys.tenant_for(await bearer(request))
    if tenant is None:
        raise unauthorized()
    body = await _body(request, FeedbackRequest)
    try:
        result = await proxy.cache.afeedback(body.id, body.correct, tenant=tenant)
    except UnknownServe as exc:  # its message says where serve ids are known
        raise ApiError(
            404,
            f"No answer with this id was served to you recently: {exc.problem}.",
            kind="feedback",
            param="id",
            code="not_found",
        ) from None
    return {
        "object": "feedback",
        "correct": result.correct,
        "withdrawn": result.withdrawn,
        "labeled": result.labeled,
    }


async def _misses(request: Request) -> dict[str, Any]:
    proxy = await _require_admin(request)
    tenant = _tenant_param(request)
    min_count = _int_param(request, "min_count", 1, 1, 1_000_000)
    clusters = proxy.cache.misses(tenant=tenant, min_count=min_count)
    return {
        "object": "misses",
        "clusters": [_plain(c) for c in clusters],
        "rows": proxy.cache.miss_rows(tenant=tenant),
    }


async def _labels(request: Request) -> dict[str, Any]:
    proxy = await _require_admin(request)
    return {"object": "list", "data": [pair.row() for pair in proxy.cache.labeled_pairs()]}


async def _reload(request: Request) -> dict[str, Any]:
    proxy = await _require_admin(request)
    source: Callable[[], CacheSettings] = getattr(request.app.state, SETTINGS_SOURCE, CacheSettings)
    settings = await asyncio.to_thread(source)
    change = proxy.cache.apply_thresholds(settings)
    return {"object": "reload", "changed": change.changed, **asdict(change)}


@router.post("/v1/feedback")
async def feedback(request: Request) -> Response:
    return await _answer(request, _feedback)


@router.api_route("/admin/misses", methods=READ_METHODS)
async def misses(request: Request) -> Response:
    return await _answer(request, _misses)


@router.api_route("/admin/labels", methods=READ_METHODS)
async def labels(request: Request) -> Response:
    return await _answer(request, _labels)


@router.post("/admin/reload")
async def reload(request: Request) -> Response:
    return await _answer(request, _reload)


@router.api_route("/admin/threshold", methods=[*READ_METHODS, "POST"])
async def threshold(request: Request) -> Response:
    """One route for reading and setting, so a 405 lists every method the path takes."""
    if request.method == "POST":
        return await _answer(request, _set_threshold)
    return await _answer(request, _threshold)
