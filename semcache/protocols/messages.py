"""Anthropic Messages (``POST /v1/messages``) as an adapter of the chat request path.

The request is checked against the Messages API's shapes, then translated by LiteLLM's own
Messages→chat translator (the one its ``litellm.anthropic.messages`` bridge uses), so an
``anthropic/`` model is still called through Anthropic's Messages API by LiteLLM. Key rules
(see ``docs/protocols.md``): ``system``, ``messages`` (every turn before the last user turn
is the semantic scope), ``tools``, ``tool_choice``, ``thinking``, ``stop_sequences``,
``max_tokens`` and sampling are in the key; ``cache_control`` marks are not (they say where
the provider may reuse a prefix, not what it answers); ``metadata`` (``user_id``) is not,
and never decides the tenant (the caller's key or ``tenant=`` does). A block the translator
would drop in silence (a type it does not carry, an image without data or URL, an empty user
string) is refused by name: the provider would otherwise answer a question the client did not
ask.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.protocols.answers import messages_answer
from semcache.protocols.base import (
    SERVED_BY,
    JsonMemo,
    Translated,
    answer_identity,
    check_integer,
    check_objects,
    check_range,
    check_type,
    one_of,
    provider_of,
    served_by,
    split,
)
from semcache.protocols.messages_stream import message_events
from semcache.stats import CacheInfo

if TYPE_CHECKING:
    from litellm import ModelResponse
    from litellm.types.utils import ModelResponseStream

#: Body fields of a Messages request besides ``model`` and ``stream``.
MESSAGES_FIELDS: frozenset[str] = frozenset(
    {
        "messages",
        "max_tokens",
        "system",
        "tools",
        "tool_choice",
        "thinking",
        "stop_sequences",
        "temperature",
        "top_p",
        "top_k",
        "metadata",
        "service_tier",
    }
)

_ROLES = frozenset({"user", "assistant"})
_TOOL_CHOICES = frozenset({"auto", "any", "tool", "none"})
_PROVIDER_CACHE_FIELDS = ("cache_read_input_tokens", "cache_creation_input_tokens")


#: Block types each place may hold: the ones LiteLLM's translator carries to the chat
#: request (it drops any other silently, so one is refused by name instead).
BLOCKS: dict[str, frozenset[str]] = {
    "user": frozenset({"text", "image", "document", "tool_result"}),
    "assistant": frozenset({"text", "tool_use", "thinking", "redacted_thinking"}),
    "system": frozenset({"text"}),
}
#: Each block type's required string fields (``text`` may be empty; ``id``/``name``: a call).
_BLOCK_STRINGS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "tool_result": ("tool_use_id",),
    "tool_use": ("id", "name"),
    "thinking": ("thinking",),
    "redacted_thinking": ("data",),
}


def _string(value: Any, field: str, *, empty: bool = True) -> None:
    if not isinstance(value, str) or (not empty and not value):
        what = "a string" if empty else "a non-empty string"
        raise InvalidRequestType(field, f"expected {what}, got {type(value).__name__}")


def _check_source(source: Any, field: str) -> None:
    """An image's or document's ``source``: base64 ``data`` or a ``url`` (what the translator
    turns into a chat content part; it drops any other)."""
    if not isinstance(source, Mapping):
        raise InvalidRequestType(field, "expected an object with type base64 or url")
    if source.get("type") == "base64":
        _string(source.get("data"), f"{field}.data", empty=False)
        if source.get("media_type") is not None:
            _string(source["media_type"], f"{field}.media_type")
    elif source.get("type") == "url":
        _string(source.get("url"), f"{field}.url", empty=False)
    else:
        raise InvalidRequest(f"{field}.type", f"expected base64 or url, got {source.get('type')!r}")


def _check_block(block: Any, field: str, allowed: frozenset[str]) -> None:
    if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
        raise InvalidRequestType(field, "expected a block with a type")
    kind = block["type"]
    if kind not in allowed:
        raise InvalidRequest(f"{field}.type", f"expected one of {sorted(allowed)}, got {kind!r}")
    for name in _BLOCK_STRINGS.get(kind, ()):
        _string(block.get(name), f"{field}.{name}")
    if kind in ("image", "document"):
        _check_source(block.get("source"), f"{field}.source")
    elif kind == "tool_use" and not isinstance(block.get("input"), Mapping):
        raise InvalidRequestType(f"{field}.input", "expected an object")
    elif kind == "tool_result" and not isinstance(block.get("content"), (str, list, type(None))):
        raise InvalidRequestType(f"{field}.content", "expected a string or a list of blocks")
    elif kind == "thinking" and block.get("signature") is not None:
        _string(block["signature"], f"{field}.signature")


def _check_content(content: Any, field: str, place: str) -> None:
    """A message's content or ``system``: a string (non-empty from the user: the translator
    drops an empty one) or a non-empty list of the blocks ``place`` may hold."""
    if isinstance(content, str):
        if place == "user" and not content:
            raise InvalidRequest(field, "expected a non-empty string")
        return
    if not isinstance(content, list) or not content:
        raise InvalidRequestType(field, "expected a string or a non-empty list of blocks")
    for j, block in enumerate(content):
        _check_block(block, f"{field}[{j}]", BLOCKS[place])


def check_messages_body(body: Mapping[str, Any]) -> None:
    """Raise :class:`InvalidRequest` naming the first field that the Messages API refuses."""
    if body.get("max_tokens") is None:
        raise InvalidRequest("max_tokens", "is required")
    check_integer(body, "max_tokens", 1)
    if "messages" not in body:
        raise InvalidRequest("messages", "is required")
    messages = check_objects(body, "messages")
    if not messages:
        raise InvalidRequest("messages", "expected at least one message")
    for i, message in enumerate(messages):
        if not one_of(message.get("role"), _ROLES):
            raise InvalidRequest(
                f"messages[{i}].role", f"expected user or assistant, got {message.get('role')!r}"
            )
        _check_content(message.get("content"), f"messages[{i}].content", message["role"])
    if body.get("system") is not None:
        _check_content(body["system"], "system", "system")
    for i, tool in enumerate(check_objects(body, "tools")):
        if "type" in tool and not isinstance(tool["type"], str):
            raise InvalidRequestType(f"tools[{i}].type", "expected a string")
        if "type" not in tool and not isinstance(tool.get("name"), str):
            raise InvalidRequestType(f"tools[{i}].name", "expected a tool name")
    check_type(body, "tool_choice", (dict,), "an object")
    choice = body.get("tool_choice")
    if choice is not None and not one_of(choice.get("type"), _TOOL_CHOICES):
        raise InvalidRequest("tool_choice.type", f"expected one of {sorted(_TOOL_CHOICES)}")
    check_type(body, "thinking", (dict,), "an object")
    check_type(body, "metadata", (dict,), "an object")
    check_type(body.get("metadata") or {}, "user_id", (str,), "a string")
    check_type(body, "service_tier", (str,), "a string")
    check_type(body, "stop_sequences", (list,), "a list of strings")
    if not all(isinstance(s, str) for s in body.get("stop_sequences") or []):
        raise InvalidRequestType("stop_sequences", "expected a list of strings")
    check_range(body, "temperature", 0.0, 1.0)
    check_range(body, "top_p", 0.0, 1.0)
    check_integer(body, "top_k", 0)


class MessagesProtocol:
    """Anthropic Messages: ``translate``, ``reply`` and ``events`` (see :mod:`.base`)."""

    name = "messages"
    fields = MESSAGES_FIELDS

    def __init__(self) -> None:
        self._requests = JsonMemo()
        self._replies = JsonMemo()

    def stateful(self, kwargs: Mapping[str, Any]) -> None:
        """Messages requests carry their whole conversation: the cache answers every one."""
        return None

    def translate(self, kwargs: Mapping[str, Any]) -> Translated:
        from litellm.llms.anthropic.messages.adapters.transformation import (
            LiteLLMAnthropicMessagesAdapter,
        )

        body, options = split(kwargs, self.fields)
        check_messages_body(body)
        request = {k: v for k, v in body.items() if k != "stream"}
        provider = provider_of(body["model"], options)

        def translated() -> list[Any]:
            return list(
                LiteLLMAnthropicMessagesAdapter().translate_anthropic_to_openai(
                    request,  # type: ignore[arg-type]  # a checked Messages body
                    custom_llm_provider=provider,
                )
            )

        chat, names = self._requests.get([provider, request], translated)
        kwargs_out: dict[str, Any] = {**chat, **options}
        if body.get("stream"):
            kwargs_out["stream"] = True
            kwargs_out.setdefault("stream_options", {"include_usage": True})
        return Translated(body=body, chat=kwargs_out, names=dict(names))

    def reply(self, response: ModelResponse, asked: Translated, info: CacheInfo) -> dict[str, Any]:
        from litellm.llms.anthropic.messages.adapters.transformation import (
            LiteLLMAnthropicMessagesAdapter,
        )

        def translated() -> Any:
            adapter = LiteLLMAnthropicMessagesAdapter()
            names = asked.names or None
            return _plain(adapter.translate_openai_response_to_anthropic(response, names))

        identity = answer_identity(response, asked.names)
        message: dict[str, Any] = self._replies.get(identity, translated)
        message["usage"] = replay_usage(dict(message.get("usage") or {}), response, info)
        return message

    def answer(self, body: Mapping[str, Any], asked: Translated) -> ModelResponse:
        return messages_answer(body, asked)

    def events(
        self, chunks: AsyncIterator[ModelResponseStream | CacheInfo], asked: Translated
    ) -> AsyncIterator[list[dict[str, Any]] | CacheInfo]:
        return message_events(chunks, asked.names)


def replay_usage(usage: dict[str, Any], response: Any, info: CacheInfo) -> dict[str, Any]:
    """A replayed answer's usage: its token counts, no provider prompt-cache tokens (none were
    read for this request) and ``semcache``: who served it. Fresh answers keep theirs."""
    marker = served_by(info)
    if marker is None:
        return usage
    prompt = getattr(getattr(response, "usage", None), "prompt_tokens", None)
    if isinstance(prompt, int):
        usage["input_tokens"] = prompt
    for name in _PROVIDER_CACHE_FIELDS:
        if name in usage:
            usage[name] = 0
    usage[SERVED_BY] = marker
    return usage


def _plain(value: Any) -> Any:
    """JSON-ready data (LiteLLM's typed dicts may hold pydantic objects)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "model_dump"):
        return _plain(value.model_dump(exclude_none=True))
    return value


MESSAGES = MessagesProtocol()
