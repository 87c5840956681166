"""Responses requests that ask the provider to hold state: sent to the provider past the cache.

``previous_response_id`` and ``conversation`` continue a conversation the provider holds, so
the answer depends on state the request does not carry; ``store: true`` and ``background:
true`` ask the provider to keep this response (to be fetched by id, continued, or appended to
a conversation), which an answer served from the cache never was. Keying on the ids would
match only retries of one turn, and a replay would still skip what the provider does for the
call (store the response, append to the conversation), so such a request is a **bypass**:
forwarded through ``litellm.aresponses`` (the provider's own Responses API, the fields
intact), never looked up, stored or coalesced with another, its ``CacheInfo`` a bypass with
miss reason ``stateful``.

A provider LiteLLM reaches only through its chat bridge keeps no such state (the bridge would
look a previous turn up in the LiteLLM proxy's spend-log database, which semcache has not
got), so for it the field is refused by name before any call.

An omitted ``store`` asks for nothing: OpenAI stores responses by default, but clients leave
``store`` unset on nearly every call, and reading that as a request for state would keep
every Responses call out of the cache. Only an explicit ``true`` bypasses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from semcache.core.policy import CacheControl, validate_tenant
from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.stats import CacheInfo, MissReason, Tier

#: Fields that ask the provider to keep state, and why each keeps a request out of the cache.
STATEFUL: dict[str, str] = {
    "previous_response_id": "continues a conversation the provider holds",
    "conversation": "continues a conversation the provider holds",
    "store": "true asks the provider to store this response",
    "background": "true asks the provider to run and store this response as a background job",
}

#: The ``CacheInfo`` of a stateful request: it went upstream past every tier.
STATEFUL_INFO = CacheInfo(tier=Tier.BYPASS, miss_reason=MissReason.STATEFUL)


def stateful_fields(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The fields of a Responses ``body`` that ask for provider state, checked: an id (or a
    conversation object with one), or ``true``; null, ``false`` and absent ask for none."""
    for name in ("store", "background"):
        value = body.get(name)
        if value is not None and not isinstance(value, bool):
            raise InvalidRequestType(name, f"expected true or false, got {value!r}")
    found = [name for name in ("store", "background") if body.get(name) is True]
    previous = body.get("previous_response_id")
    if previous is not None:
        if not isinstance(previous, str) or not previous:
            raise InvalidRequestType("previous_response_id", "expected a response id")
        found.append("previous_response_id")
    conversation = body.get("conversation")
    if conversation is not None:
        named = conversation.get("id") if isinstance(conversation, Mapping) else conversation
        if not isinstance(named, str) or not named:
            raise InvalidRequestType("conversation", "expected a conversation id or {id}")
        found.append("conversation")
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Forward:
    """A stateful request as the provider gets it: the Responses ``body`` and LiteLLM's call
    ``options`` (semcache's own ``tenant`` and ``cache`` checked and left out), the ``fields``
    that made it stateful, and the ``upstream`` that answers it."""

    body: dict[str, Any]
    options: dict[str, Any]
    fields: tuple[str, ...]
    upstream: ResponsesUpstream

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def params(self) -> dict[str, Any]:
        return {**self.body, **self.options}


def forward(
    body: dict[str, Any],
    options: Mapping[str, Any],
    fields: tuple[str, ...],
    upstream: ResponsesUpstream,
) -> Forward:
    """The :class:`Forward` of a request whose ``fields`` ask for state, or
    :class:`InvalidRequest` naming the first of them when ``upstream`` keeps no state for its
    model."""
    rest = dict(options)
    validate_tenant(rest.pop("tenant", None))
    CacheControl.parse(rest.pop("cache", None))
    if not upstream.keeps_state(body["model"], rest):
        name = fields[0]
        advice = "leave it out" if name in ("store", "background") else "send the whole "
        if name not in ("store", "background"):
            advice += "conversation in input instead"
        raise InvalidRequest(
            name,
            f"{STATEFUL[name]}, and {body['model']} is reached through a chat translation "
            f"that keeps no state; {advice}",
        )
    return Forward(body=body, options=rest, fields=fields, upstream=upstream)


class ResponsesUpstream(Protocol):
    """The provider's Responses API: a response body, or its stream events, as JSON data."""

    def keeps_state(self, model: str, options: Mapping[str, Any]) -> bool:
        """Whether ``model`` is answered by a Responses API that holds state."""
        ...

    async def create(self, params: Mapping[str, Any]) -> dict[str, Any]: ...

    def stream(self, params: Mapping[str, Any]) -> AsyncIterator[dict[str, Any]]: ...


class LiteLLMResponses:
    """``litellm.aresponses`` with the request's own parameters (credentials included)."""

    def keeps_state(self, model: str, options: Mapping[str, Any]) -> bool:
        """True unless LiteLLM would answer through its chat bridge (a provider without a
        Responses API)."""
        from litellm.responses.main import provider_stores_the_conversation

        given = options.get("custom_llm_provider")
        provider = given if isinstance(given, str) else None
        return bool(provider_stores_the_conversation(model, provider, options))

    async def create(self, params: Mapping[str, Any]) -> dict[str, Any]:
        import litellm

        response = await litellm.aresponses(**_litellm_params(params, stream=False))
        return _plain(response)

    async def stream(self, params: Mapping[str, Any]) -> AsyncIterator[dict[str, Any]]:
        import litellm

        events = await litellm.aresponses(**_litellm_params(params, stream=True))
        async for event in events:  # type: ignore[union-attr]  # a stream when stream=True
            yield _plain(event)


async def forwarded_reply(request: Forward) -> dict[str, Any]:
    """The provider's response body for ``request``."""
    return await request.upstream.create(request.params)


async def forwarded_events(request: Forward) -> AsyncIterator[list[dict[str, Any]] | CacheInfo]:
    """The provider's event stream for ``request``, an event a batch, its ``CacheInfo``
    first (once the provider has answered, so an error before then keeps its status)."""
    events = request.upstream.stream(request.params)
    try:
        first = await anext(events)
        yield STATEFUL_INFO
        yield [first]
        async for event in events:
            yield [event]
    except StopAsyncIteration:
        return
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()


#: Body fields ``litellm.aresponses`` does not send by name: they travel in ``extra_body``.
_BY_EXTRA_BODY = ("conversation",)


def _litellm_params(params: Mapping[str, Any], *, stream: bool) -> dict[str, Any]:
    out = {k: v for k, v in params.items() if k not in _BY_EXTRA_BODY}
    extra = {k: params[k] for k in _BY_EXTRA_BODY if params.get(k) is not None}
    if extra:
        out["extra_body"] = {**(params.get("extra_body") or {}), **extra}
    out["stream"] = stream
    return out


def _plain(value: Any) -> dict[str, Any]:
    """A LiteLLM Responses object as JSON data."""
    dumped: dict[str, Any] = value.model_dump(mode="json", exclude_none=True, warnings=False)
    return dumped
