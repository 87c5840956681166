"""semcache as LangChain's LLM cache: ``set_llm_cache(LangChainCache(SemanticCache()))``.

LangChain hands a cache the prompt (serialised messages for a chat model) and ``llm_string``
(the model's whole configuration). The messages are revived so the semantic tier compares
the last user question and keys every earlier turn; ``llm_string`` is part of the key. Only
text answers are kept: a generation with tool calls or extra fields could not be given back
whole. Needs the ``langchain`` extra.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from inspect import signature
from typing import TYPE_CHECKING, Any

from semcache.core.policy import DEFAULT_TENANT
from semcache.errors import MissingDependency

try:
    from langchain_core.caches import BaseCache
    from langchain_core.load import loads
    from langchain_core.messages import AIMessage, BaseMessage, convert_to_openai_messages
    from langchain_core.outputs import ChatGeneration, Generation
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependency("langchain-core", "langchain") from exc

if TYPE_CHECKING:
    from semcache.cache import SemanticCache

#: Revive chat messages only (never arbitrary classes) where this langchain-core can say so.
_ONLY_MESSAGES: dict[str, Any] = (
    {"allowed_objects": "messages"} if "allowed_objects" in signature(loads).parameters else {}
)

_MODEL_NAME = re.compile(r"""['"](?:model_name|model|model_id)['"]\s*[:,]\s*['"]([^'"]+)['"]""")


def model_name(llm_string: str) -> str:
    """The model's name when ``llm_string`` states it (recorded on entries, for audits);
    ``unknown`` otherwise. The whole ``llm_string`` is keyed either way."""
    found = _MODEL_NAME.search(llm_string)
    return found.group(1) if found is not None else "unknown"


def chat_messages(prompt: str) -> list[dict[str, Any]] | None:
    """A chat model's serialised prompt as OpenAI-style messages; None for a text prompt."""
    if not prompt.startswith("["):
        return None
    try:
        with warnings.catch_warnings():  # loads() is marked beta; the format is stable
            warnings.filterwarnings("ignore", message="The function `loads` is in beta")
            revived = loads(prompt, **_ONLY_MESSAGES)
    except (ValueError, TypeError, KeyError, NotImplementedError):
        return None
    if not isinstance(revived, list) or not all(isinstance(m, BaseMessage) for m in revived):
        return None
    return list(convert_to_openai_messages(revived))


def _text_only(generation: Generation) -> bool:
    if not isinstance(generation, ChatGeneration):
        return True
    message = generation.message
    return (
        isinstance(message.content, str)
        and not getattr(message, "tool_calls", None)
        and not message.additional_kwargs
    )


class LangChainCache(BaseCache):
    """A LangChain ``BaseCache`` over a ``SemanticCache``, in one tenant and namespace."""

    def __init__(
        self,
        cache: SemanticCache | None = None,
        *,
        tenant: str | None = None,
        namespace: str | None = None,
    ) -> None:
        if cache is None:
            from semcache.cache import SemanticCache

            cache = SemanticCache()
        self.semcache = cache
        self.tenant = tenant
        self.namespace = namespace

    def _call(self, prompt: str, llm_string: str) -> tuple[dict[str, Any], bool]:
        messages = chat_messages(prompt)
        chat = messages is not None
        if messages is None:
            messages = [{"role": "user", "content": prompt}]
        call: dict[str, Any] = {
            "model": model_name(llm_string),
            "custom_llm_provider": "langchain",  # keys apart from LiteLLM models of that name
            "messages": messages,
            "tenant": self.tenant,
            "langchain_llm": llm_string,
        }
        if self.namespace is not None:
            call["cache"] = {"namespace": self.namespace}
        return call, chat

    @staticmethod
    def _generations(hit: Any, chat: bool) -> list[Generation]:
        texts = [choice.message.content or "" for choice in hit.response.choices]
        if chat:
            return [ChatGeneration(message=AIMessage(content=text)) for text in texts]
        return [Generation(text=text) for text in texts]

    def lookup(self, prompt: str, llm_string: str) -> list[Generation] | None:
        call, chat = self._call(prompt, llm_string)
        hit = self.semcache.check(**call)
        return None if hit is None else self._generations(hit, chat)

    async def alookup(self, prompt: str, llm_string: str) -> list[Generation] | None:
        call, chat = self._call(prompt, llm_string)
        hit = await self.semcache.acheck(**call)
        return None if hit is None else self._generations(hit, chat)

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        response = self._response(return_val, llm_string)
        if response is not None:
            self.semcache.store(response=response, **self._call(prompt, llm_string)[0])

    async def aupdate(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        response = self._response(return_val, llm_string)
        if response is not None:
            await self.semcache.astore(response=response, **self._call(prompt, llm_string)[0])

    @staticmethod
    def _response(return_val: Sequence[Generation], llm_string: str) -> Any:
        if not return_val or not all(_text_only(g) for g in return_val):
            return None
        from litellm import ModelResponse

        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": g.text},
                "finish_reason": "stop",
            }
            for i, g in enumerate(return_val)
        ]
        response = ModelResponse(model=model_name(llm_string), choices=choices)
        response._hidden_params["response_cost"] = 0.0  # unknown: LangChain does not say
        return response

    def clear(self, **kwargs: Any) -> None:
        """Delete this adapter's partition (its tenant and namespace) from every tier."""
        self.semcache.purge(tenant=self.tenant or DEFAULT_TENANT, namespace=self.namespace)

    async def aclear(self, **kwargs: Any) -> None:
        await self.semcache.apurge(tenant=self.tenant or DEFAULT_TENANT, namespace=self.namespace)
