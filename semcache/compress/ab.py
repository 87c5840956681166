"""A/B test of prompt compression: the same model answers each prompt original and compressed.

For every prompt ``run_ab`` records tokens saved, any refusal, the answers' embedding cosine,
a judge's verdict when given, and any listed ``details`` a used compression lost (a failure
the check let through). Input: JSON lines ``{"messages": [...]}`` or ``{"prompt": ...}``,
optionally ``id``, ``lang``, ``verbose``, ``details``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from semcache.embedders.base import Embedder
from semcache.errors import ConfigError

from .base import Compressor, Message
from .judge import Verdict, judge_messages, parse_verdict


@dataclass(frozen=True, slots=True)
class Prompt:
    id: str
    messages: tuple[Mapping[str, Any], ...]
    lang: str = ""
    verbose: bool | None = None
    details: tuple[tuple[str, str], ...] = ()  # (kind, text)


@dataclass(frozen=True, slots=True)
class PromptResult:
    """One prompt's A/B outcome; ``similarity``/``verdict`` are None when not measured."""

    id: str
    lang: str
    verbose: bool | None
    tokens_before: int
    tokens_after: int
    used: bool
    refused: str | None
    rejections: tuple[str, ...]  # "<rewriter>:<reason>[:kinds]"
    details_lost: tuple[str, ...]  # listed details a used compression dropped
    similarity: float | None = None
    verdict: Verdict | None = None
    answer_original: str = field(default="", repr=False)
    answer_compressed: str = field(default="", repr=False)

    @property
    def saved_ratio(self) -> float:
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0


def load_prompts(path: str | Path, *, limit: int | None = None) -> list[Prompt]:
    """Prompts from a JSON-lines file; a bad line raises ``ConfigError`` naming it."""
    prompts: list[Prompt] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read prompts file {str(path)!r}: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: not JSON ({exc})") from exc
        if not isinstance(row, dict):
            raise ConfigError(f"{where}: each line is a JSON object")
        messages = row.get("messages")
        if messages is None and isinstance(row.get("prompt"), str):
            messages = [{"role": "user", "content": row["prompt"]}]
        if not isinstance(messages, list) or not messages:
            raise ConfigError(f"{where}: field 'messages' (or 'prompt') is required")
        details = tuple((d["kind"], d["text"]) for d in row.get("details") or [])
        prompts.append(
            Prompt(
                id=str(row.get("id", number)),
                messages=tuple(messages),
                lang=str(row.get("lang", "")),
                verbose=row.get("verbose"),
                details=details,
            )
        )
        if limit is not None and len(prompts) >= limit:
            break
    return prompts


