"""The direct API's loop side beside the lookup: ``check``'s option checks and ``drop``.

``check(..., filters=, num_results=, threshold=)`` looks up through
:meth:`semcache.pipeline.lookup.Lookup.many` (the same gates and tiers as every lookup);
this module only turns its options into values, naming the field that is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from semcache.errors import ConfigError, InvalidRequest
from semcache.pipeline.fence import PurgeFilter
from semcache.pipeline.lookup import Filters
from semcache.pipeline.semantic_tier import EXACT_ONLY_SCOPE
from semcache.stores.where import metadata_filters

if TYPE_CHECKING:
    from semcache.compose import Assembly
    from semcache.pipeline.base import Request


def parse_filters(filters: Mapping[str, Any] | None) -> Filters:
    """``check``'s ``filters`` as store filters; InvalidRequest naming ``filters.<key>``."""
    try:
        return metadata_filters(filters)
    except ConfigError as exc:
        raise InvalidRequest("filters", str(exc)) from None


def parse_threshold(threshold: float | None) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise InvalidRequest("threshold", f"expected a cosine similarity, got {threshold!r}")
    if not -1.0 <= threshold <= 1.0:  # also refuses NaN
        raise InvalidRequest(
            "threshold", f"expected a cosine similarity in [-1, 1], got {threshold}"
        )
    return float(threshold)


async def drop(parts: Assembly, request: Request) -> int:
    """Withdraw the entry stored for ``request`` from memory and the store (the write fence
    keeps a pending write of it from landing after), and with a shared Redis tier from Redis
    and every replica (through the purge log); returns how many copies went."""
    key = request.keys.exact

    async def expire() -> int:
        tier = await parts.backend.ready()
        if tier is None or tier.store is None or tier.embedder is None:
            return 0
        now = parts.clock()
        entry = await tier.retrieve(
            key,
            tenant=request.tenant,
            namespace=request.control.namespace,
            scope=request.entry_scope or EXACT_ONLY_SCOPE,
            now=now,
        )
        if entry is None:
            return 0
        lane = tier.lane_named(entry.embedder)  # a routed entry is in the fallback's store
        await lane.upsert(replace(entry, expires_at=now, vector=lane.exact_only_vector()))
        return 1

    removed = await parts.writer.withdraw(key, expire)
    if parts.shared is not None:  # raises on a Redis error: the caller must know
        scope = request.entry_scope or EXACT_ONLY_SCOPE
        namespace = request.control.namespace
        withdrawn = PurgeFilter(request.tenant, namespace, request.keys.model, key=key, scope=scope)
        removed += await parts.shared.withdraw(withdrawn)
    return removed
