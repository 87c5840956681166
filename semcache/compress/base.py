"""What a compressor returns and the two plug points it is built from.

``Compressor``: messages in, a ``Compressed`` out, never an exception for a prompt it cannot
shorten. ``Rewriter``: one way of shortening one message's text; compressors check every
rewrite against the original (``semcache.compress.check``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

Message = Mapping[str, Any]


class Refusal(StrEnum):
    """Why a rewrite (or a whole compression) was not used; the original was sent instead."""

    BELOW_MIN_TOKENS = "below_min_tokens"  # no message long enough to be worth it
    NOTHING_REMOVED = "nothing_removed"  # the rewriter found nothing to cut
    EMPTY = "empty"  # the rewrite was empty or blank
    NOT_SHORTER = "not_shorter"  # the rewrite had as many tokens as its input, or more
    TRUNCATED = "truncated"  # the rewrite model stopped at its token limit
    LOST_DETAIL = "lost_detail"  # the rewrite dropped an answer-determining detail
    MODEL_ERROR = "model_error"  # the rewrite model call failed


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One rewriter's answer for one text: the shorter text, or why there is none.

    ``cost_usd`` and ``tokens`` are what producing it cost (a model call; 0 for rules).
    """

    text: str | None
    refused: Refusal | None = None
    note: str = ""
    cost_usd: float = 0.0
    tokens: int = 0

    def __post_init__(self) -> None:
        if (self.text is None) == (self.refused is None):
            raise ValueError("a Rewrite has either a text or a refusal, not both or neither")


@dataclass(frozen=True, slots=True)
class Rejection:
    """A rewrite that was not used: which rewriter, why, and (for lost details) which kinds."""

    rewriter: str
    reason: Refusal
    lost: tuple[str, ...] = ()  # detail kinds: number, unit, date, negation, entity, ...
    note: str = ""


@dataclass(frozen=True, slots=True)
class Compressed:
    """The messages to send upstream and what compression did to them.

    ``messages`` is the caller's list itself when nothing was used (``refused`` says why), else a
    new list with new dicts for changed messages. Token counts are for the target model;
    ``overhead_usd``/``overhead_tokens`` are what the rewrites cost.
    """

    messages: Sequence[Message]
    tokens_before: int
    tokens_after: int
    compressor: str
    refused: Refusal | None = None
    rejections: tuple[Rejection, ...] = field(default=())
    overhead_usd: float = 0.0
    overhead_tokens: int = 0

    @property
    def used(self) -> bool:
        """True when ``messages`` differ from the caller's (a rewrite passed every check)."""
        return self.refused is None

    @property
    def saved_tokens(self) -> int:
        return self.tokens_before - self.tokens_after


@runtime_checkable
class Rewriter(Protocol):
    """Shortens one message text. Must not raise for a text it cannot shorten: refuse."""

    @property
    def name(self) -> str: ...

    async def rewrite(self, text: str, *, model: str) -> Rewrite:
        """A shorter ``text`` for a request to ``model`` (the model answering, not rewriting)."""
        ...


@runtime_checkable
class Compressor(Protocol):
    """Shortens a request's messages before they go upstream; see ``Compressed``."""

    @property
    def name(self) -> str: ...

    async def compress(self, messages: Sequence[Message], *, model: str) -> Compressed: ...
