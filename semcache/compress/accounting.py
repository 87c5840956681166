"""What compression saved, counted apart from what the cache saved.

A hit avoids a call, compression makes a miss cheaper; mixing them would explain nothing, so
``CompressionLedger`` keeps its own totals, including what the rewrite calls cost (the net
figure can be negative).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .base import Compressed


def input_cost_usd(model: str, tokens: int) -> float:
    """What ``tokens`` input tokens cost on ``model`` per LiteLLM's price map; 0.0 when the
    model is not in the map (LiteLLM raises its ``BadRequestError`` for those)."""
    if tokens == 0:
        return 0.0
    import openai
    from litellm import cost_per_token

    try:
        prompt_cost, _ = cost_per_token(model=model, prompt_tokens=tokens)
    except openai.OpenAIError:
        return 0.0
    return float(prompt_cost)


@dataclass(frozen=True, slots=True)
class CompressionTotals:
    """A snapshot of a ``CompressionLedger``; money in USD, tokens in the answering model's."""

    requests: int = 0
    used: int = 0
    refused: Mapping[str, int] = field(default_factory=dict)  # Refusal -> requests
    rejections: Mapping[str, int] = field(default_factory=dict)  # Refusal -> rewrites
    lost: Mapping[str, int] = field(default_factory=dict)  # detail kind -> rewrites
    tokens_before: int = 0
    tokens_saved: int = 0
    saved_usd: float = 0.0
    overhead_usd: float = 0.0

    @property
    def net_saved_usd(self) -> float:
        return self.saved_usd - self.overhead_usd

    @property
    def saved_ratio(self) -> float:
        """Share of input tokens removed, over every request seen (0 when none)."""
        return self.tokens_saved / self.tokens_before if self.tokens_before else 0.0


class CompressionLedger:
    """Thread-safe running totals of ``Compressed`` results."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests = self._used = self._before = self._saved = 0
        self._saved_usd = self._overhead_usd = 0.0
        self._refused: Counter[str] = Counter()
        self._rejections: Counter[str] = Counter()
        self._lost: Counter[str] = Counter()

    def record(self, compressed: Compressed, *, model: str) -> float:
        """Count one request's compression; returns the USD its saved tokens were worth."""
        saved_usd = input_cost_usd(model, compressed.saved_tokens) if compressed.used else 0.0
        with self._lock:
            self._requests += 1
            self._before += compressed.tokens_before
            self._overhead_usd += compressed.overhead_usd
            for rejection in compressed.rejections:
                self._rejections[rejection.reason.value] += 1
                self._lost.update(rejection.lost)
            if compressed.refused is not None:
                self._refused[compressed.refused.value] += 1
                return 0.0
            self._used += 1
            self._saved += compressed.saved_tokens
            self._saved_usd += saved_usd
        return saved_usd

    def totals(self) -> CompressionTotals:
        with self._lock:
            return CompressionTotals(
                requests=self._requests,
                used=self._used,
                refused=MappingProxyType(dict(self._refused)),
                rejections=MappingProxyType(dict(self._rejections)),
                lost=MappingProxyType(dict(self._lost)),
                tokens_before=self._before,
                tokens_saved=self._saved,
                saved_usd=self._saved_usd,
                overhead_usd=self._overhead_usd,
            )
