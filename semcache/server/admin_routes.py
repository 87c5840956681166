"""The admin API, behind its own key: purge entries, read stats, audit recent entries.

The cache's admin operations block (they wait on the store), so they run in a worker
thread and never stall the event loop that serves completions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import asdict, fields, is_dataclass
from typing import Any, TypeVar

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from semcache.core.policy import validate_tenant
from semcache.errors import SemcacheError
from semcache.server.auth import bearer
from semcache.server.http_errors import (
    ApiError,
    admin_unauthorized,
    invalid_request,
    to_api_error,
)
from semcache.server.openai_routes import error_response
from semcache.server.state import READ_METHODS, Proxy, proxy_of

router = APIRouter(prefix="/admin")

MAX_ENTRIES_LIMIT = 1000

BodyT = TypeVar("BodyT", bound=BaseModel)


class PurgeRequest(BaseModel):
    """Which entries to delete: all that match every given field, or all with ``all``."""

    model_config = ConfigDict(extra="forbid")

    tenant: str | None = Field(None, min_length=1)
    namespace: str | None = Field(None, min_length=1)
    model: str | None = Field(
        None, min_length=1, description="Public model name or provider model."
    )
    all: bool = Field(
        False, strict=True, description="Required to purge without any filter (JSON true)."
    )

    @model_validator(mode="after")
    def _some_filter(self) -> PurgeRequest:
        filters = (self.tenant, self.namespace, self.model)
        if not self.all and all(value is None for value in filters):
            raise ValueError("give tenant, namespace or model, or all=true to purge everything")
        return self


async def _require_admin(request: Request) -> Proxy:
    proxy = proxy_of(request)
    if not proxy.keys.is_admin(await bearer(request)):
        raise admin_unauthorized(proxy.keys.admin_enabled)
    return proxy


def _validation_error(exc: ValidationError) -> ApiError:
    error = exc.errors(include_url=False, include_input=False)[0]
    field = ".".join(str(part) for part in error["loc"]) or "body"
    return invalid_request(field, error["msg"])


async def _body(request: Request, schema: type[BodyT]) -> BodyT:
    """The JSON body as ``schema`` (an empty body is ``{}``); a 400 naming the first bad field."""
    try:
        return schema.model_validate_json(await request.body() or b"{}")
    except ValidationError as exc:
        raise _validation_error(exc) from None


def _int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """Query parameter ``name`` as an integer from ``low`` to ``high``; a 400 naming it."""
    raw = request.query_params.get(name, str(default))
    try:
        value = int(raw)
    except ValueError:
        raise invalid_request(name, f"expected an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise invalid_request(name, f"expected {low} to {high}, got {value}")
    return value


def _tenant_param(request: Request) -> str | None:
    """Query parameter ``tenant``: None when absent (every tenant); an empty or non-text one
    is a 400 naming it, never read as "every tenant"."""
    tenant = request.query_params.get("tenant")
    return None if tenant is None else validate_tenant(tenant)


async def _purge(request: Request) -> dict[str, Any]:
    proxy = await _require_admin(request)
    body = await _body(request, PurgeRequest)
    model = None if body.model is None else proxy.upstreams.provider_model(body.model)
    deleted = await asyncio.to_thread(
        proxy.cache.purge, tenant=body.tenant, namespace=body.namespace, model=model
    )
    return {"deleted": deleted}


async def _entries(request: Request) -> dict[str, Any]:
    proxy = await _require_admin(request)
    tenant = _tenant_param(request)
    limit = _int_param(request, "limit", 50, 1, MAX_ENTRIES_LIMIT)
    entries = await asyncio.to_thread(proxy.cache.recent_entries, tenant=tenant, limit=limit)
    return {"object": "list", "data": [asdict(e) for e in entries]}


async def _stats(request: Request) -> dict[str, Any]:
    proxy = await _require_admin(request)
    stats = await asyncio.to_thread(proxy.cache.stats)
    return {**_plain(stats), "hit_rate": stats.hit_rate}


def _plain(value: Any) -> Any:
    """Typed stats as JSON-ready values: dataclasses and read-only mapping views become dicts
    (``dataclasses.asdict`` cannot copy a ``MappingProxyType``)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


async def _answer(request: Request, handler: Any) -> Response:
    try:
        return JSONResponse(await handler(request))
    except (ApiError, SemcacheError) as exc:
        proxy = proxy_of(request)
        error = to_api_error(exc, proxy.upstreams.redact)
        proxy.metrics.record_error(kind=error.kind, status=error.status)
        return error_response(error)


@router.post("/purge")
async def purge(request: Request) -> Response:
    return await _answer(request, _purge)


@router.api_route("/entries", methods=READ_METHODS)
async def entries(request: Request) -> Response:
    return await _answer(request, _entries)


@router.api_route("/stats", methods=READ_METHODS)
async def stats(request: Request) -> Response:
    return await _answer(request, _stats)
