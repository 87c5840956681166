"""How an answer is kept: the envelope stored in ``Entry.response`` and its way back out.

The envelope is JSON ``{"v": 1, "response": <ModelResponse dict>, "cost_usd": float}`` so
the money an answer cost is known on every later hit without a price lookup. Every caller
gets its own freshly built response object (callers may mutate what they receive).
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from litellm import ModelResponse
from litellm.types.utils import ModelResponseStream

from semcache.core.llm_reply import price
from semcache.stores.base import Entry

ENVELOPE_VERSION = 1


def response_cost(response: ModelResponse) -> float:
    """What the upstream call cost in USD per LiteLLM's price map, booked as 0.0 when the
    map has no price (:func:`semcache.core.llm_reply.price` is the one pricing function)."""
    usd = price(response)
    return 0.0 if usd is None else usd


def encode(response: ModelResponse, cost_usd: float) -> str:
    return json.dumps(
        {"v": ENVELOPE_VERSION, "response": response.model_dump(), "cost_usd": cost_usd},
        separators=(",", ":"),
        ensure_ascii=False,
    )


def decode(envelope: str) -> tuple[dict[str, Any], float]:
    """The response dict and its cost; raises ValueError on an unknown envelope."""
    data = json.loads(envelope)
    if data.get("v") != ENVELOPE_VERSION:
        raise ValueError(f"unknown answer envelope version {data.get('v')!r}")
    return data["response"], float(data.get("cost_usd", 0.0))


def build_response(response: dict[str, Any]) -> ModelResponse:
    return ModelResponse(**response)


def total_tokens(response: dict[str, Any]) -> int:
    usage = response.get("usage") or {}
    return int(usage.get("total_tokens") or 0)


def as_stream(response: dict[str, Any]) -> Iterator[ModelResponseStream]:
    """A stored answer replayed as stream chunks (LiteLLM's own cache-hit conversion)."""
    from litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response import (
        convert_to_streaming_response,
    )

    return convert_to_streaming_response(json.loads(json.dumps(response)))


def is_complete(response: ModelResponse) -> bool:
    """True when every choice finished (a cut-off stream has no finish_reason)."""
    choices = getattr(response, "choices", None) or []
    return bool(choices) and all(getattr(c, "finish_reason", None) for c in choices)


@dataclass(frozen=True, slots=True)
class Answer:
    """A stored entry made ready to serve many times: ``prototype`` pickles a clean
    ``ModelResponse`` once, and unpickling gives each caller a private copy faster than
    validating the JSON again. In this process's memory only (never from a store).
    """

    entry: Entry
    prototype: bytes
    cost_usd: float
    tokens: int

    @classmethod
    def of(cls, entry: Entry) -> Answer:
        response, cost = decode(entry.response)
        prototype = pickle.dumps(build_response(response), protocol=pickle.HIGHEST_PROTOCOL)
        return cls(entry, prototype, cost, total_tokens(response))

    @property
    def nbytes(self) -> int:
        return len(self.entry.response) + len(self.prototype)

    def response(self) -> ModelResponse:
        """A fresh response object, owned by the caller."""
        return pickle.loads(self.prototype)
