"""The mark on a chunk passed on to a merged follower: the similarity of the merge.

A streaming caller's CacheInfo needs it before the final answer is known; the in-process
merge (:mod:`semcache.pipeline.merge`) and the cross-replica one
(:mod:`semcache.pipeline.shared_merge`) both set it, delivery reads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream

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
