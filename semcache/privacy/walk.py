"""Where the text is in an OpenAI chat request and response, and copies with it replaced.

A :class:`TextField` is one string plus its path (``("messages", 2, "content", 0, "text")``).
Scanned: message contents and text parts, tool-call and function-call arguments, a legacy
``prompt``; in responses also ``reasoning_content`` and legacy ``text``. Tool definitions,
image URLs and the model name are the caller's schema and media, not conversation text.
:func:`replace_texts` returns a copy; only containers on a replaced path are new.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from semcache.errors import ConfigError

Path = tuple[str | int, ...]

_TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})


@dataclass(frozen=True, slots=True)
class TextField:
    """One scanned string and where it sits."""

    path: Path
    text: str

    @property
    def where(self) -> str:
        """The path as ``messages[2].content[0].text``."""
        out = ""
        for step in self.path:
            out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
        return out


def request_texts(params: Mapping[str, Any]) -> list[TextField]:
    """Every conversation string in an OpenAI chat (or legacy completion) request."""
    fields: list[TextField] = []
    messages = params.get("messages")
    if isinstance(messages, Sequence) and not isinstance(messages, str):
        for index, message in enumerate(messages):
            if isinstance(message, Mapping):
                fields.extend(_message_texts(message, ("messages", index)))
    prompt = params.get("prompt")
    if isinstance(prompt, str):
        fields.append(TextField(("prompt",), prompt))
    elif isinstance(prompt, Sequence):
        fields.extend(
            TextField(("prompt", i), p) for i, p in enumerate(prompt) if isinstance(p, str)
        )
    return fields


def response_texts(response: Mapping[str, Any]) -> list[TextField]:
    """Every generated string in an OpenAI chat (or legacy completion) response dict."""
    fields: list[TextField] = []
    choices = response.get("choices")
    if not isinstance(choices, Sequence) or isinstance(choices, str):
        return fields
    for index, choice in enumerate(choices):
        if not isinstance(choice, Mapping):
            continue
        base: Path = ("choices", index)
        message = choice.get("message")
        if isinstance(message, Mapping):
            fields.extend(_message_texts(message, (*base, "message")))
            reasoning = message.get("reasoning_content")
            if isinstance(reasoning, str):
                fields.append(TextField((*base, "message", "reasoning_content"), reasoning))
        text = choice.get("text")
        if isinstance(text, str):
            fields.append(TextField((*base, "text"), text))
    return fields


def _message_texts(message: Mapping[str, Any], base: Path) -> Iterator[TextField]:
    content = message.get("content")
    if isinstance(content, str):
        yield TextField((*base, "content"), content)
    elif isinstance(content, Sequence):
        for index, part in enumerate(content):
            if isinstance(part, str):
                yield TextField((*base, "content", index), part)
            elif (
                isinstance(part, Mapping)
                and part.get("type") in _TEXT_PART_TYPES
                and isinstance(part.get("text"), str)
            ):
                yield TextField((*base, "content", index, "text"), part["text"])
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, Sequence) and not isinstance(tool_calls, str):
        for index, call in enumerate(tool_calls):
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping) and isinstance(function.get("arguments"), str):
                path = (*base, "tool_calls", index, "function", "arguments")
                yield TextField(path, function["arguments"])
    function_call = message.get("function_call")
    if isinstance(function_call, Mapping) and isinstance(function_call.get("arguments"), str):
        yield TextField((*base, "function_call", "arguments"), function_call["arguments"])


def replace_texts(obj: Mapping[str, Any], replacements: Mapping[Path, str]) -> dict[str, Any]:
    """A copy of ``obj`` with the string at each path replaced; ``obj`` is left untouched.

    Containers on a replaced path are copied (shallowly); everything else is shared with
    ``obj``. A path that does not lead to a string raises ConfigError.
    """
    result = dict(obj)
    for path, text in replacements.items():
        if not path:
            raise ConfigError("replace_texts: empty path")
        node: Any = result
        for step in path[:-1]:
            child = copy.copy(node[step])
            if isinstance(child, tuple):
                child = list(child)
            node[step] = child
            node = child
        last = path[-1]
        if not isinstance(node[last], str):
            raise ConfigError(f"replace_texts: {TextField(path, '').where} is not a string")
        node[last] = text
    return result
