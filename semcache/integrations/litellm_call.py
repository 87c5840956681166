"""One LiteLLM call as semcache sees it in LiteLLM's cache slot: its arguments and its tenant.

LiteLLM passes different internal arguments to the slot's lookup and to its store; only what
changes the answer is kept, so both compute one key. Behind LiteLLM's proxy the authenticated
caller (key hash, team, org) decides the tenant and ``metadata["tenant"]`` only narrows inside
it; without the proxy ``metadata["tenant"]`` is the tenant.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from litellm import ModelResponse
from litellm.types.proxy.auth.user_api_key_auth import UserAPIKeyAuth
from litellm.types.utils import is_litellm_owned_kwarg

#: LiteLLM-owned parameters that still change the answer (which server, which provider).
KEPT_LITELLM_PARAMS = frozenset({"api_base", "api_version", "custom_llm_provider"})

#: Bookkeeping LiteLLM adds between lookup and store that is not one of its owned names.
DROPPED_PARAMS = frozenset({"parent_otel_span", "dynamic_cache_object"})

#: LiteLLM proxy's caller identity, the partition its own semantic caches use.
PROXY_SCOPE_FIELDS = ("user_api_key", "user_api_key_team_id", "user_api_key_org_id")


def semcache_call(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``SemanticCache.check`` / ``store`` arguments for one LiteLLM call's kwargs.

    LiteLLM passes different internal kwargs to the lookup and to the store (a preset key,
    a tracing span, its logging object); only what changes the answer is kept, so both
    compute the same semcache key.
    """
    params = {
        name: value
        for name, value in kwargs.items()
        if name not in DROPPED_PARAMS
        and (name in KEPT_LITELLM_PARAMS or not is_litellm_owned_kwarg(name))
    }
    control = kwargs.get("cache")
    if isinstance(control, Mapping):
        params["cache"] = {k: v for k, v in control.items() if k != "use-cache"}
    tenant = tenant_of(kwargs)
    if tenant is not None:
        params["tenant"] = tenant
    return params


def tenant_of(kwargs: Mapping[str, Any]) -> str | None:
    """The tenant of one LiteLLM call: the authenticated identity, narrowed by a claimed
    ``metadata["tenant"]`` (``<identity>/<claimed>``), else the claim alone, else None."""
    sources = _metadata_sources(kwargs)
    identity = authenticated_identity(sources)
    claimed = next((s["tenant"] for s in sources if s.get("tenant") is not None), None)
    if identity is None:
        return None if claimed is None else str(claimed)
    return identity if claimed is None else f"{identity}/{claimed}"


def authenticated_identity(sources: list[Mapping[str, Any]]) -> str | None:
    """``litellm:user_api_key=..;user_api_key_team_id=..;user_api_key_org_id=..`` or None.

    Only the metadata dict holding LiteLLM proxy's ``UserAPIKeyAuth`` object is read (a JSON
    body cannot hold that object), so a forged ``litellm_metadata`` team id is ignored; without
    it (no proxy) the first dict holding any identity field is read whole. Values are
    percent-escaped, so ``<identity>/<claimed>`` cannot equal another identity.
    """
    proxied = next(
        (s for s in sources if isinstance(s.get("user_api_key_auth"), UserAPIKeyAuth)), None
    )
    if proxied is not None:
        auth = proxied["user_api_key_auth"]
        values = (proxied.get("user_api_key") or auth.api_key, auth.team_id, auth.org_id)
        fields = [(n, v) for n, v in zip(PROXY_SCOPE_FIELDS, values, strict=True) if v is not None]
        return _identity(fields) if fields else "litellm:anonymous"
    for source in sources:
        fields = [(n, source[n]) for n in PROXY_SCOPE_FIELDS if source.get(n) is not None]
        if fields:
            return _identity(fields)
    return None


def _identity(fields: list[tuple[str, Any]]) -> str:
    return "litellm:" + ";".join(f"{name}={quote(str(value), safe='')}" for name, value in fields)


def _metadata_sources(kwargs: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    sources = [kwargs.get("metadata"), kwargs.get("litellm_metadata")]
    litellm_params = kwargs.get("litellm_params")
    if isinstance(litellm_params, Mapping):
        sources += [litellm_params.get("metadata"), litellm_params.get("litellm_metadata")]
    return [s for s in sources if isinstance(s, Mapping)]


def as_model_response(result: Any) -> ModelResponse | None:
    """The chat answer LiteLLM hands to ``add_cache``: an object on the sync path, its JSON
    (``model_dump_json``) on the async path; None for anything else."""
    if isinstance(result, ModelResponse):
        return result
    if isinstance(result, (str, bytes)):
        try:
            data = json.loads(result)
        except ValueError:
            return None
        if isinstance(data, dict) and data.get("object") == "chat.completion":
            return ModelResponse(**data)
    return None
