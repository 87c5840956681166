"""``FakeUpstream``: the upstream plug point answered in-process, for tests where HTTP is not
the point; its answers are real LiteLLM ``ModelResponse`` / ``ModelResponseStream`` objects.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from litellm import ModelResponse
from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

from semcache.testing._openai_server import count_tokens

Script = Callable[[Mapping[str, Any]], str]
"""Request parameters -> answer text."""


def echo(params: Mapping[str, Any]) -> str:
    """Default answer: a deterministic function of the model and the last user message."""
    text = ""
    for message in reversed(params.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            text = content if isinstance(content, str) else str(content)
            break
    return f"[{params.get('model')}] answer to: {text}"


class FakeUpstream:
    """Implements ``semcache.runtime.upstream.Upstream``; every knob may change between calls.

    ``answer``: request parameters -> text. ``delay_s``: seconds before answering (async,
    so concurrent calls overlap, as real ones do). ``chunks``: pieces a streamed answer is
    cut into; ``chunk_delay_s`` between them. ``fail_next``: exceptions raised by the next
    calls, one each. ``abort_after``: a stream ends after that many chunks with no finish
    reason (a cut-off answer). ``model`` / ``system_fingerprint``: reported on responses
    (None: the requested model). ``calls`` lists the parameters of every call;
    ``cancelled`` counts calls cancelled before they answered (a hedged lookup's hit, a
    caller that went away).
    """

    def __init__(
        self,
        answer: Script = echo,
        *,
        delay_s: float = 0.0,
        chunks: int = 3,
        chunk_delay_s: float = 0.0,
        model: str | None = None,
        system_fingerprint: str | None = None,
    ) -> None:
        self.answer = answer
        self.delay_s = delay_s
        self.chunks = chunks
        self.chunk_delay_s = chunk_delay_s
        self.model = model
        self.system_fingerprint = system_fingerprint
        self.fail_next: list[BaseException] = []
        self.abort_after: int | None = None
        self.calls: list[dict[str, Any]] = []
        self.cancelled = 0
        self._ids = itertools.count(1)

    @property
    def call_count(self) -> int:
        return len(self.calls)

    async def complete(self, params: Mapping[str, Any]) -> ModelResponse:
        text = await self._begin(params)
        return ModelResponse(
            id=f"fake-{next(self._ids)}",
            created=int(time.time()),
            model=self.model or params.get("model"),
            system_fingerprint=self.system_fingerprint,
            choices=[
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
            usage=self._usage(params, text),
        )

    async def stream(self, params: Mapping[str, Any]) -> AsyncIterator[ModelResponseStream]:
        text = await self._begin(params)
        pieces = _split(text, self.chunks)
        response_id = f"fake-{next(self._ids)}"
        for i, piece in enumerate(pieces):
            if self.abort_after is not None and i >= self.abort_after:
                return
            if i and self.chunk_delay_s:
                await asyncio.sleep(self.chunk_delay_s)
            last = i == len(pieces) - 1
            yield ModelResponseStream(
                id=response_id,
                model=self.model or params.get("model"),
                system_fingerprint=self.system_fingerprint,
                choices=[
                    StreamingChoices(
                        index=0,
                        delta=Delta(role="assistant" if i == 0 else None, content=piece),
                        finish_reason="stop" if last else None,
                    )
                ],
            )

    async def _begin(self, params: Mapping[str, Any]) -> str:
        self.calls.append(dict(params))
        if self.delay_s:
            try:
                await asyncio.sleep(self.delay_s)
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        if self.fail_next:
            raise self.fail_next.pop(0)
        return self.answer(params)

    @staticmethod
    def _usage(params: Mapping[str, Any], text: str) -> dict[str, int]:
        prompt = sum(count_tokens(str(m.get("content"))) for m in params.get("messages") or [])
        completion = count_tokens(text)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }


def _split(text: str, parts: int) -> list[str]:
    parts = max(1, min(parts, len(text) or 1))
    size = -(-len(text) // parts)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
