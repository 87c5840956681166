"""Chat chunks as Anthropic's Messages event stream.

``message_start``, then one content block at a time (``content_block_start``, its deltas:
``thinking_delta``, ``text_delta`` or ``input_json_delta``, ``content_block_stop``), then
``message_delta`` (stop reason and usage) and ``message_stop``. Live chunks become events as
they arrive, so a miss streams as the provider answers; a stored answer replays the same way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from semcache.protocols.base import SERVED_BY, served_by
from semcache.stats import CacheInfo

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream

#: Chat finish reasons as Messages stop reasons.
STOP_REASONS: dict[str, str] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}


class _Blocks:
    """The content block being streamed (its index and kind) and the events that change it."""

    def __init__(self) -> None:
        self.index = -1
        self.kind: str | None = None
        self.tool: int | None = None  # the chat tool-call index of an open tool_use block

    def open(
        self, kind: str, block: dict[str, Any], tool: int | None = None
    ) -> list[dict[str, Any]]:
        events = self.close()
        self.index += 1
        self.kind, self.tool = kind, tool
        events.append({"type": "content_block_start", "index": self.index, "content_block": block})
        return events

    def close(self) -> list[dict[str, Any]]:
        if self.kind is None:
            return []
        self.kind = self.tool = None
        return [{"type": "content_block_stop", "index": self.index}]

    def delta(self, delta: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": self.index, "delta": delta}


def _start(chunk: Any) -> dict[str, Any]:
    message = {
        "id": chunk.id,
        "type": "message",
        "role": "assistant",
        "model": chunk.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    return {"type": "message_start", "message": message}


def _usage(usage: Any, info: CacheInfo | None) -> dict[str, Any]:
    """The final usage; a replay's claims no provider prompt-cache tokens and names semcache."""
    if usage is None:
        return {"output_tokens": 0}
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0)
    marker = served_by(info) if info is not None else None
    prompt = int(usage.prompt_tokens or 0)
    out: dict[str, Any] = {"output_tokens": int(usage.completion_tokens or 0)}
    if marker is not None:
        out.update(input_tokens=prompt, cache_read_input_tokens=0)
        out[SERVED_BY] = marker
    else:
        out.update(input_tokens=max(prompt - cached, 0), cache_read_input_tokens=cached)
    return out


def _events_of(chunk: Any, blocks: _Blocks, names: Mapping[str, str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for choice in chunk.choices[:1]:
        delta = choice.delta
        thinking = getattr(delta, "reasoning_content", None)
        if thinking:
            if blocks.kind != "thinking":
                events += blocks.open("thinking", {"type": "thinking", "thinking": ""})
            events.append(blocks.delta({"type": "thinking_delta", "thinking": thinking}))
        if delta.content:
            if blocks.kind != "text":
                events += blocks.open("text", {"type": "text", "text": ""})
            events.append(blocks.delta({"type": "text_delta", "text": delta.content}))
        for call in delta.tool_calls or ():
            function = call.function
            if blocks.kind != "tool_use" or blocks.tool != call.index:
                name = function.name or ""
                block = {"type": "tool_use", "id": call.id, "name": names.get(name, name)}
                events += blocks.open("tool_use", {**block, "input": {}}, call.index)
            if function.arguments:
                json_delta = {"type": "input_json_delta", "partial_json": function.arguments}
                events.append(blocks.delta(json_delta))
    return events


async def message_events(
    chunks: AsyncIterator[ModelResponseStream | CacheInfo], names: Mapping[str, str]
) -> AsyncIterator[list[dict[str, Any]] | CacheInfo]:
    """The Messages events of a chat chunk stream, a batch per chunk (the closing events
    last; ``names``: shortened tool names → the client's); a ``CacheInfo`` is passed on where
    it arrives."""
    blocks = _Blocks()
    info: CacheInfo | None = None
    started = False
    stop_reason: str | None = None
    usage: Any = None
    async for chunk in chunks:
        if isinstance(chunk, CacheInfo):
            info = chunk
            yield chunk
            continue
        batch: list[dict[str, Any]] = []
        if not started:
            started = True
            batch.append(_start(chunk))
        batch += _events_of(chunk, blocks, names)
        for choice in chunk.choices[:1]:
            if choice.finish_reason:
                stop_reason = STOP_REASONS.get(choice.finish_reason, "end_turn")
        usage = getattr(chunk, "usage", None) or usage
        if batch:
            yield batch
    if not started:
        return
    closing = blocks.close()
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    closing.append({"type": "message_delta", "delta": delta, "usage": _usage(usage, info)})
    closing.append({"type": "message_stop"})
    yield closing
