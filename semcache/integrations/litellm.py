"""semcache as LiteLLM's own cache: ``litellm.cache = LiteLLMCache(SemanticCache())``.

Plain ``litellm.completion`` / ``acompletion`` (streamed or not) look up semcache's tiers
before calling the provider and store complete answers after it; so do ``litellm.responses``
/ ``aresponses`` and ``litellm.anthropic.messages.acreate``, under the Responses and Messages
adapters' keys (:mod:`semcache.integrations.litellm_protocols`). LiteLLM's per-request
controls (``no-cache``, ``no-store``, ``ttl``, ``s-maxage``, ``namespace``, ``use-cache``)
keep their meaning. A ``Cache`` subclass, not a ``BaseCache`` backend, because a backend sees
only LiteLLM's hashed key and cannot compute semcache's key nor partition by tenant. Not
coalesced: LiteLLM looks up and stores in two calls with no failure signal in between.

The tenant is the authenticated caller behind LiteLLM's proxy, narrowed by
``metadata["tenant"]``, else that claim alone (:mod:`semcache.integrations.litellm_call`).
``litellm.cache.feedback(response, correct=False)`` withdraws a wrong answer for the tenant it
was served to (:mod:`semcache.integrations.litellm_served`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from litellm.caching.caching import Cache, CacheMode, LiteLLMCacheType

from semcache.errors import InvalidRequest, UnknownServe
from semcache.integrations.litellm_call import as_model_response, semcache_call, tenant_of
from semcache.integrations.litellm_protocols import (
    chat_answer,
    protocol_answer,
    protocol_of,
    read_call,
    replied,
)
from semcache.integrations.litellm_served import SERVED, SlotServe
from semcache.protocols.base import Translated
from semcache.stats import CacheHit, CacheInfo, MissReason, Tier

if TYPE_CHECKING:
    from litellm import ModelResponse
    from litellm.caching.base_cache import BaseCache

    from semcache.cache import SemanticCache
    from semcache.protocols.base import Protocol
    from semcache.tuning.results import FeedbackResult

__all__ = ["LiteLLMCache", "SlotCall", "semcache_call", "tenant_of"]


@dataclass(frozen=True, slots=True)
class SlotCall:
    """One LiteLLM call as the slot looks it up and stores it: semcache's arguments for it,
    and for a protocol call type its adapter and reading."""

    call: dict[str, Any]
    adapter: Protocol | None = None
    asked: Translated | None = None

    @property
    def protocol(self) -> str | None:
        return None if self.adapter is None else self.adapter.name

    def shape(self, hit: CacheHit) -> dict[str, Any]:
        """A hit as LiteLLM takes it for this call type: a chat completion's dict, or the
        protocol's body."""
        if self.adapter is None or self.asked is None:
            answer: dict[str, Any] = hit.response.model_dump()
            return answer
        return replied(self.adapter, self.asked, hit)


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
            supported_call_types=[  # chat, and the protocols of ``.litellm_protocols``
                "completion",
                "acompletion",
                "responses",
                "aresponses",
                "anthropic_messages",
                "aanthropic_messages",
            ],
        )
        if cache is None:
            from semcache.cache import SemanticCache

            cache = SemanticCache()
        self.semcache = cache

    def get_cache(self, dynamic_cache_object: BaseCache | None = None, **kwargs: Any) -> Any:
        looked = self._looking(kwargs)
        if looked is None:
            return None
        found = self.semcache.lookup(protocol=looked.protocol, **looked.call)
        return self._served(kwargs, looked, found)

    async def async_get_cache(
        self, dynamic_cache_object: BaseCache | None = None, **kwargs: Any
    ) -> Any:
        looked = self._looking(kwargs)
        if looked is None:
            return None
        found = await self.semcache.alookup(protocol=looked.protocol, **looked.call)
        return self._served(kwargs, looked, found)

    def _looking(self, kwargs: Mapping[str, Any]) -> SlotCall | None:
        """What to look up for this LiteLLM call (its call type's key rule), or None when the
        slot leaves it to LiteLLM (a stateful Responses request is recorded as a bypass)."""
        if self.should_use_cache(**kwargs) is not True:  # type: ignore[no-untyped-call]
            return None
        call = semcache_call(kwargs)
        protocol = protocol_of(kwargs)
        if protocol is None:
            return SlotCall(call) if "messages" in kwargs else None
        read = read_call(protocol, call)
        if isinstance(read, CacheInfo):
            self._record(kwargs, call, None, read)
            return None
        return None if read is None else SlotCall(read.chat, protocol, read)

    def _served(
        self, kwargs: Mapping[str, Any], looked: SlotCall, found: CacheHit | CacheInfo
    ) -> Any:
        """Remember how this call was served (its response's ``cache_info``); the hit's
        answer as the dict LiteLLM turns into the caller's response, or None."""
        if not isinstance(found, CacheHit):
            self._record(kwargs, looked.call, None, found)
            return None
        preset = kwargs.get("cache_key")  # the key LiteLLM puts on the response
        litellm_key = preset if isinstance(preset, str) else self.get_cache_key(**kwargs)
        self._record(kwargs, looked.call, litellm_key, found.info)
        return looked.shape(found)

    @staticmethod
    def _record(
        kwargs: Mapping[str, Any], call: Mapping[str, Any], key: str | None, info: CacheInfo
    ) -> None:
        call_id = kwargs.get("litellm_call_id")
        tenant = call.get("tenant")
        SERVED.record(
            call_id if isinstance(call_id, str) else None,
            key,
            SlotServe(info, tenant if isinstance(tenant, str) else None),
        )

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
        stored = self._storing(result, kwargs)
        if stored is not None:
            answer, looked = stored
            self.semcache.store(response=answer, protocol=looked.protocol, **looked.call)

    async def async_add_cache(
        self, result: Any, dynamic_cache_object: BaseCache | None = None, **kwargs: Any
    ) -> None:
        stored = self._storing(result, kwargs)
        if stored is not None:
            answer, looked = stored
            await self.semcache.astore(response=answer, protocol=looked.protocol, **looked.call)

    def _storing(
        self, result: Any, kwargs: Mapping[str, Any]
    ) -> tuple[ModelResponse, SlotCall] | None:
        """The chat answer to keep and the call it answers, or None: LiteLLM stores after the
        call (the streamed ones without their logging object), so the answer's shape says
        which call type it was."""
        if self.should_use_cache(**kwargs) is not True:  # type: ignore[no-untyped-call]
            return None
        call = semcache_call(kwargs)
        response = as_model_response(result)
        if response is not None:
            looked = SlotCall(call) if "messages" in kwargs else None
        else:
            answered = protocol_answer(result)
            if answered is None:
                return None
            protocol, body = answered
            read = read_call(protocol, call)
            if not isinstance(read, Translated):
                return None
            looked = SlotCall(read.chat, protocol, read)
            response = chat_answer(protocol, body, read)
        if looked is None or response is None:
            return None
        _note_bypass(kwargs, looked.call)
        return response, looked


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
