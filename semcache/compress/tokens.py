"""Token counts as the answering model's tokenizer sees them (LiteLLM's ``token_counter``),
since they are what compression saves in the upstream bill.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .base import Message


class TokenCounter(Protocol):
    """Counts tokens for ``model``; injected so tests and benchmarks can pin it."""

    def text(self, text: str, *, model: str) -> int: ...

    def messages(self, messages: Sequence[Message], *, model: str) -> int: ...


class LiteLLMTokenCounter:
    """The default counter: ``litellm.token_counter`` (imported on first use)."""

    def text(self, text: str, *, model: str) -> int:
        from litellm import token_counter

        return int(token_counter(model=model, text=text))

    def messages(self, messages: Sequence[Message], *, model: str) -> int:
        from litellm import token_counter

        return int(token_counter(model=model, messages=[dict(m) for m in messages]))