def _text(messages: Sequence[Message]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def details_lost(prompt: Prompt, compressed: Sequence[Message]) -> tuple[str, ...]:
    """Listed details present in the original and absent from ``compressed`` (casefolded)."""
    before, after = _text(prompt.messages).casefold(), _text(compressed).casefold()
    return tuple(
        f"{kind}:{text}"
        for kind, text in prompt.details
        if text.casefold() in before and text.casefold() not in after
    )


class ABRunner:
    """Runs the A/B for a list of prompts against one answering model.

    ``completion_kwargs`` (``api_base``, ``api_key``, ...) go to every answer and judge call;
    ``embedder`` (optional) embeds the two answers; ``judge`` is a LiteLLM model id or None.
    """

    def __init__(
        self,
        compressor: Compressor,
        *,
        model: str,
        embedder: Embedder | None = None,
        judge: str | None = None,
        completion_kwargs: Mapping[str, Any] | None = None,
        concurrency: int = 4,
    ) -> None:
        if concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {concurrency}")
        self._compressor = compressor
        self._model = model
        self._embedder = embedder
        self._judge = judge
        self._kwargs = dict(completion_kwargs or {})
        self._slots = asyncio.Semaphore(concurrency)

    async def run(self, prompts: Sequence[Prompt]) -> list[PromptResult]:
        results = await asyncio.gather(*(self._one(p) for p in prompts))
        if self._embedder is not None:
            results = self._with_similarity(results, self._embedder)
        return results

    async def _complete(self, model: str, messages: Sequence[Message]) -> str:
        import litellm

        async with self._slots:
            response = await litellm.acompletion(
                model=model, messages=[dict(m) for m in messages], temperature=0, **self._kwargs
            )
        return response.choices[0].message.content or ""

    async def _one(self, prompt: Prompt) -> PromptResult:
        async with self._slots:
            compressed = await self._compressor.compress(prompt.messages, model=self._model)
        rejections = tuple(
            ":".join(filter(None, (r.rewriter, r.reason.value, ",".join(r.lost))))
            for r in compressed.rejections
        )
        original = await self._complete(self._model, prompt.messages)
        answer, verdict = original, None
        if compressed.used:
            answer = await self._complete(self._model, compressed.messages)
            if self._judge is not None:
                request = _text(prompt.messages)
                reply = await self._complete(self._judge, judge_messages(request, original, answer))
                verdict = parse_verdict(reply)
        return PromptResult(
            id=prompt.id,
            lang=prompt.lang,
            verbose=prompt.verbose,
            tokens_before=compressed.tokens_before,
            tokens_after=compressed.tokens_after,
            used=compressed.used,
            refused=None if compressed.refused is None else compressed.refused.value,
            rejections=rejections,
            details_lost=details_lost(prompt, compressed.messages) if compressed.used else (),
            verdict=verdict,
            answer_original=original,
            answer_compressed=answer,
        )

    @staticmethod
    def _with_similarity(results: list[PromptResult], embedder: Embedder) -> list[PromptResult]:
        pairs = [(i, r) for i, r in enumerate(results) if r.used]
        if not pairs:
            return results
        texts = [t for _, r in pairs for t in (r.answer_original, r.answer_compressed)]
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
        out = list(results)
        for n, (i, result) in enumerate(pairs):
            similarity = float(vectors[2 * n] @ vectors[2 * n + 1])
            out[i] = _replace(result, similarity=similarity)
        return out


def _replace(result: PromptResult, **changes: Any) -> PromptResult:
    data = {f: getattr(result, f) for f in PromptResult.__dataclass_fields__}
    return PromptResult(**{**data, **changes})


@dataclass(frozen=True, slots=True)
class Summary:
    """Totals over a group of results; ratios are over prompts unless named per token."""

    prompts: int
    used: int
    refused: dict[str, int]
    lost_detail_rejections: int  # prompts with at least one rewrite refused for a lost detail
    tokens_before: int
    tokens_after: int
    let_through: int  # used compressions that lost a listed detail
    mean_similarity: float | None
    min_similarity: float | None
    judged_same: int
    judged: int

    @property
    def saved_ratio(self) -> float:
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0

    @property
    def rejection_rate(self) -> float:
        """Share of prompts where the preservation check refused at least one rewrite."""
        return self.lost_detail_rejections / self.prompts if self.prompts else 0.0


def summarise(results: Sequence[PromptResult]) -> Summary:
    refused: dict[str, int] = {}
    for r in results:
        if r.refused is not None:
            refused[r.refused] = refused.get(r.refused, 0) + 1
    sims = [r.similarity for r in results if r.similarity is not None]
    verdicts = [r.verdict for r in results if r.verdict is not None]
    return Summary(
        prompts=len(results),
        used=sum(r.used for r in results),
        refused=refused,
        lost_detail_rejections=sum(any(":lost_detail" in x for x in r.rejections) for r in results),
        tokens_before=sum(r.tokens_before for r in results),
        tokens_after=sum(r.tokens_after for r in results),
        let_through=sum(bool(r.details_lost) for r in results),
        mean_similarity=float(np.mean(sims)) if sims else None,
        min_similarity=float(np.min(sims)) if sims else None,
        judged_same=sum(v == "same" for v in verdicts),
        judged=len(verdicts),
    )


def result_row(result: PromptResult) -> dict[str, Any]:
    """One JSON-ready row for ``results.jsonl`` (answers included)."""
    row = asdict(result)
    row["saved_ratio"] = result.saved_ratio
    return row
