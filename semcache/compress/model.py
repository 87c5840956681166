"""A rewrite model: any LiteLLM model asked to say the same prompt in about half the tokens.

Its output is refused when the call fails, is empty, stopped at its token limit or is not
shorter; the detail check then decides the rest. The call's cost is reported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from semcache.errors import ConfigError

from .base import Refusal, Rewrite
from .tokens import LiteLLMTokenCounter, TokenCounter

REWRITE_INSTRUCTION = (
    "You compress prompts. Rewrite the user's text so that it says the same thing in at most "
    "{budget} tokens. Keep every instruction, constraint, question, number and unit, date, "
    "name, negation (not, never, 不, 别) and comparison word. Copy code, URLs, JSON and quoted "
    "text exactly. Remove greetings, filler, politeness and repetition. Keep the language of "
    "the text. Output only the rewritten text, nothing else."
)
"""The system message of every rewrite call; ``{budget}`` is the token target."""


class ModelRewriter:
    """A ``Rewriter`` that asks ``model`` (any LiteLLM model id) for a shorter text:
    ``target_ratio`` of the input's tokens, at most as many as the input has;
    ``completion_kwargs`` go to ``litellm.acompletion`` unchanged.
    """

    def __init__(
        self,
        model: str,
        *,
        target_ratio: float = 0.5,
        timeout_s: float = 30.0,
        completion_kwargs: Mapping[str, Any] | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("compression model must be a non-empty LiteLLM model id")
        if not 0.0 < target_ratio < 1.0:
            raise ConfigError(f"target_ratio must be strictly between 0 and 1, got {target_ratio}")
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s must be > 0 seconds, got {timeout_s}")
        self._model = model
        self._ratio = target_ratio
        self._timeout_s = timeout_s
        self._kwargs = dict(completion_kwargs or {})
        self._counter = counter if counter is not None else LiteLLMTokenCounter()

    @property
    def name(self) -> str:
        return f"model:{self._model}"

    def request(self, text: str) -> dict[str, Any]:
        """The ``litellm.acompletion`` arguments for rewriting ``text`` (pure)."""
        tokens = self._counter.text(text, model=self._model)
        budget = max(1, math.ceil(tokens * self._ratio))
        return {
            **self._kwargs,
            "model": self._model,
            "messages": [
                {"role": "system", "content": REWRITE_INSTRUCTION.format(budget=budget)},
                {"role": "user", "content": text},
            ],
            "temperature": 0,
            "max_tokens": max(16, tokens),
            "timeout": self._timeout_s,
        }

    async def rewrite(self, text: str, *, model: str) -> Rewrite:
        import litellm
        import openai

        from semcache.core.answer import response_cost

        try:
            response = await litellm.acompletion(**self.request(text))
        except openai.OpenAIError as exc:  # LiteLLM maps every provider error to these
            return Rewrite(None, Refusal.MODEL_ERROR, note=type(exc).__name__)
        cost = response_cost(response)
        usage = getattr(response, "usage", None)
        spent = int(getattr(usage, "total_tokens", 0) or 0)
        choice = response.choices[0]
        content = (choice.message.content or "").strip()
        if choice.finish_reason == "length":
            return Rewrite(None, Refusal.TRUNCATED, cost_usd=cost, tokens=spent)
        if not content:
            return Rewrite(None, Refusal.EMPTY, cost_usd=cost, tokens=spent)
        return Rewrite(content, cost_usd=cost, tokens=spent)
