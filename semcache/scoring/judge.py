"""``LLMJudgeScorer``: ask an LLM, through LiteLLM, whether one answer serves both questions.

An optional plug-in for deployments with network access (any model LiteLLM can call). It is
slow and paid, so it is meant to run only inside the uncertainty band of a
:class:`~semcache.scoring.ScoredDecision`; every call's tokens and cost are counted in
:class:`JudgeCost`, to weigh against the upstream call a hit saves. The score is 1.0 for
"yes", 0.0 otherwise; no quality figure is claimed for any model.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from semcache.errors import ScorerError

PROMPT = (
    "Two users asked an assistant these questions.\n"
    "Question A: {query}\n"
    "Question B: {candidate}\n"
    "Would the correct answer to A also be a correct and complete answer to B? "
    "Reply with exactly one word: yes or no."
)


@dataclass
class JudgeCost:
    """Running totals of the judge's calls (``usd`` counts only calls LiteLLM could price)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float = 0.0
    unpriced_calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, prompt_tokens: int, completion_tokens: int, usd: float | None) -> None:
        with self._lock:
            self.calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            if usd is None:
                self.unpriced_calls += 1
            else:
                self.usd += usd


class LLMJudgeScorer:
    """A :class:`~semcache.scoring.HitScorer` that asks ``model`` yes or no.

    ``completion_kwargs`` go to ``litellm.completion`` as they are (``api_base``, ``api_key``,
    ``timeout``...). Upstream errors raise :class:`~semcache.errors.ScorerError`, which the
    semantic stage degrades to a miss.
    """

    def __init__(
        self,
        model: str,
        *,
        prompt: str = PROMPT,
        completion_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self._model = model
        self._prompt = prompt
        self._kwargs = dict(completion_kwargs or {})
        self.cost = JudgeCost()

    @property
    def name(self) -> str:
        return f"llm-judge:{self._model}"

    def score(self, query: str, candidate: str, similarity: float) -> float:
        import litellm
        import openai

        messages = [
            {"role": "user", "content": self._prompt.format(query=query, candidate=candidate)}
        ]
        try:
            response = litellm.completion(
                model=self._model, messages=messages, temperature=0, max_tokens=3, **self._kwargs
            )
        except openai.OpenAIError as exc:
            raise ScorerError(f"judge {self._model!r} failed: {exc}") from exc
        usage = getattr(response, "usage", None)
        self.cost.add(
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
            _price(litellm, response),
        )
        text = (response.choices[0].message.content or "").strip().lower()
        return 1.0 if text.startswith("yes") else 0.0


def _price(litellm: Any, response: Any) -> float | None:
    """The call's cost in USD, or None when LiteLLM has no price for the model."""
    try:
        return float(litellm.completion_cost(completion_response=response))
    except (litellm.exceptions.NotFoundError, litellm.exceptions.BadRequestError, ValueError):
        return None
