"""The OpenAI-compatible endpoints: ``POST /v1/chat/completions`` and ``GET /v1/models``.

A chat request is authenticated (the key decides the tenant), validated, mapped from its
public model name to the configured upstream and answered by ``SemanticCache.acompletion``.
How it was answered travels back in ``x-semcache-tier``, ``x-semcache-similarity`` and
``x-semcache-key`` (and, for a ``coalesced`` answer, ``x-semcache-origin``: the tier the
shared answer came from); for a stream the first chunk is awaited before the headers are sent, so
the tier is known and an upstream error still gets its own HTTP status.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, cast

import anyio
import orjson
from fastapi import APIRouter
from sse_starlette import EventSourceResponse
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from semcache.errors import InvalidRequest
from semcache.facade.streams import ReplayStream
from semcache.server import sse
from semcache.server.access_log import log_request
from semcache.server.auth import bearer
from semcache.server.config import ServerOptions
from semcache.server.http_errors import ApiError, model_not_found, to_api_error, unauthorized
from semcache.server.request import ParsedRequest, parse_chat_request
from semcache.server.state import READ_METHODS, Proxy, proxy_of
from semcache.server.validate import check_depth, whole_numbers
from semcache.stats import CacheInfo, Tier, cache_info

router = APIRouter()
logger = logging.getLogger(__name__)

#: Status logged when the client went away before the answer was complete (nginx's 499).
CLIENT_CLOSED = 499


class Exchange:
    """One request's bookkeeping: ends in exactly one log line and one metrics record."""

    def __init__(self, proxy: Proxy, path: str) -> None:
        self.proxy = proxy
        self.started = time.perf_counter()
        self.fields: dict[str, Any] = {"path": path, "tenant": None, "model": None}

    def succeed(self, info: CacheInfo, *, answer: str | None = None) -> None:
        latency_s = time.perf_counter() - self.started
        tenant, model = self.fields["tenant"], self.fields["model"]
        self.proxy.metrics.record_request(
            tenant=tenant, model=model, info=info, latency_s=latency_s
        )
        if answer is not None and self.proxy.config.server.log_content:
            self.fields["answer"] = answer
        self._log(
            status=200,
            latency_s=latency_s,
            tier=info.tier,
            similarity=info.similarity,
            upstream_status=200 if info.tier.used_upstream else None,
        )

    def fail(self, error: ApiError, info: CacheInfo | None = None) -> None:
        """Count and log a failure; ``info`` when it happened after the tier was known."""
        self.proxy.metrics.record_error(kind=error.kind, status=error.status)
        if info is not None:
            self.fields.update(tier=info.tier, similarity=info.similarity)
        self._log(
            status=error.status,
            latency_s=time.perf_counter() - self.started,
            error=error.kind,
            upstream_status=error.status if error.kind == "upstream" else None,
        )

    def _log(self, *, latency_s: float, **fields: Any) -> None:
        log_request({**self.fields, **fields, "latency_ms": round(latency_s * 1000, 3)})


def _cache_headers(info: CacheInfo | None) -> dict[str, str]:
    if info is None:
        return {}
    headers = {"x-semcache-tier": str(info.tier)}
    if info.similarity is not None:
        headers["x-semcache-similarity"] = f"{info.similarity:.6f}"
    if info.key is not None:
        headers["x-semcache-key"] = info.key
    if info.serve_id is not None:
        headers["x-semcache-serve-id"] = info.serve_id
    if info.miss_reason is not None:
        headers["x-semcache-miss-reason"] = str(info.miss_reason)
    if info.origin is not None:  # a coalesced answer: the tier the shared answer came from
        headers["x-semcache-origin"] = str(info.origin)
    return headers


def error_response(error: ApiError, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=headers)


