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

from typing import TYPE_CHECKING, Any, cast

import orjson
from fastapi import APIRouter
from fastapi.routing import APIRoute
from litellm import ModelResponse
from starlette.requests import Request
from starlette.responses import Response

from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.server.http_errors import model_not_found, to_api_error, unauthorized
from semcache.server.openai_routes import Exchange, _cache_headers, _json_body, error_response
from semcache.server.request import cache_controls
from semcache.server.state import Proxy, proxy_of
from semcache.stats import CacheInfo, Tier, cache_info

if TYPE_CHECKING:
    from litellm import ModelResponse

router = APIRouter()

#: Fields of OpenAI's embeddings request passed on to LiteLLM.
EMBEDDING_FIELDS = frozenset({"input", "dimensions", "encoding_format", "user"})

#: Fields of OpenAI's legacy completions request that have a chat equivalent.
COMPLETION_FIELDS = frozenset(
    {"prompt", "max_tokens", "temperature", "top_p", "n", "stop", "presence_penalty",
     "frequency_penalty", "seed", "user", "logit_bias"}
)  # fmt: skip


def _parse(body: Any, fields: frozenset[str], required: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(body, dict):
        raise InvalidRequestType("body", "expected a JSON object")
    if "tenant" in body:
        raise InvalidRequest("tenant", "the tenant is set by the API key and cannot be chosen")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequestType("model", f"expected a model name, got {model!r}")
    if body.get("stream"):
        raise InvalidRequest("stream", "not supported on this route; use /v1/chat/completions")
    params = {}
    for name, value in body.items():
        if name in {"model", "stream", "cache"}:
            continue
        if name not in fields:
            raise InvalidRequest(name, "unrecognized request argument")
        params[name] = value
    if required not in params:
        raise InvalidRequest(required, "is required")
    return model, params


async def _serve(request: Request, kind: str) -> Response:
    proxy: Proxy = proxy_of(request)
    exchange = Exchange(proxy, request.url.path)
    try:
        tenant = proxy.keys.tenant_for(request.headers.get("authorization"))
        if tenant is None:
            raise unauthorized()
        exchange.fields["tenant"] = tenant
        body = await _json_body(request, proxy.config.server)
        fields, required = (
            (EMBEDDING_FIELDS, "input") if kind == "embeddings" else (COMPLETION_FIELDS, "prompt")
        )
        model, params = _parse(body, fields, required)
        exchange.fields["model"] = model
        upstream = proxy.upstreams.get(model)
        if upstream is None:
            raise model_not_found(model)
        kwargs: dict[str, Any] = {**params, **upstream.call_params(), "tenant": tenant}
        controls = cache_controls(request.headers, body.get("cache"))
        if controls is not None:
            kwargs["cache"] = controls
        if kind == "embeddings":
            embedded = await proxy.cache.aembedding(**kwargs)
            info, payload = cache_info(embedded), embedded.model_dump()
        else:
            kwargs["messages"] = [{"role": "user", "content": _prompt(kwargs.pop("prompt"))}]
            response = cast(
                "ModelResponse", await proxy.cache.acompletion(**kwargs)
            )  # not streamed
            info, payload = cache_info(response), text_completion(response.model_dump(), model)
    except Exception as exc:  # the request boundary: every failure becomes an OpenAI error
        error = to_api_error(exc, proxy.upstreams.redact)
        exchange.fail(error)
        return error_response(error)
    info = info or CacheInfo(tier=Tier.MISS)
    exchange.succeed(info)
    payload["model"] = model
    return Response(
        orjson.dumps(payload), media_type="application/json", headers=_cache_headers(info)
    )


def _prompt(prompt: Any) -> str:
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str) or not prompt:
        raise InvalidRequestType("prompt", "expected one non-empty string")
    return prompt


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
    return await _serve(request, "embeddings")


@router.post("/v1/completions")
async def completions(request: Request) -> Response:
    return await _serve(request, "completions")


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
