"""Calls to the LLM provider, through LiteLLM's real client.

Errors are LiteLLM's own exception types and reach the caller unchanged. A streamed answer
is assembled from its chunks with LiteLLM's chunk builder, so what is stored is what a
non-streamed call would have returned.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Protocol

from litellm import ModelResponse
from litellm.types.utils import ModelResponseStream

Emit = Callable[[ModelResponseStream], None]


class Upstream(Protocol):
    async def complete(self, params: Mapping[str, Any]) -> ModelResponse: ...

    def stream(self, params: Mapping[str, Any]) -> AsyncIterator[ModelResponseStream]: ...


class LiteLLMUpstream:
    """``litellm.acompletion`` with the request's own parameters (credentials included)."""

    async def complete(self, params: Mapping[str, Any]) -> ModelResponse:
        import litellm

        return await litellm.acompletion(**{**params, "stream": False})

    async def stream(self, params: Mapping[str, Any]) -> AsyncIterator[ModelResponseStream]:
        import litellm

        response = await litellm.acompletion(**{**params, "stream": True})
        async for chunk in response:
            yield chunk


async def stream_and_assemble(
    upstream: Upstream, params: Mapping[str, Any], emit: Emit
) -> ModelResponse:
    """Emit every chunk as it arrives, then return the assembled response.

    LiteLLM's chunk builder fills in ``finish_reason="stop"`` for a choice whose stream ended
    without one; a stream cut off that way is not a complete answer, so the assembled choice
    gets its finish reason back as None (and ``is_complete`` refuses to store it).
    """
    import litellm

    chunks: list[ModelResponseStream] = []
    finished: set[int] = set()
    async for chunk in upstream.stream(params):
        chunks.append(chunk)
        finished.update(c.index for c in chunk.choices if c.finish_reason)
        emit(chunk)
    assembled = litellm.stream_chunk_builder(chunks, messages=params.get("messages"))
    if assembled is None:
        raise RuntimeError("upstream stream produced no chunks")
    for choice in assembled.choices:
        if choice.index not in finished:
            choice.finish_reason = None  # type: ignore[assignment]  # litellm types it str-only
    return assembled
