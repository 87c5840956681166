"""Operators' operations on an assembled cache: counters, purge, the audit listing, shutdown.

They run on the cache's event loop; the facade (``SemanticCache``) only schedules them there.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial

from semcache.compose import Assembly
from semcache.core.fingerprint import resolve_model
from semcache.core.policy import validate_text
from semcache.errors import InvalidRequestType
from semcache.facade.health import with_integrity
from semcache.pipeline.fence import PurgeFilter
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.stats import CacheStats, StoredEntry
from semcache.stores.base import StoreAdmin

#: Seconds closing the store may take before it counts as failed (kind ``store_close``).
CLOSE_TIMEOUT_S = 120.0


async def stats(p: Assembly) -> CacheStats:
    """Counters since start, the tiers' sizes, privacy decisions and compression savings."""
    entries = None
    tier = p.backend.started
    store = tier.store if tier is not None else None
    if isinstance(store, StoreAdmin):
        entries = await p.failopen.call("store_count", lambda: asyncio.to_thread(store.count), None)
    others: tuple[SemanticTier, ...] = () if tier is None else tier.lanes()[1:]
    for lane in others:
        routed = lane.store  # the fallback embedder's store, once open
        if isinstance(routed, StoreAdmin):
            more = await p.failopen.call(
                "store_count", partial(asyncio.to_thread, routed.count), None
            )
            entries = None if more is None or entries is None else entries + more
    snapshot = p.stats.snapshot(
        memory_entries=len(p.memory),
        memory_bytes=p.memory.nbytes,
        in_flight=p.coalescer.in_flight(),
        store_entries=entries,
        privacy=p.privacy.stats(),
        compression=p.compression.totals(),
    )
    snapshot = replace(snapshot, tuning=p.tuning.snapshot(snapshot.counts))
    return with_integrity(snapshot, store)


async def purge(p: Assembly, tenant: str | None, namespace: str | None, model: str | None) -> int:
    """Delete matching entries from every tier (fencing pending writes); how many went.
    Raises InvalidRequest naming the filter that is not a string of valid text, before any
    tier is touched."""
    for field, value in (("tenant", tenant), ("namespace", namespace), ("model", model)):
        if value is None:
            continue
        if not isinstance(value, str):
            raise InvalidRequestType(field, f"expected a string, got {value!r}")
        validate_text(field, value)
    model = resolve_model(model) if model is not None else None
    selection = PurgeFilter(tenant, namespace, model)
    shared = p.shared  # first: its generation bump withdraws for every replica
    removed = 0 if shared is None else await shared.purge(selection)
    return max(removed, await p.writer.purge(selection))


async def recent(p: Assembly, tenant: str | None, limit: int) -> list[StoredEntry]:
    """Newest stored entries with their hit counts ([] without a store that lists them)."""
    tier = await p.backend.ready()
    store = tier.store if tier is not None else None
    if not isinstance(store, StoreAdmin):
        return []
    entries = await asyncio.to_thread(store.recent, tenant=tenant, limit=limit)
    return [
        StoredEntry(
            e.key,
            e.tenant,
            e.namespace,
            e.model,
            e.question,
            e.created_at,
            e.expires_at,
            *p.audit.get(e.key),
        )
        for e in entries
    ]


async def shutdown(p: Assembly) -> None:
    """Flush and close; a store error is counted (kind ``store_close``), never raised."""
    if p.lag is not None:
        p.lag.stop()
    await p.tuning.close()
    await p.writer.close()
    await p.failopen.call("store_close", p.backend.close, None, timeout_s=CLOSE_TIMEOUT_S)
    if p.shared is not None:
        await p.shared.close()
