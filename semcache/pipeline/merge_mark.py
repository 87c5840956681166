"""Chunks passed on to a merged follower, marked with the similarity of the merge.

A streaming caller's CacheInfo needs it before the final answer is known; the in-process
merge (:mod:`semcache.pipeline.merge`) and the cross-replica one
(:mod:`semcache.pipeline.shared_merge`) both set it, delivery reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from semcache.core.coalesce import Role

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream

    from semcache.core.coalesce import Subscription
    from semcache.pipeline.base import Emit, Found

_MARK = "semcache_merged"


def merged_similarity(chunk: Any) -> float | None:
    """The merge similarity a forwarded chunk carries, or None for a chunk of one's own call."""
    hidden = getattr(chunk, "_hidden_params", None)
    value = hidden.get(_MARK) if isinstance(hidden, dict) else None
    return value if isinstance(value, float) else None


def marked(chunk: ModelResponseStream, similarity: float) -> ModelResponseStream:
    """A copy of ``chunk`` carrying the merge similarity (the leader's object stays its own)."""
    copy = chunk.model_copy(deep=True)
    copy._hidden_params = {**(getattr(copy, "_hidden_params", None) or {}), _MARK: similarity}
    return copy


async def pass_on(
    flight: Subscription[Found, ModelResponseStream],
    outer: Emit | None,
    purged: Callable[[], bool],
    similarity: float,
) -> int:
    """Forward the flight's chunks to a streaming caller; how many were passed on.

    A purge since the leader began (``purged()``) stops forwarding before the first chunk,
    so the caller can still fall back to a call of its own.
    """
    if outer is None:
        return 0
    passed_on = 0
    while (chunk := await flight.next_chunk()) is not None:
        if flight.role is Role.ALONE:
            outer(chunk)  # our own call's chunks, after max_wait gave up on the leader
        elif passed_on == 0 and purged():
            return 0
        else:
            outer(marked(chunk, similarity))
        passed_on += 1
    return passed_on if flight.role is Role.FOLLOWER else 0
