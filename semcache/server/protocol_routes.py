"""``POST /v1/responses`` (OpenAI Responses) and ``POST /v1/messages`` (Anthropic Messages).

Each route does what the chat route does (the key decides the tenant, the body is read and
checked, the public model name is mapped to its upstream, ``x-semcache-*`` headers say how
the answer was found, one log line and one metrics record per request) and answers through
``SemanticCache.aresponses`` / ``amessages``: the same request path as chat, the answer in the
protocol's own body or event stream (``event: <type>`` / ``data: <json>`` frames). Errors
keep the protocol's shape: OpenAI's ``{"error": {...}}`` on Responses, Anthropic's
``{"type": "error", "error": {...}}`` on Messages, mid-stream as an ``error`` event. The
Messages route also takes Anthropic's ``x-api-key`` header as the client key.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import APIRouter
from sse_starlette import EventSourceResponse
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response

from semcache.facade.streams import AsyncBatchStream
from semcache.protocols import MESSAGES, RESPONSES, Protocol
from semcache.server import sse
from semcache.server.auth import bearer
from semcache.server.http_errors import ApiError, to_api_error
from semcache.server.openai_routes import (
    CLIENT_CLOSED,
    Exchange,
    _cache_headers,
    _close,
    admit,
)
from semcache.server.request import BodyShape, ParsedRequest, parse_request
from semcache.server.state import Proxy, proxy_of
from semcache.stats import CacheInfo, Tier, cache_info

router = APIRouter()

#: Anthropic's error type for each status (its clients branch on the status; the type is
#: what its documentation lists).
ANTHROPIC_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    499: "client_closed_request",
    503: "overloaded_error",
    529: "overloaded_error",
}


def openai_error(error: ApiError) -> dict[str, Any]:
    return error.body()


def anthropic_error(error: ApiError) -> dict[str, Any]:
    message = error.message
    if error.param is not None and error.param not in message:
        message = f"{error.param}: {message}"
    kind = ANTHROPIC_ERROR_TYPES.get(error.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


async def bearer_or_api_key(request: HTTPConnection) -> str | None:
    """The client key: ``Authorization: Bearer`` or Anthropic's ``x-api-key``."""
    token = await bearer(request)
    return token if token is not None else request.headers.get("x-api-key")


@dataclass(frozen=True, slots=True)
class Route:
    """One protocol's route: its adapter, required body field, error shape and key header."""

    protocol: Protocol
    required: str
    error_body: Callable[[ApiError], dict[str, Any]]
    credentials: Callable[[HTTPConnection], Any]

    def parse(self, body: Any, headers: Mapping[str, str]) -> ParsedRequest:
        shape = BodyShape(self.protocol.fields, required=self.required, streams=True)
        return parse_request(body, headers, shape)

    def error(self, error: ApiError, headers: Mapping[str, str] | None = None) -> JSONResponse:
        return JSONResponse(self.error_body(error), status_code=error.status, headers=headers)


RESPONSES_ROUTE = Route(RESPONSES, "input", openai_error, bearer)
MESSAGES_ROUTE = Route(MESSAGES, "messages", anthropic_error, bearer_or_api_key)


@router.post("/v1/responses")
async def responses(request: Request) -> Response:
    return await _serve(request, RESPONSES_ROUTE)


@router.post("/v1/messages")
async def messages(request: Request) -> Response:
    return await _serve(request, MESSAGES_ROUTE)


async def _serve(request: Request, route: Route) -> Response:
    proxy = proxy_of(request)
    exchange = Exchange(proxy, request.url.path)
    call = proxy.cache.aresponses if route.protocol is RESPONSES else proxy.cache.amessages
    try:
        parsed, kwargs = await admit(request, exchange, route.parse, route.credentials)
        kwargs["stream"] = parsed.stream
        if parsed.stream:
            return await _start_stream(proxy, route, await call(**kwargs), exchange)
        reply = await call(**kwargs)
    # the request boundary: every failure in the protocol's shape (a cancel: the shutdown's 503)
    except (Exception, asyncio.CancelledError) as exc:
        error = to_api_error(exc, proxy.upstreams.redact)
        exchange.fail(error)
        return route.error(error)
    info = cache_info(reply) or CacheInfo(tier=Tier.MISS)
    exchange.succeed(info)
    return Response(
        orjson.dumps(reply), media_type="application/json", headers=_cache_headers(info)
    )


async def _start_stream(proxy: Proxy, route: Route, stream: Any, exchange: Exchange) -> Response:
    replayed = stream.replayed() if isinstance(stream, AsyncBatchStream) else None
    if replayed is not None:  # a memory hit: every event is here, sent as one body
        info = cache_info(stream) or CacheInfo(tier=Tier.MISS)
        exchange.succeed(info)
        headers = {**_cache_headers(info), **sse.EVENT_STREAM_HEADERS}
        return Response(frames(replayed), media_type="text/event-stream", headers=headers)
    try:
        first = await stream.next_batch()  # errors before any byte was sent keep their status
    except StopAsyncIteration:
        first = None
    except BaseException:
        await _close(stream)
        raise
    info = cache_info(stream) or CacheInfo(tier=Tier.MISS)
    headers = {**_cache_headers(info), "cache-control": "no-cache"}
    events = _events(proxy, route, stream, first, info, exchange)
    grace = proxy.config.server.graceful_shutdown_s
    return EventSourceResponse(events, headers=headers, sep="\n", shutdown_grace_period=grace)


def frames(events: list[dict[str, Any]]) -> bytes:
    """``event: <type>`` / ``data: <json>`` frames of ``events``, written together: the events
    one chat chunk makes go out in one send."""
    return b"".join(
        b"event: %s\ndata: %s\n\n" % (str(event.get("type")).encode(), orjson.dumps(event))
        for event in events
    )


async def _events(
    proxy: Proxy, route: Route, stream: Any, first: Any, info: CacheInfo, exchange: Exchange
) -> AsyncIterator[bytes]:
    finished = False
    try:
        batch = first
        while batch is not None:
            yield frames(batch)
            try:
                batch = await stream.next_batch()
            except StopAsyncIteration:
                batch = None
        finished = True
        exchange.succeed(cache_info(stream) or info)  # a miss's final info, when it came
    except Exception as exc:  # headers are out: the error travels as the last event
        error = to_api_error(exc, proxy.upstreams.redact)
        finished = True
        exchange.fail(error, info)
        body = route.error_body(error)
        if route.protocol is RESPONSES:
            inner = body["error"]
            body = {"type": "error", "message": inner["message"], "code": inner["code"]}
            body["param"] = inner["param"]
        yield frames([body])
    finally:
        if not finished:
            closed = ApiError(CLIENT_CLOSED, "client closed the stream", kind="client_closed")
            exchange.fail(closed, info)
        await _close(stream)
