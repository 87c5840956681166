"""semcache as LiteLLM's own cache: ``litellm.cache = LiteLLMCache(SemanticCache())``.

Plain ``litellm.completion`` / ``acompletion`` (streamed or not) look up semcache's tiers
before calling the provider and store complete answers after it; LiteLLM's per-request
controls (``no-cache``, ``no-store``, ``ttl``, ``s-maxage``, ``namespace``, ``use-cache``)
keep their meaning. A ``Cache`` subclass, not a ``BaseCache`` backend, because a backend sees
only LiteLLM's hashed key and cannot compute semcache's key nor partition by tenant. Not
coalesced: LiteLLM looks up and stores in two calls with no failure signal in between.

Behind LiteLLM's proxy the authenticated caller (key hash, team, org) decides the tenant and
``metadata["tenant"]`` only narrows inside it; without the proxy ``metadata["tenant"]`` is
the tenant. ``litellm.cache.feedback(response, correct=False)`` withdraws a wrong answer for
the tenant it was served to (:mod:`semcache.integrations.litellm_served`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from litellm import ModelResponse
from litellm.caching.caching import Cache, CacheMode, LiteLLMCacheType
from litellm.types.proxy.auth.user_api_key_auth import UserAPIKeyAuth
from litellm.types.utils import is_litellm_owned_kwarg

from semcache.errors import InvalidRequest, UnknownServe
from semcache.integrations.litellm_served import SERVED, SlotServe
from semcache.stats import CacheHit, CacheInfo, MissReason, Tier

if TYPE_CHECKING:
    from litellm.caching.base_cache import BaseCache

    from semcache.cache import SemanticCache
    from semcache.tuning.results import FeedbackResult

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


class LiteLLMCache(Cache):
    """A LiteLLM ``Cache`` whose tiers are a ``SemanticCache``'s.

    ``mode="default_off"`` makes caching opt-in per call (``cache={"use-cache": True}``).
    ``max_messages`` is LiteLLM's limit on conversation length (None: no limit; semcache
    keys every turn, so long conversations are safe to cache).
    """

    def __init__(
        self,
        cache: SemanticCache | None = None,
        *,
        mode: str = "default_on",
        max_messages: int | None = None,
    ) -> None:
        super().__init__(
            type=LiteLLMCacheType.LOCAL,
            mode=CacheMode(mode),
            max_messages=max_messages,
            supported_call_types=["completion", "acompletion"],
        )
        if cache is None:
            from semcache.cache import SemanticCache

            cache = SemanticCache()
        self.semcache = cache

    def get_cache(self, dynamic_cache_object: BaseCache | None = None, **kwargs: Any) -> Any:
        if not self._handles(kwargs):
            return None
        call = semcache_call(kwargs)
        return self._served(kwargs, call, self.semcache.lookup(**call))

    async def async_get_cache(
        self, dynamic_cache_object: BaseCache | None = None, **kwargs: Any
    ) -> Any:
        if not self._handles(kwargs):
            return None
        call = semcache_call(kwargs)
        return self._served(kwargs, call, await self.semcache.alookup(**call))

    def _served(
        self, kwargs: Mapping[str, Any], call: Mapping[str, Any], found: CacheHit | CacheInfo
    ) -> Any:
        """Remember how this call was served (its response's ``cache_info``); the hit's
        answer as the dict LiteLLM turns into the caller's response, or None."""
        hit = found if isinstance(found, CacheHit) else None
        info = found.info if isinstance(found, CacheHit) else found
        litellm_key = None
        if hit is not None:  # the key LiteLLM puts on the response (``_hidden_params``)
            preset = kwargs.get("cache_key")
            litellm_key = preset if isinstance(preset, str) else self.get_cache_key(**kwargs)
        call_id = kwargs.get("litellm_call_id")
        tenant = call.get("tenant")
        SERVED.record(
            call_id if isinstance(call_id, str) else None,
            litellm_key,
            SlotServe(info, tenant if isinstance(tenant, str) else None),
        )
        return None if hit is None else hit.response.model_dump()

    def feedback(
        self, response_or_key: Any, correct: bool, *, tenant: str | None = None
    ) -> FeedbackResult:
        """``SemanticCache.feedback`` for answers this slot served: ``response_or_key`` is the
        response, LiteLLM's cache key (``x-litellm-cache-key``), or a semcache serve id / entry key.
        A LiteLLM key names the same request in every tenant, so when it served several recently
        ``tenant`` must say which; given, it must match.
        """
        target, who = self._feedback_target(response_or_key, tenant)
        return self.semcache.feedback(target, correct, tenant=who)

    async def afeedback(
        self, response_or_key: Any, correct: bool, *, tenant: str | None = None
    ) -> FeedbackResult:
        """``feedback`` for async callers."""
        target, who = self._feedback_target(response_or_key, tenant)
        return await self.semcache.afeedback(target, correct, tenant=who)

    @staticmethod
    def _feedback_target(response_or_key: Any, tenant: str | None) -> tuple[Any, str | None]:
        if isinstance(response_or_key, str):
            served = SERVED.by_key(response_or_key)
            if not served:  # not a LiteLLM key served recently: a semcache id or key
                return response_or_key, tenant
            if tenant is None and len(served) > 1:
                raise InvalidRequest(
                    "tenant", "this LiteLLM cache key was served to several tenants; name one"
                )
            serve = served.get(tenant) if tenant is not None else next(iter(served.values()))
            if serve is None:
                raise UnknownServe("tenant", f"this LiteLLM cache key was not served to {tenant!r}")
            return _ref(serve.info), serve.tenant
        hidden = getattr(response_or_key, "_hidden_params", None)
        serve = SERVED.by_call(hidden.get("litellm_call_id")) if isinstance(hidden, dict) else None
        return response_or_key, (tenant if serve is None else serve.tenant)

    def add_cache(self, result: Any, **kwargs: Any) -> None:
        response = as_model_response(result)
        if response is not None and self._handles(kwargs):
            call = semcache_call(kwargs)
            _note_bypass(kwargs, call)
            self.semcache.store(response=response, **call)

    async def async_add_cache(
        self, result: Any, dynamic_cache_object: BaseCache | None = None, **kwargs: Any
    ) -> None:
        response = as_model_response(result)
        if response is not None and self._handles(kwargs):
            call = semcache_call(kwargs)
            _note_bypass(kwargs, call)
            await self.semcache.astore(response=response, **call)

    def _handles(self, kwargs: Mapping[str, Any]) -> bool:
        return "messages" in kwargs and self.should_use_cache(**kwargs) is True  # type: ignore[no-untyped-call]


def _note_bypass(kwargs: Mapping[str, Any], call: Mapping[str, Any]) -> None:
    """A ``no-cache`` call's ``cache_info`` (a bypass), recorded when it is stored: LiteLLM never
    calls ``get_cache`` then, so the store is the slot's only sight of the call (async: later;
    with ``no-store``: never).
    """
    control = kwargs.get("cache")
    call_id = kwargs.get("litellm_call_id")
    if not isinstance(control, Mapping) or control.get("no-cache") is not True:
        return
    if not isinstance(call_id, str) or SERVED.by_call(call_id) is not None:
        return
    tenant = call.get("tenant")
    info = CacheInfo(Tier.BYPASS, miss_reason=MissReason.BYPASS)
    SERVED.record(call_id, None, SlotServe(info, tenant if isinstance(tenant, str) else None))


def _ref(info: CacheInfo) -> str:
    """What ``SemanticCache.feedback`` takes for a served answer: its serve id (a semantic
    hit) or its entry key."""
    ref = info.serve_id if info.serve_id is not None else info.key
    if ref is None:
        raise InvalidRequest("response_or_key", "the response names no cached answer")
    return ref
