"""How the edge store talks to qdrant-edge: error mapping, filters, shard creation.

qdrant-edge is imported on first use only (``edge()``), so importing semcache.stores
stays cheap.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from semcache.errors import SemcacheError, StoreError, StoreLockedError

from ._dirlock import locked_message
from .where import EXPIRES_AT, KEYWORD_FIELDS, Selection, Where

if TYPE_CHECKING:
    import qdrant_edge

_FLOAT_FIELDS = (EXPIRES_AT, "created_at")


@contextlib.contextmanager
def engine_errors(operation: str, directory: Path | None = None) -> Iterator[None]:
    """The one place qdrant-edge errors become :class:`StoreError` (it raises bare ``Exception``);
    a shard whose WAL is locked is a :class:`StoreLockedError` like any second opener.
    """
    try:
        yield
    except SemcacheError:
        raise
    except Exception as exc:  # qdrant-edge has no exception classes of its own
        if directory is not None and "WouldBlock" in str(exc):
            raise StoreLockedError(locked_message(directory, "unknown")) from exc
        raise StoreError(f"qdrant-edge {operation} failed: {exc}") from exc


def edge() -> Any:
    import qdrant_edge

    return qdrant_edge


def _equalities(pairs: tuple[tuple[str, str], ...]) -> list[qdrant_edge.FieldCondition]:
    q = edge()
    return [q.FieldCondition(key=name, match=q.MatchValue(value)) for name, value in pairs]


def live_filter(where: Where) -> qdrant_edge.Filter:
    """``where`` in qdrant-edge's terms: its partition equalities AND ``expires_at > now``
    AND each metadata filter (one value: ``MatchValue``; several: ``MatchAny``)."""
    q = edge()
    live = q.FieldCondition(key=EXPIRES_AT, range=q.RangeFloat(gt=where.now))
    metadata = [
        q.FieldCondition(
            key=path,
            match=q.MatchValue(values[0]) if len(values) == 1 else q.MatchAny(list(values)),
        )
        for path, values in where.metadata_conditions()
    ]
    must = [*_equalities(where.equalities()), live, *metadata]
    return cast("qdrant_edge.Filter", q.Filter(must=must))


def expired_filter(now: float) -> qdrant_edge.Filter:
    """Entries that are not live at ``now`` (``expires_at <= now``)."""
    q = edge()
    expired = q.FieldCondition(key=EXPIRES_AT, range=q.RangeFloat(lte=now))
    return cast("qdrant_edge.Filter", q.Filter(must=[expired]))


def selection_filter(selection: Selection) -> qdrant_edge.Filter:
    return cast("qdrant_edge.Filter", edge().Filter(must=_equalities(selection.equalities())))


def create_shard(directory: Path, dim: int, hnsw_threshold: int) -> Any:
    """A new shard with cosine vectors of ``dim`` and the payload indexes lookups use.

    ``hnsw_threshold`` (points) becomes the engine's ``indexing_threshold`` (KiB of vectors,
    rounded down: the engine indexes a segment once its vectors take at least that much).
    """
    q = edge()
    threshold_kb = max(1, hnsw_threshold * dim * 4 // 1024)
    config = q.EdgeConfig(
        vectors=q.EdgeVectorParams(size=dim, distance=q.Distance.Cosine),
        optimizers=q.EdgeOptimizersConfig(indexing_threshold=threshold_kb),
    )
    with engine_errors(f"create {directory}"):
        shard = q.EdgeShard.create(str(directory), config)
        ensure_indexes(shard)
        shard.flush()
    return shard


def ensure_indexes(shard: Any) -> bool:
    """Create the payload indexes lookups use that ``shard`` lacks; True if any was missing.

    Run on new shards and on every load, so a store made before a field joined the filter
    (``embedder``) gets its index once instead of filtering that field unindexed.
    """
    q = edge()
    # Extra HNSW links per tenant only: every lookup filters by tenant, while the
    # narrower fields are answered from their payload index, and links for every field
    # would multiply the graph build time.
    wanted = [("tenant", q.KeywordIndexParams(is_tenant=True))]
    wanted += [
        (f, q.KeywordIndexParams(enable_hnsw=False)) for f in KEYWORD_FIELDS if f != "tenant"
    ]
    wanted += [(f, q.FloatIndexParams(enable_hnsw=False)) for f in _FLOAT_FIELDS]
    present = set(shard.info().payload_schema)
    missing = [(name, schema) for name, schema in wanted if name not in present]
    for name, schema in missing:
        shard.update(q.UpdateOperation.create_field_index(name, schema))
    return bool(missing)