async def _json_body(request: Request, options: ServerOptions) -> Any:
    """The parsed body; 413 past ``max_body_bytes`` (before reading it whole), 408 when it has
    not all arrived within ``body_timeout_s``, 499 when the client hung up while sending it,
    400 when it is not JSON or nested deeper than ``max_json_depth``."""
    limit = options.max_body_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks, size = [], 0
    try:
        async with asyncio.timeout(options.body_timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                chunks.append(chunk)
    except TimeoutError:
        raise ApiError(
            408,
            f"Request body not received within {options.body_timeout_s:g} s "
            "(server.body_timeout_s).",
            kind="invalid_request",
            type="invalid_request_error",
            param="body",
            code="request_timeout",
        ) from None
    except ClientDisconnect:
        logger.info("client hung up while sending the request body (%d bytes read)", size)
        raise ApiError(
            CLIENT_CLOSED, "Client closed the connection mid-body.", kind="client_closed"
        ) from None
    try:
        body = orjson.loads(b"".join(chunks))
    except orjson.JSONDecodeError:
        raise InvalidRequest("body", "is not valid JSON") from None
    check_depth(body, options.max_json_depth)
    return whole_numbers(body)


def _too_large(limit: int) -> ApiError:
    return ApiError(
        413,
        f"Request body larger than {limit} bytes (server.max_body_bytes).",
        kind="invalid_request",
        type="invalid_request_error",
        param="body",
        code="request_too_large",
    )


Parser = Callable[[Any, Mapping[str, str]], ParsedRequest]
"""A route's body parser (:mod:`semcache.server.request`): ``(body, headers)``."""


async def admit(
    request: Request,
    exchange: Exchange,
    parse: Parser,
    credentials: Callable[[Request], Awaitable[str | None]] = bearer,
) -> tuple[ParsedRequest, dict[str, Any]]:
    """What every model route does first: authenticate (the key ``credentials`` reads
    decides the tenant), read and ``parse`` the body, map the public model name to its
    upstream. Returns the request and the cache call's arguments: the client's params, then
    what only the server decides (the upstream's parameters, the tenant), and the cache
    controls."""
    proxy = exchange.proxy
    tenant = proxy.keys.tenant_for(await credentials(request))
    if tenant is None:
        raise unauthorized()
    exchange.fields["tenant"] = tenant
    body = await _json_body(request, proxy.config.server)
    parsed = parse(body, request.headers)
    exchange.fields.update(model=parsed.model, stream=parsed.stream)
    upstream = proxy.upstreams.get(parsed.model)
    if upstream is None:
        raise model_not_found(parsed.model)
    kwargs = {**parsed.params, **upstream.call_params(), "tenant": tenant}
    if parsed.cache is not None:
        kwargs["cache"] = parsed.cache
    return parsed, kwargs


def _answer_text(response: Any) -> str | None:
    try:
        return cast(str | None, response.choices[0].message.content)
    except (AttributeError, IndexError):
        return None


@router.post("/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    proxy = proxy_of(request)
    exchange = Exchange(proxy, request.url.path)
    try:
        chat, kwargs = await admit(request, exchange, parse_chat_request)
        if proxy.config.server.log_content:
            exchange.fields["messages"] = chat.params.get("messages")
        kwargs["stream"] = chat.stream
        if chat.stream:
            return await _start_stream(proxy, kwargs, exchange)
        response = await proxy.cache.acompletion(**kwargs)
    # the request boundary: every failure becomes an OpenAI error (a cancel: the shutdown's 503)
    except (Exception, asyncio.CancelledError) as exc:
        error = to_api_error(exc, proxy.upstreams.redact)
        exchange.fail(error)
        return error_response(error)
    info = cache_info(response) or CacheInfo(tier=Tier.MISS)
    exchange.succeed(info, answer=_answer_text(response))
    return Response(
        sse.response_body(response), media_type="application/json", headers=_cache_headers(info)
    )


async def _close(stream: Any) -> None:
    """Leave the cache's stream (its flight goes on for other subscribers).

    When the client went away while a chunk was being fetched, that fetch is cancelled and
    its cancellation already leaves the flight; closing the generator meanwhile reports
    "already running", which means there is nothing left to close.
    """
    aclose = getattr(stream, "aclose", None)
    if aclose is None:
        return
    with anyio.CancelScope(shield=True):
        try:
            await aclose()
        except RuntimeError as exc:
            logger.debug("stream already closing: %s", exc)


async def _start_stream(proxy: Proxy, kwargs: dict[str, Any], exchange: Exchange) -> Response:
    stream = await proxy.cache.acompletion(**kwargs)
    if isinstance(stream, ReplayStream):
        return _replayed(stream, exchange)
    try:
        first = await anext(stream)  # errors before any byte was sent keep their status
    except StopAsyncIteration:
        first = None
    except BaseException:
        await _close(stream)
        raise
    info = cache_info(stream) or CacheInfo(tier=Tier.MISS)
    headers = {**_cache_headers(info), "cache-control": "no-cache"}
    events = _events(proxy, stream, first, info, exchange)
    # "\n" as OpenAI frames events; in-flight streams get the same grace as other requests
    # when the server stops (sse-starlette ends them after it).
    grace = proxy.config.server.graceful_shutdown_s
    return EventSourceResponse(events, headers=headers, sep="\n", shutdown_grace_period=grace)


def _replayed(stream: ReplayStream, exchange: Exchange) -> Response:
    """A memory hit's chunks, all here at once, as one body: one send, where a streamed
    response costs a task group and a send per chunk."""
    info = stream.cache_info or CacheInfo(tier=Tier.MISS)
    exchange.succeed(info)
    headers = {**_cache_headers(info), **sse.EVENT_STREAM_HEADERS}
    body = sse.whole_stream(stream.drain())
    return Response(body, media_type="text/event-stream", headers=headers)


async def _events(
    proxy: Proxy, stream: Any, first: Any, info: CacheInfo, exchange: Exchange
) -> AsyncIterator[str]:
    finished = False
    try:
        if first is not None:
            yield sse.data(sse.chunk_payload(first))
        async for chunk in stream:
            yield sse.data(sse.chunk_payload(chunk))
        yield sse.DONE
        finished = True
        exchange.succeed(cache_info(stream) or info)  # a miss's final info, when it came
    except Exception as exc:  # headers are out: the error travels as the last event
        error = to_api_error(exc, proxy.upstreams.redact)
        finished = True
        exchange.fail(error, info)
        yield sse.data(error.body())
    finally:
        if not finished:
            closed = ApiError(CLIENT_CLOSED, "client closed the stream", kind="client_closed")
            exchange.fail(closed, info)
        await _close(stream)


@router.api_route("/v1/models", methods=READ_METHODS)
async def list_models(request: Request) -> Response:
    proxy = proxy_of(request)
    if proxy.keys.tenant_for(await bearer(request)) is None:
        return error_response(unauthorized())
    data = [
        {"id": name, "object": "model", "created": 0, "owned_by": "semcache"}
        for name in proxy.upstreams.names()
    ]
    return JSONResponse({"object": "list", "data": data})
