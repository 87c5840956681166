"""Chat chunks as the OpenAI Responses event stream.

``response.created`` and ``response.in_progress``; per output item ``response.output_item
.added``, its deltas (``response.output_text.delta`` inside a content part, or
``response.function_call_arguments.delta``), their ``.done`` events and ``response.output
_item.done``; then ``response.completed`` carrying the whole response (built from the
assembled answer by the same mapping as a non-streamed reply; item ids are derived the same
way in both).
Every event has its ``sequence_number``.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from semcache.protocols.base import answer_of
from semcache.stats import CacheInfo, Tier

if TYPE_CHECKING:
    from litellm import ModelResponse
    from litellm.types.utils import ModelResponseStream

Reply = Callable[[list[Any], Callable[[], "ModelResponse"], CacheInfo], dict[str, Any]]
"""``(answer, build, info)`` → the completed response: ``answer`` names the streamed answer
(:func:`semcache.protocols.base.answer_of`), ``build`` assembles it when it is needed."""


def response_id(answer_id: str) -> str:
    """The Responses id of an answer: a chat answer's ``chatcmpl-…`` becomes ``resp_…``, as
    clients (and LiteLLM reading a cached body) tell a response by that prefix; a Responses
    answer keeps its own."""
    if answer_id.startswith("chatcmpl"):
        return "resp_" + answer_id.removeprefix("chatcmpl").lstrip("-_")
    return answer_id


def message_item_id(response_id: str, index: int) -> str:
    """The id of the message item at ``index`` of a response: derived, so every replay of an
    answer (streamed or not) names its items alike."""
    digest = hashlib.sha256(f"{response_id}:{index}".encode()).hexdigest()[:32]
    return f"msg_{digest}"


class _Items:
    """The output items streamed so far and the one still open."""

    def __init__(self) -> None:
        self.done: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None
        self.tool: int | None = None

    @property
    def index(self) -> int:
        return len(self.done)

    def start(self, item: dict[str, Any], tool: int | None = None) -> list[dict[str, Any]]:
        events = self.finish()
        self.open, self.tool = item, tool
        added = {"type": "response.output_item.added", "output_index": self.index}
        return [*events, {**added, "item": dict(item)}]

    def finish(self) -> list[dict[str, Any]]:
        item = self.open
        if item is None:
            return []
        where = {"item_id": item["id"], "output_index": self.index}
        events: list[dict[str, Any]] = []
        if item["type"] == "message":
            text = item.pop("_text")
            part = {"type": "output_text", "text": text, "annotations": []}
            events += [
                {"type": "response.output_text.done", **where, "content_index": 0, "text": text},
                {"type": "response.content_part.done", **where, "content_index": 0, "part": part},
            ]
            item["content"] = [part]
        else:
            args = item["arguments"]
            events.append(
                {"type": "response.function_call_arguments.done", **where, "arguments": args}
            )
        item["status"] = "completed"
        events.append(
            {"type": "response.output_item.done", "output_index": self.index, "item": item}
        )
        self.done.append(item)
        self.open = self.tool = None
        return events


def _deltas(chunk: Any, items: _Items) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for choice in chunk.choices[:1]:
        delta = choice.delta
        if delta.content:
            if items.open is None or items.open["type"] != "message":
                item_id = message_item_id(response_id(chunk.id), items.index)
                item = {"id": item_id, "type": "message", "status": "in_progress"}
                events += items.start({**item, "role": "assistant", "content": []})
                assert items.open is not None
                items.open["_text"] = ""
                part = {"type": "output_text", "text": "", "annotations": []}
                where = {"item_id": item["id"], "output_index": items.index, "content_index": 0}
                events.append({"type": "response.content_part.added", **where, "part": part})
            assert items.open is not None
            items.open["_text"] += delta.content
            where = {"item_id": items.open["id"], "output_index": items.index, "content_index": 0}
            events.append(
                {
                    "type": "response.output_text.delta",
                    **where,
                    "delta": delta.content,
                    "logprobs": [],
                }
            )
        for call in delta.tool_calls or ():
            function = call.function
            if items.open is None or items.tool != call.index:
                item = {
                    "id": f"fc_{call.id}",  # as LiteLLM names a function-call item
                    "type": "function_call",
                    "status": "in_progress",
                    "call_id": call.id,
                    "name": function.name or "",
                    "arguments": "",
                }
                events += items.start(item, call.index)
            assert items.open is not None
            if function.arguments:
                items.open["arguments"] += function.arguments
                where = {"item_id": items.open["id"], "output_index": items.index}
                events.append(
                    {
                        "type": "response.function_call_arguments.delta",
                        **where,
                        "delta": function.arguments,
                    }
                )
    return events


def _assembled(first: Any, items: list[dict[str, Any]], finish: str | None, usage: Any) -> Any:
    """The chat answer the streamed items make up (what the completed response is mapped
    from): its text, its tool calls, the finish reason and usage the chunks reported."""
    from litellm import ModelResponse

    text = "".join(i["content"][0]["text"] for i in items if i["type"] == "message")
    calls = [
        {
            "id": i["call_id"],
            "type": "function",
            "function": {"name": i["name"], "arguments": i["arguments"]},
        }
        for i in items
        if i["type"] == "function_call"
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return ModelResponse(
        id=first.id,
        created=first.created,
        model=first.model,
        choices=[{"index": 0, "finish_reason": finish, "message": message}],
        usage=usage.model_dump() if usage is not None else None,
    )


async def response_events(
    chunks: AsyncIterator[ModelResponseStream | CacheInfo], reply: Reply
) -> AsyncIterator[list[dict[str, Any]] | CacheInfo]:
    """The Responses events of a chat chunk stream, a batch per chunk (the closing events
    last); ``reply`` gives the completed response (the answer is assembled from the items
    only when the reply is not memoised). A ``CacheInfo`` is
    passed on where it arrives."""
    items = _Items()
    info: CacheInfo | None = None
    first: Any = None
    finish: str | None = None
    usage: Any = None
    sequence = 0

    def numbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        nonlocal sequence
        for event in events:
            event["sequence_number"] = sequence
            sequence += 1
        return events

    async for chunk in chunks:
        if isinstance(chunk, CacheInfo):
            info = chunk
            yield chunk
            continue
        batch: list[dict[str, Any]] = []
        if first is None:
            first = chunk
            shell = {
                "id": response_id(chunk.id),
                "object": "response",
                "created_at": chunk.created,
                "model": chunk.model,
                "status": "in_progress",
                "output": [],
            }
            batch.append({"type": "response.created", "response": shell})
            batch.append({"type": "response.in_progress", "response": dict(shell)})
        for choice in chunk.choices[:1]:
            finish = choice.finish_reason or finish
        usage = getattr(chunk, "usage", None) or usage
        batch += _deltas(chunk, items)
        if batch:
            yield numbered(batch)
    if first is None:
        return
    closing = items.finish()
    answer = answer_of(first.id, first.created, first.model, usage)
    done = items.done
    response = reply(
        answer, lambda: _assembled(first, done, finish, usage), info or CacheInfo(tier=Tier.MISS)
    )
    closing.append({"type": "response.completed", "response": response})
    yield numbered(closing)
