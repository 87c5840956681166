"""The OpenAI Responses endpoint of ``FakeOpenAIServer`` (``POST /v1/responses``).

Enough of OpenAI's Responses API for LiteLLM's native Responses client: a ``response`` body
with one output message, or its event stream (``response.created`` … ``response.output_text
.delta`` … ``response.completed``). The answer is the server's ``responder`` applied to the
request read as a chat body (``instructions`` and ``input`` as messages); every call gets a
response id of its own, as the provider's stored responses do.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any


def as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """The Responses request as the chat body a ``Responder`` reads."""
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    given = body.get("input")
    if isinstance(given, str):
        messages.append({"role": "user", "content": given})
    else:
        for item in given or []:
            if isinstance(item, dict) and item.get("type", "message") == "message":
                content = item.get("content")
                if isinstance(content, list):
                    content = " ".join(str(p.get("text", "")) for p in content)
                messages.append({"role": item.get("role", "user"), "content": content})
    return {"model": body.get("model"), "messages": messages}


def response_id(answer: str, call: int) -> str:
    """A new id for each call (``call``: how many Responses calls the server had)."""
    return "resp_" + hashlib.sha1(f"{call}:{answer}".encode()).hexdigest()[:24]


def response_body(
    body: dict[str, Any], answer: str, ident: str, count_tokens: Callable[[str], int]
) -> dict[str, Any]:
    """The completed ``response`` object answering ``body`` with ``answer`` (its usage counted
    by ``count_tokens``)."""
    prompt = sum(count_tokens(json.dumps(m["content"])) for m in as_chat(body)["messages"])
    completion = count_tokens(answer)
    text = {"type": "output_text", "text": answer, "annotations": []}
    message = {
        "type": "message",
        "id": "msg_" + ident.removeprefix("resp_"),
        "status": "completed",
        "role": "assistant",
        "content": [text],
    }
    return {
        "id": ident,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model"),
        "output": [message],
        "previous_response_id": body.get("previous_response_id"),
        "store": body.get("store", True),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        },
    }


def response_events(completed: dict[str, Any], pieces: list[str]) -> list[dict[str, Any]]:
    """The event stream of ``completed`` with its text in ``pieces``."""
    shell = {**completed, "status": "in_progress", "output": []}
    message = completed["output"][0]
    where = {"item_id": message["id"], "output_index": 0}
    text = message["content"][0]
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": shell},
        {"type": "response.in_progress", "response": shell},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "status": "in_progress", "content": []},
        },
        {
            "type": "response.content_part.added",
            **where,
            "content_index": 0,
            "part": {**text, "text": ""},
        },
    ]
    for piece in pieces:
        events.append(
            {
                "type": "response.output_text.delta",
                **where,
                "content_index": 0,
                "delta": piece,
                "logprobs": [],
            }
        )
    events += [
        {
            "type": "response.output_text.done",
            **where,
            "content_index": 0,
            "text": text["text"],
            "logprobs": [],
        },
        {"type": "response.content_part.done", **where, "content_index": 0, "part": text},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {"type": "response.completed", "response": completed},
    ]
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events
