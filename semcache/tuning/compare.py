"""Do two answers to one question agree? The checks shadow verification runs, cheapest first.

:class:`AnswerJudge` is the plug point (one method). An identical text always agrees; past
that, :class:`EmbeddingJudge` compares the answers' embeddings (cosine >= a bound), and
:class:`LLMJudge` asks a model through LiteLLM. ``None`` means undecided (no label is
recorded).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from semcache.core.llm_reply import price, reply_text, token_usage, yes_no


@dataclass(frozen=True, slots=True)
class Judgement:
    """``agree``: None when undecided; ``tokens`` / ``cost_usd``: what judging cost."""

    agree: bool | None
    tokens: int = 0
    cost_usd: float = 0.0


class AnswerJudge(Protocol):
    async def judge(self, question: str, cached: str, fresh: str) -> Judgement: ...


def same_text(a: str, b: str) -> bool:
    """Equal after trimming and collapsing whitespace (an exact match, formatting aside)."""
    return " ".join(a.split()) == " ".join(b.split())


class EmbeddingJudge:
    """Agree when the answers are the same text or their embeddings' cosine >= ``min_cosine``."""

    def __init__(self, embed: Callable[[str], Awaitable[np.ndarray]], *, min_cosine: float) -> None:
        self._embed = embed
        self._min_cosine = min_cosine

    async def judge(self, question: str, cached: str, fresh: str) -> Judgement:
        if same_text(cached, fresh):
            return Judgement(True)
        a, b = await self._embed(cached), await self._embed(fresh)
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        cosine = float(np.dot(a, b)) / norm if norm > 0 else 0.0
        return Judgement(cosine >= self._min_cosine)


JUDGE_PROMPT = (
    "Two answers were given to the same question. Reply with exactly one word: YES if they "
    "give the same information (wording may differ), NO if they do not.\n\n"
    "Question: {question}\n\nAnswer A: {cached}\n\nAnswer B: {fresh}"
)


class LLMJudge:
    """Ask ``model`` (any LiteLLM model) whether the answers agree; an unclear reply is
    undecided, an unpriced one costs 0.0 here (:mod:`semcache.core.llm_reply` reads and prices
    it). ``completion`` is ``litellm.acompletion`` unless injected; ``params`` are passed
    through (``mock_response`` in tests)."""

    def __init__(
        self,
        model: str,
        *,
        completion: Callable[..., Awaitable[Any]] | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        self._model = model
        self._completion = completion
        self._params = dict(params or {})

    async def judge(self, question: str, cached: str, fresh: str) -> Judgement:
        if same_text(cached, fresh):
            return Judgement(True)
        completion = self._completion
        if completion is None:
            import litellm

            completion = litellm.acompletion
        prompt = JUDGE_PROMPT.format(question=question, cached=cached, fresh=fresh)
        response = await completion(
            model=self._model,
            messages=[{"role": "user", "content": prompt}],
            temperature=0,
            **self._params,
        )
        usd = price(response)
        return Judgement(
            yes_no(reply_text(response)), sum(token_usage(response)), 0.0 if usd is None else usd
        )
