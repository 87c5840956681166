"""The Responses and Messages call types of LiteLLM's cache slot.

LiteLLM sends ``litellm.responses`` / ``aresponses`` and ``litellm.anthropic.messages.acreate``
through its cache slot too (call types ``responses``, ``aresponses``, ``anthropic_messages``,
``aanthropic_messages``). The slot reads each such call with the protocol's adapter, exactly
as ``cache.responses(...)`` / ``cache.messages(...)`` reads the same arguments, and looks it up
and stores it under that protocol's keys: one key rule, so an entry is shared by both ways in.
A hit goes back to LiteLLM in the shape it expects for the call type (a Responses body, an
Anthropic message), its ``usage.semcache`` saying semcache served it.

Left to LiteLLM and the provider, never looked up nor stored:

- a Responses request asking the provider to hold state (``previous_response_id``,
  ``conversation``, ``store: true``, ``background: true``; :mod:`semcache.protocols.stateful`);
- a body the adapter cannot read whole (one it would refuse by name as a bad request): the
  slot cannot key it, and refusing it would fail a call LiteLLM makes without a cache;
- a streamed Messages call: LiteLLM replays one only from the SSE events it recorded, through
  its proxy's stream logging (the ``litellm[proxy]`` extra), which the slot does not build on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from semcache.errors import InvalidRequest
from semcache.protocols import MESSAGES, RESPONSES
from semcache.protocols.stateful import STATEFUL_INFO

if TYPE_CHECKING:
    from litellm import ModelResponse

    from semcache.protocols.base import Protocol, Translated
    from semcache.stats import CacheHit, CacheInfo

#: LiteLLM's call types whose requests are a protocol's, with the adapter that reads them.
PROTOCOL_CALL_TYPES: dict[str, Protocol] = {
    "responses": RESPONSES,
    "aresponses": RESPONSES,
    "anthropic_messages": MESSAGES,
    "aanthropic_messages": MESSAGES,
}


def protocol_of(kwargs: Mapping[str, Any]) -> Protocol | None:
    """The protocol of the LiteLLM call a lookup is for (its logging object names the call
    type); None for a chat call or an unnamed one."""
    call_type = getattr(kwargs.get("litellm_logging_obj"), "call_type", None)
    name = getattr(call_type, "value", call_type)
    return PROTOCOL_CALL_TYPES.get(name) if isinstance(name, str) else None


def read_call(protocol: Protocol, call: Mapping[str, Any]) -> Translated | CacheInfo | None:
    """The adapter's reading of one LiteLLM call from ``call``, the slot's semcache arguments
    for it (answer-changing options, ``tenant``, ``cache``); LiteLLM passes an omitted body field
    as None. The body's ``metadata`` is not among them: LiteLLM adds its own bookkeeping to it
    between lookup and store, and neither protocol keys on it.

    ``STATEFUL_INFO`` for a stateful request and None for one the slot leaves to LiteLLM
    otherwise (see the module docstring)."""
    params = {name: value for name, value in call.items() if value is not None}
    if protocol is MESSAGES and params.get("stream"):
        return None
    try:
        if protocol.stateful(params) is not None:
            return STATEFUL_INFO
        return protocol.translate(params)
    except InvalidRequest:  # a body the adapter refuses (a stateful one included)
        return None


def replied(protocol: Protocol, asked: Translated, hit: CacheHit) -> dict[str, Any]:
    """A hit in the shape LiteLLM expects for the call type: ``reply`` (replay usage marked;
    a Responses body's id is a response id, which LiteLLM needs to read it as one)."""
    return protocol.reply(hit.response, asked, hit.info)


def protocol_answer(result: Any) -> tuple[Protocol, dict[str, Any]] | None:
    """The protocol and body of what LiteLLM hands to ``add_cache`` after a protocol call: a
    Responses body (an object on the sync path, its JSON on the async and streamed ones) or an
    Anthropic message; None for anything else (a chat answer; the SSE events LiteLLM records
    for a Messages stream)."""
    body: Any = result
    if hasattr(result, "model_dump"):
        body = result.model_dump(mode="json", exclude_none=True, warnings=False)
    elif isinstance(result, (str, bytes)):
        try:
            body = json.loads(result)
        except ValueError:
            return None
    if not isinstance(body, Mapping):
        return None
    if body.get("object") == "response":
        return RESPONSES, dict(body)
    if body.get("type") == "message" and body.get("role") == "assistant":
        return MESSAGES, dict(body)
    return None


def chat_answer(protocol: Protocol, body: Mapping[str, Any], asked: Translated) -> Any:
    """``protocol.answer``, or None for a body that holds no answer to keep."""
    try:
        answer: ModelResponse = protocol.answer(body, asked)
    except (ValueError, TypeError, KeyError):
        return None
    return answer
