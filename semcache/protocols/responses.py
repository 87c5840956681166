"""OpenAI Responses (``POST /v1/responses``) as an adapter of the chat request path.

The request is checked against the Responses API's shapes, then translated by LiteLLM's own
Responses→chat translator (the one its ``litellm.responses`` bridge uses for providers
without a Responses endpoint). Key rules (see ``docs/protocols.md``): ``instructions``,
``input`` (every item before the last user turn, tool calls and their outputs included, is
the semantic scope), ``tools``, ``tool_choice``, ``text.format``, ``reasoning``,
``max_output_tokens`` and sampling are in the key; ``metadata``, ``user``,
``safety_identifier`` and ``prompt_cache_key`` are not (identity and prompt-cache routing,
not content). A request with ``previous_response_id``, ``conversation``, ``store: true`` or
``background: true`` asks the provider to hold state the cache cannot see; it is sent to the
provider past every tier (:mod:`.stateful`).
An input item the translator would drop in silence (a type other than a message, a function
call or its output; a call without an id) is refused by name.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.protocols.answers import responses_answer
from semcache.protocols.base import (
    SERVED_BY,
    JsonMemo,
    Translated,
    check_integer,
    check_objects,
    check_range,
    check_type,
    one_of,
    provider_of,
    response_answer,
    served_by,
    split,
)
from semcache.protocols.responses_stream import message_item_id, response_events, response_id
from semcache.protocols.stateful import (
    Forward,
    LiteLLMResponses,
    ResponsesUpstream,
    forward,
    stateful_fields,
)
from semcache.stats import CacheInfo

if TYPE_CHECKING:
    from litellm import ModelResponse
    from litellm.types.utils import ModelResponseStream

#: Body fields of a Responses request besides ``model`` and ``stream``.
RESPONSES_FIELDS: frozenset[str] = frozenset(
    {
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "text",
        "reasoning",
        "temperature",
        "top_p",
        "max_output_tokens",
        "parallel_tool_calls",
        "metadata",
        "user",
        "store",
        "previous_response_id",
        "conversation",
        "background",
        "truncation",
        "include",
        "service_tier",
        "safety_identifier",
        "prompt_cache_key",
        "top_logprobs",
        "max_tool_calls",
        "stream_options",
    }
)

_ROLES = frozenset({"user", "assistant", "system", "developer"})
_TOOL_CHOICES = frozenset({"none", "auto", "required"})
_FORMATS = frozenset({"text", "json_object", "json_schema"})


#: Input item types besides messages, with their required fields: the ones LiteLLM's
#: translator carries to the chat request (it drops any other silently, so one is refused
#: by name instead). ``output`` may also be a list of content parts; ``call_id`` is not empty.
ITEMS: dict[str, tuple[str, ...]] = {
    "function_call": ("call_id", "name", "arguments"),
    "function_call_output": ("call_id", "output"),
}


def _check_item(item: Mapping[str, Any], i: int) -> None:
    kind = item.get("type", "message")
    if not isinstance(kind, str):
        raise InvalidRequestType(f"input[{i}].type", "expected a string")
    if kind == "message":
        if not one_of(item.get("role"), _ROLES):
            raise InvalidRequest(
                f"input[{i}].role", f"expected one of {sorted(_ROLES)}, got {item.get('role')!r}"
            )
        content = item.get("content")
        if isinstance(content, str):
            return
        if not isinstance(content, list) or not all(
            isinstance(p, Mapping) and isinstance(p.get("type"), str) for p in content
        ):
            raise InvalidRequestType(
                f"input[{i}].content", "expected a string or a list of typed parts"
            )
        return
    if kind not in ITEMS:
        allowed = sorted(["message", *ITEMS])
        raise InvalidRequest(f"input[{i}].type", f"expected one of {allowed}, got {kind!r}")
    for name in ITEMS[kind]:
        value = item.get(name)
        if not isinstance(value, str) and not (name == "output" and isinstance(value, list)):
            kind_of = type(value).__name__
            raise InvalidRequestType(f"input[{i}].{name}", f"expected a string, got {kind_of}")
    if not item["call_id"]:  # the translator drops a call it cannot name
        raise InvalidRequest(f"input[{i}].call_id", "expected a non-empty string")


def _check_input(body: Mapping[str, Any]) -> None:
    if "input" not in body:
        raise InvalidRequest("input", "is required")
    value = body["input"]
    if isinstance(value, str):
        if not value.strip():
            raise InvalidRequest("input", "expected a non-empty string or list of items")
        return
    items = check_objects(body, "input")
    if not items:
        raise InvalidRequest("input", "expected at least one item")
    for i, item in enumerate(items):
        _check_item(item, i)


def check_responses_body(body: Mapping[str, Any]) -> None:
    """Raise :class:`InvalidRequest` naming the first field the cache cannot answer."""
    stateful_fields(body)
    _check_input(body)
    check_type(body, "instructions", (str,), "a string")
    for i, tool in enumerate(check_objects(body, "tools")):
        if not isinstance(tool.get("type"), str):
            raise InvalidRequestType(f"tools[{i}].type", "expected a string")
        if tool["type"] == "function" and not isinstance(tool.get("name"), str):
            raise InvalidRequestType(f"tools[{i}].name", "expected a function name")
    choice = body.get("tool_choice")
    if choice is not None and not (
        (isinstance(choice, str) and choice in _TOOL_CHOICES)
        or (isinstance(choice, Mapping) and isinstance(choice.get("type"), str))
    ):
        raise InvalidRequest("tool_choice", f"expected one of {sorted(_TOOL_CHOICES)} or a tool")
    check_type(body, "text", (dict,), "an object")
    text_format = (body.get("text") or {}).get("format")
    if text_format is not None and (
        not isinstance(text_format, Mapping) or not one_of(text_format.get("type"), _FORMATS)
    ):
        raise InvalidRequest("text.format.type", f"expected one of {sorted(_FORMATS)}")
    for name in ("reasoning", "metadata", "stream_options"):
        check_type(body, name, (dict,), "an object")
    for key, value in (body.get("metadata") or {}).items():  # OpenAI's string-to-string map
        if not isinstance(value, str):
            kind = type(value).__name__
            raise InvalidRequestType(f"metadata.{key}", f"expected a string, got {kind}")
    for name in ("user", "safety_identifier", "prompt_cache_key", "service_tier", "truncation"):
        check_type(body, name, (str,), "a string")
    check_type(body, "parallel_tool_calls", (bool,), "true or false")
    check_type(body, "include", (list,), "a list of strings")
    if not all(isinstance(item, str) for item in body.get("include") or []):
        raise InvalidRequestType("include", "expected a list of strings")
    check_range(body, "temperature", 0.0, 2.0)
    check_range(body, "top_p", 0.0, 1.0)
    check_integer(body, "top_logprobs", 0, 20)
    check_integer(body, "max_output_tokens", 1)
    check_integer(body, "max_tool_calls", 1)


class ResponsesProtocol:
    """OpenAI Responses: ``translate``, ``reply`` and ``events`` (see :mod:`.base`)."""

    name = "responses"
    fields = RESPONSES_FIELDS

    def __init__(self, upstream: ResponsesUpstream | None = None) -> None:
        self._requests = JsonMemo()
        self._replies = JsonMemo()
        self.upstream: ResponsesUpstream = upstream or LiteLLMResponses()

    def stateful(self, kwargs: Mapping[str, Any]) -> Forward | None:
        """The request as the provider gets it when it asks for provider state (see
        :mod:`.stateful`), checked like any other; None when the cache answers it."""
        body, options = split(kwargs, self.fields)
        fields = stateful_fields(body)
        if not fields:
            return None
        check_responses_body(body)
        return forward(body, options, fields, self.upstream)

    def translate(self, kwargs: Mapping[str, Any]) -> Translated:
        from litellm.responses.litellm_completion_transformation.transformation import (
            LiteLLMCompletionResponsesConfig as Bridge,
        )

        body, options = split(kwargs, self.fields)
        check_responses_body(body)
        provider = provider_of(body["model"], options)

        def translated() -> dict[str, Any]:
            return Bridge.transform_responses_api_request_to_chat_completion_request(
                model=body["model"],
                input=body["input"],
                responses_api_request=_optional(body),  # type: ignore[arg-type]  # checked
                custom_llm_provider=provider,
                stream=bool(body.get("stream")),
            )

        chat = self._requests.get([provider, body], translated)
        if provider == "openai" and body.get("prompt_cache_key") is not None:
            # LiteLLM's bridge drops it; OpenAI's chat call takes the caller's own key
            chat["prompt_cache_key"] = body["prompt_cache_key"]
        return Translated(body=body, chat={**chat, **options})

    def reply(self, response: ModelResponse, asked: Translated, info: CacheInfo) -> dict[str, Any]:
        return self._reply(response_answer(response), lambda: response, asked, info)

    def _reply(
        self,
        answer: list[Any],
        response: Callable[[], ModelResponse],
        asked: Translated,
        info: CacheInfo,
    ) -> dict[str, Any]:
        """The reply to ``asked`` with the answer ``answer`` names; ``response`` builds that
        answer, called only when the reply is not already memoised."""
        from litellm.responses.litellm_completion_transformation.transformation import (
            LiteLLMCompletionResponsesConfig as Bridge,
        )

        def translated() -> dict[str, Any]:
            mapped = Bridge.transform_chat_completion_response_to_responses_api_response(
                request_input=asked.body["input"],
                responses_api_request=_optional(asked.body),  # type: ignore[arg-type]
                chat_completion_response=response(),
            )
            out: dict[str, Any] = mapped.model_dump(mode="json", exclude_none=True)
            out["id"] = response_id(str(out.get("id")))
            for index, item in enumerate(out.get("output") or []):
                if item.get("type") == "message":  # the same id on every replay of this answer
                    item["id"] = message_item_id(str(out.get("id")), index)
            return out

        echoed = {k: v for k, v in asked.body.items() if k != "stream"}
        body: dict[str, Any] = self._replies.get([answer, echoed], translated)
        body["usage"] = replay_usage(dict(body.get("usage") or {}), info)
        return body

    def answer(self, body: Mapping[str, Any], asked: Translated) -> ModelResponse:
        return responses_answer(body, asked)

    def events(
        self, chunks: AsyncIterator[ModelResponseStream | CacheInfo], asked: Translated
    ) -> AsyncIterator[list[dict[str, Any]] | CacheInfo]:
        return response_events(
            chunks, lambda answer, build, info: self._reply(answer, build, asked, info)
        )


def _optional(body: Mapping[str, Any]) -> dict[str, Any]:
    """The request's optional parameters, as LiteLLM's translators take them."""
    return {k: v for k, v in body.items() if k not in ("model", "input", "stream")}


def replay_usage(usage: dict[str, Any], info: CacheInfo) -> dict[str, Any]:
    """A replayed answer's usage: no provider cached tokens (none were read for this request)
    and ``semcache``: who served it. A fresh answer's usage is the provider's."""
    marker = served_by(info)
    if marker is None:
        return usage
    details = dict(usage.get("input_tokens_details") or {})
    details["cached_tokens"] = 0
    usage["input_tokens_details"] = details
    usage[SERVED_BY] = marker
    return usage


RESPONSES = ResponsesProtocol()
