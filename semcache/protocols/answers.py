"""A provider's answer in a protocol, read back as the chat answer the request path stores.

``reply`` maps a stored chat answer to a protocol's response body; this is its inverse, for
answers that arrive in the protocol (LiteLLM's cache slot sees the provider's Responses body or
Anthropic message, not a chat answer). Each is read by LiteLLM's own translator, the one its
chat bridge uses for that provider's answers, so an entry stored from a protocol answer is
the entry ``cache.responses`` / ``cache.messages`` would have stored for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from litellm import ModelResponse

    from semcache.protocols.base import Translated


def responses_answer(body: Mapping[str, Any], asked: Translated) -> ModelResponse:
    """The chat answer of an OpenAI Responses body (``ValueError`` when it has none: an
    error, no output LiteLLM can map)."""
    from litellm import ModelResponse
    from litellm.completion_extras.litellm_responses_transformation.transformation import (
        LiteLLMResponsesTransformationHandler,
    )
    from litellm.types.llms.openai import ResponsesAPIResponse

    raw = ResponsesAPIResponse(**body)
    bridge = LiteLLMResponsesTransformationHandler()  # type: ignore[no-untyped-call]
    answer: ModelResponse = bridge.transform_response(
        model=raw.model or asked.chat["model"],
        raw_response=raw,
        model_response=ModelResponse(),
        logging_obj=None,  # read only to recover an empty output, which is refused
        request_data={},
        messages=[],
        optional_params=dict(asked.chat),  # the chat request: a structured-output answer
        litellm_params={},
        encoding=None,
    )
    created = body.get("created_at")
    if isinstance(created, int) and not isinstance(created, bool):
        answer.created = created
    return answer


def messages_answer(message: Mapping[str, Any], asked: Translated) -> ModelResponse:
    """The chat answer of an Anthropic message; tool names LiteLLM shortens on the way out
    are shortened again, as the chat answer of the translated request names them."""
    import httpx
    from litellm import ModelResponse
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig

    if message.get("type") != "message" or not isinstance(message.get("content"), list):
        raise ValueError("not an Anthropic message")
    answer = AnthropicConfig().transform_parsed_response(
        completion_response=dict(message),
        raw_response=httpx.Response(200),
        model_response=ModelResponse(),
        tool_name_reverse_map={client: sent for sent, client in asked.names.items()} or None,
    )
    if isinstance(message.get("id"), str):
        answer.id = message["id"]
    return answer
