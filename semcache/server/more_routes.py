"""The rest of the OpenAI surface: ``/v1/embeddings``, ``/v1/completions``, un-prefixed paths.

- ``POST /v1/embeddings``: ``SemanticCache.aembedding`` (exact tier) for the model configured
  under the requested name, in the caller's tenant.
- ``POST /v1/completions``: a legacy text completion served by the chat model configured
  under that name (the prompt becomes one user message, so the exact and semantic tiers
  apply); answered in the ``text_completion`` format. Not streamed (use chat for that).
- Every OpenAI route also answers without the ``/v1`` prefix (``/chat/completions``, ...),
  as clients built with ``base_url`` set to the server root expect.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import orjson
from fastapi import APIRouter
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from semcache.server.http_errors import to_api_error
from semcache.server.openai_routes import Exchange, Parser, _cache_headers, admit, error_response
from semcache.server.request import parse_completion_request, parse_embedding_request
from semcache.server.state import proxy_of
from semcache.stats import CacheInfo, Tier, cache_info

if TYPE_CHECKING:
    from litellm import ModelResponse

    from semcache.server.state import Proxy

router = APIRouter()

Answer = Callable[["Proxy", dict[str, Any], str], Awaitable[tuple[Any, dict[str, Any]]]]
"""``(proxy, call arguments, public model name)`` -> the answer and its JSON payload."""


async def _serve(request: Request, parse: Parser, answer: Answer) -> Response:
    proxy = proxy_of(request)
    exchange = Exchange(proxy, request.url.path)
    try:
        parsed, kwargs = await admit(request, exchange, parse)
        result, payload = await answer(proxy, kwargs, parsed.model)
    # the request boundary: every failure becomes an OpenAI error (a cancel: the shutdown's 503)
    except (Exception, asyncio.CancelledError) as exc:
        error = to_api_error(exc, proxy.upstreams.redact)
        exchange.fail(error)
        return error_response(error)
    info = cache_info(result) or CacheInfo(tier=Tier.MISS)
    exchange.succeed(info)
    payload["model"] = parsed.model
    return Response(
        orjson.dumps(payload), media_type="application/json", headers=_cache_headers(info)
    )


async def _embed(proxy: Proxy, kwargs: dict[str, Any], model: str) -> tuple[Any, dict[str, Any]]:
    embedded = await proxy.cache.aembedding(**proxy.upstreams.embedding_params(model, kwargs))
    return embedded, embedded.model_dump()


async def _complete(proxy: Proxy, kwargs: dict[str, Any], model: str) -> tuple[Any, dict[str, Any]]:
    response = cast("ModelResponse", await proxy.cache.acompletion(**kwargs))  # not streamed
    return response, text_completion(response.model_dump(), model)


def text_completion(chat: dict[str, Any], model: str) -> dict[str, Any]:
    """A chat completion in OpenAI's legacy ``text_completion`` shape."""
    choices = [
        {
            "text": (choice.get("message") or {}).get("content") or "",
            "index": choice.get("index", i),
            "logprobs": None,
            "finish_reason": choice.get("finish_reason"),
        }
        for i, choice in enumerate(chat.get("choices") or [])
    ]
    return {
        "id": chat.get("id"),
        "object": "text_completion",
        "created": chat.get("created"),
        "model": model,
        "choices": choices,
        "usage": chat.get("usage"),
    }


@router.post("/v1/embeddings")
async def embeddings(request: Request) -> Response:
    return await _serve(request, parse_embedding_request, _embed)


@router.post("/v1/completions")
async def completions(request: Request) -> Response:
    return await _serve(request, parse_completion_request, _complete)


def unprefixed(*routers: APIRouter) -> APIRouter:
    """The ``/v1/...`` routes of ``routers`` again, at their paths without the prefix."""
    out = APIRouter()
    for source in routers:
        for route in source.routes:
            if isinstance(route, APIRoute) and route.path.startswith("/v1/"):
                out.add_api_route(
                    route.path.removeprefix("/v1"),
                    route.endpoint,
                    methods=sorted(route.methods or ()),
                    include_in_schema=False,
                )
    return out
