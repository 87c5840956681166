"""semcache for LlamaIndex: ``CachedLLM(llm=OpenAI(...), cache=SemanticCache())``.

LlamaIndex has no global LLM-cache hook, so the adapter is an ``LLM`` wrapping another: its
``chat`` / ``complete`` calls (sync or async) ask semcache's tiers first. The wrapped LLM's
class, metadata and settings (secrets left out) and the call kind are part of the key.
Streaming passes through uncached; only plain-text answers are stored. Needs the
``llamaindex`` extra.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from semcache.errors import MissingDependency

try:
    from llama_index.core.base.llms.types import (
        ChatMessage,
        ChatResponse,
        ChatResponseAsyncGen,
        ChatResponseGen,
        CompletionResponse,
        CompletionResponseAsyncGen,
        CompletionResponseGen,
        LLMMetadata,
        MessageRole,
    )
    from llama_index.core.llms import LLM
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependency("llama-index-core", "llamaindex") from exc

_SECRET = re.compile(r"key|token|secret|password|credential", re.IGNORECASE)


def llm_identity(llm: LLM) -> dict[str, Any]:
    """What makes ``llm`` answer the way it does: class, metadata and settings, no secrets."""
    settings = {
        name: value
        for name, value in llm.to_dict().items()
        if not _SECRET.search(name) and isinstance(value, (str, int, float, bool, type(None)))
    }
    return {
        "class": llm.class_name(),
        "metadata": llm.metadata.model_dump(mode="json"),
        "settings": settings,
    }


class CachedLLM(LLM):
    """An ``LLM`` that answers from a ``SemanticCache`` when it can, else from ``llm``."""

    llm: LLM = Field(description="The LLM that answers misses.")
    cache: Any = Field(default=None, exclude=True, description="The SemanticCache to use.")
    tenant: str | None = Field(default=None, description="Partition no tier answers across.")
    namespace: str | None = Field(default=None, description="Partition inside the tenant.")

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        if self.cache is None:
            from semcache.cache import SemanticCache

            self.cache = SemanticCache()

    @classmethod
    def class_name(cls) -> str:
        return "semcache_cached_llm"

    @property
    def metadata(self) -> LLMMetadata:
        return self.llm.metadata

    # -- translation ----------------------------------------------------------------------------
    def _call(
        self, kind: str, messages: list[dict[str, Any]], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        call: dict[str, Any] = {
            "model": self.llm.metadata.model_name,
            "custom_llm_provider": "llamaindex",  # keys apart from LiteLLM models of that name
            "messages": messages,
            "tenant": self.tenant,
            "llamaindex_call": kind,
            "llamaindex_llm": llm_identity(self.llm),
            **kwargs,
        }
        if self.namespace is not None:
            call["cache"] = {"namespace": self.namespace}
        return call

    def _chat_call(self, messages: Sequence[ChatMessage], kwargs: dict[str, Any]) -> dict[str, Any]:
        plain = [{"role": m.role.value, "content": m.content or ""} for m in messages]
        return self._call("chat", plain, kwargs)

    def _complete_call(
        self, prompt: str, formatted: bool, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        return self._call(
            "complete", [{"role": "user", "content": prompt}], {**kwargs, "formatted": formatted}
        )

    @staticmethod
    def _chat_hit(hit: Any) -> ChatResponse | None:
        if hit is None or hit.text is None:
            return None
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=hit.text))

    @staticmethod
    def _complete_hit(hit: Any) -> CompletionResponse | None:
        return None if hit is None or hit.text is None else CompletionResponse(text=hit.text)

    @staticmethod
    def _chat_text(response: ChatResponse) -> str | None:
        message = response.message
        plain = not message.additional_kwargs.get("tool_calls")
        return message.content if plain and isinstance(message.content, str) else None

    # -- chat / complete --------------------------------------------------------------------------
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        call = self._chat_call(messages, kwargs)
        found = self._chat_hit(self.cache.check(**call))
        if found is not None:
            return found
        response = self.llm.chat(messages, **kwargs)
        text = self._chat_text(response)
        if text is not None:
            self.cache.store(response=text, **call)
        return response

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        call = self._chat_call(messages, kwargs)
        found = self._chat_hit(await self.cache.acheck(**call))
        if found is not None:
            return found
        response = await self.llm.achat(messages, **kwargs)
        text = self._chat_text(response)
        if text is not None:
            await self.cache.astore(response=text, **call)
        return response

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        call = self._complete_call(prompt, formatted, kwargs)
        found = self._complete_hit(self.cache.check(**call))
        if found is not None:
            return found
        response = self.llm.complete(prompt, formatted=formatted, **kwargs)
        self.cache.store(response=response.text, **call)
        return response

    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        call = self._complete_call(prompt, formatted, kwargs)
        found = self._complete_hit(await self.cache.acheck(**call))
        if found is not None:
            return found
        response = await self.llm.acomplete(prompt, formatted=formatted, **kwargs)
        await self.cache.astore(response=response.text, **call)
        return response

    # -- streaming: passed through, uncached ----------------------------------------------------
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        return self.llm.stream_chat(messages, **kwargs)

    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        return self.llm.stream_complete(prompt, formatted=formatted, **kwargs)

    async def astream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> ChatResponseAsyncGen:
        return await self.llm.astream_chat(messages, **kwargs)

    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        return await self.llm.astream_complete(prompt, formatted=formatted, **kwargs)
