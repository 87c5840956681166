"""``LLMJudgeScorer``: ask an LLM, through LiteLLM, whether one answer serves both questions.

Slow and paid, so meant to run only inside a :class:`~semcache.scoring.ScoredDecision`'s
band; every call's tokens and cost are counted in :class:`JudgeCost`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from semcache.core.llm_reply import price, reply_text, token_usage, yes_no
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
    """Running totals of the judge's answered calls; ``usd`` sums the calls LiteLLM could
    price, ``unpriced_calls`` counts the others (never booked as free)."""

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


class CostSink(Protocol):
    """Where a judge call's tokens and price go (``usd`` None: LiteLLM has no price)."""

    def add(self, prompt_tokens: int, completion_tokens: int, usd: float | None) -> None: ...


class LLMJudgeScorer:
    """A :class:`~semcache.scoring.HitScorer` that asks ``model`` yes or no (yes 1.0, else 0.0).
    ``completion_kwargs`` go to ``litellm.completion``; calls are added to :attr:`cost` and
    ``sink``; upstream errors raise :class:`~semcache.errors.ScorerError`.
    """

    def __init__(
        self,
        model: str,
        *,
        prompt: str = PROMPT,
        completion_kwargs: Mapping[str, Any] | None = None,
        sink: CostSink | None = None,
    ) -> None:
        self._model = model
        self._prompt = prompt
        self._kwargs = dict(completion_kwargs or {})
        self._sink = sink
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
        prompt_tokens, completion_tokens = token_usage(response)
        usd = price(response)
        self.cost.add(prompt_tokens, completion_tokens, usd)
        if self._sink is not None:
            self._sink.add(prompt_tokens, completion_tokens, usd)
        return 1.0 if yes_no(reply_text(response)) else 0.0

    def score_many(self, pairs: Sequence[tuple[str, str]], *, workers: int = 4) -> list[float]:
        """Scores of many ``(query, candidate)`` pairs, ``workers`` calls at a time (for
        calibration; the cache scores one candidate per lookup)."""
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda pair: self.score(pair[0], pair[1], 0.0), pairs))
