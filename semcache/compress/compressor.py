"""Compressors: rewriters run message by message, each rewrite checked before it is used.

For every message in ``roles`` with string content of at least ``min_tokens``, each rewriter
gets the best text so far; a rewrite is used only if non-empty, shorter and
``lost_details(original, rewrite)`` is empty, else it is a ``Rejection`` and the next
rewriter starts from the last accepted text. Other messages pass unchanged; the caller's
messages are never mutated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from semcache.errors import ConfigError

from .base import Compressed, Message, Refusal, Rejection, Rewriter
from .check import LostDetail, lost_details
from .model import ModelRewriter
from .rules import RuleRewriter, RuleSet
from .tokens import LiteLLMTokenCounter, TokenCounter

DEFAULT_ROLES = ("system", "user")
Check = Callable[[str, str], list[LostDetail]]


class CheckedCompressor:
    """A ``Compressor`` over a sequence of rewriters (see the module docstring)."""

    def __init__(
        self,
        rewriters: Sequence[Rewriter],
        *,
        name: str,
        min_tokens: int = 200,
        roles: Iterable[str] = DEFAULT_ROLES,
        check: Check = lost_details,
        counter: TokenCounter | None = None,
    ) -> None:
        if not rewriters:
            raise ConfigError("a compressor needs at least one rewriter")
        if min_tokens < 0:
            raise ConfigError(f"min_tokens must be >= 0 tokens, got {min_tokens}")
        self._rewriters = tuple(rewriters)
        self._name = name
        self._min_tokens = min_tokens
        self._roles = frozenset(roles)
        self._check = check
        self._counter = counter if counter is not None else LiteLLMTokenCounter()

    @property
    def name(self) -> str:
        return self._name

    @property
    def min_tokens(self) -> int:
        return self._min_tokens

    async def compress(self, messages: Sequence[Message], *, model: str) -> Compressed:
        before = self._counter.messages(messages, model=model)
        out: list[Message] = list(messages)
        rejections: list[Rejection] = []
        eligible = changed = 0
        overhead_usd, overhead_tokens = 0.0, 0
        for i, message in enumerate(messages):
            text = message.get("content")
            if message.get("role") not in self._roles or not isinstance(text, str):
                continue
            if self._counter.text(text, model=model) < self._min_tokens:
                continue
            eligible += 1
            best = text
            for rewriter in self._rewriters:
                rewrite = await rewriter.rewrite(best, model=model)
                overhead_usd += rewrite.cost_usd
                overhead_tokens += rewrite.tokens
                if rewrite.text is None:
                    reason = rewrite.refused or Refusal.EMPTY
                    rejections.append(Rejection(rewriter.name, reason, (), rewrite.note))
                    continue
                rejection = self._judge(rewriter.name, text, best, rewrite.text, model)
                if rejection is not None:
                    rejections.append(rejection)
                    continue
                best = rewrite.text
            if best != text:
                out[i] = {**message, "content": best}
                changed += 1
        common: dict[str, Any] = {
            "tokens_before": before,
            "compressor": self._name,
            "rejections": tuple(rejections),
            "overhead_usd": overhead_usd,
            "overhead_tokens": overhead_tokens,
        }
        if not changed:
            reason = _refusal(eligible, rejections)
            return Compressed(messages, tokens_after=before, refused=reason, **common)
        after = self._counter.messages(out, model=model)
        return Compressed(out, tokens_after=after, **common)

    def _judge(
        self, rewriter: str, original: str, source: str, new: str, model: str
    ) -> Rejection | None:
        """Why ``new`` (a rewrite of ``source``, itself ``original`` or a rewrite of it) is
        unusable, or None."""
        if not new.strip():
            return Rejection(rewriter, Refusal.EMPTY)
        if self._counter.text(new, model=model) >= self._counter.text(source, model=model):
            return Rejection(rewriter, Refusal.NOT_SHORTER)
        lost = self._check(original, new)
        if lost:
            kinds = tuple(sorted({d.kind for d in lost}))
            return Rejection(
                rewriter, Refusal.LOST_DETAIL, kinds, "; ".join(d.detail for d in lost[:5])
            )
        return None


def _refusal(eligible: int, rejections: Sequence[Rejection]) -> Refusal:
    if not eligible:
        return Refusal.BELOW_MIN_TOKENS
    if any(r.reason is Refusal.LOST_DETAIL for r in rejections):
        return Refusal.LOST_DETAIL
    return rejections[-1].reason if rejections else Refusal.NOTHING_REMOVED


class RuleCompressor(CheckedCompressor):
    """Rules only: free, deterministic, typically 5-25% on verbose prompts."""

    def __init__(
        self,
        rule_sets: Iterable[RuleSet] | None = None,
        *,
        min_tokens: int = 200,
        counter: TokenCounter | None = None,
        **options: Any,
    ) -> None:
        super().__init__(
            [RuleRewriter(rule_sets)],
            name="rules",
            min_tokens=min_tokens,
            counter=counter,
            **options,
        )


class ModelCompressor(CheckedCompressor):
    """A rewrite model only (``ModelRewriter``'s options: ``target_ratio``, ``timeout_s``,
    ``completion_kwargs``)."""

    def __init__(
        self,
        model: str,
        *,
        min_tokens: int = 200,
        counter: TokenCounter | None = None,
        model_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        rewriter = ModelRewriter(model, counter=counter, **dict(model_options or {}))
        super().__init__(
            [rewriter], name="model", min_tokens=min_tokens, counter=counter, **options
        )


class ChainCompressor(CheckedCompressor):
    """Rules first, then the rewrite model on the rules' output; each step checked."""

    def __init__(
        self,
        model: str,
        *,
        rule_sets: Iterable[RuleSet] | None = None,
        min_tokens: int = 200,
        counter: TokenCounter | None = None,
        model_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        rewriters: list[Rewriter] = [
            RuleRewriter(rule_sets),
            ModelRewriter(model, counter=counter, **dict(model_options or {})),
        ]
        super().__init__(rewriters, name="chain", min_tokens=min_tokens, counter=counter, **options)
