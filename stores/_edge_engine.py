"""How the edge store talks to qdrant-edge: error mapping, filters, shard creation.

qdrant-edge is imported on first use only (``edge()``), so importing semcache.stores
stays cheap.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from semcache.errors import SemcacheError, StoreError, StoreLockedError

from ._dirlock import locked_message

if TYPE_CHECKING:
    import qdrant_edge

_KEYWORD_FIELDS = ("namespace", "scope", "model")
_FLOAT_FIELDS = ("expires_at", "created_at")


@contextlib.contextmanager
def engine_errors(operation: str, directory: Path | None = None) -> Iterator[None]:
    """The one place qdrant-edge errors become :class:`StoreError`.

    qdrant-edge raises bare ``Exception`` (``ValueError`` for malformed ids), so nothing
    narrower can be caught; our own errors pass through unchanged. A shard whose WAL is
    locked (opened by something that bypassed our directory lock) is a
    :class:`StoreLockedError` like any other second opener.
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


def _match(field: str, value: str) -> qdrant_edge.FieldCondition:
    q = edge()
    return q.FieldCondition(key=field, match=q.MatchValue(value))


def equalities(**fields: str | None) -> list[qdrant_edge.FieldCondition]:
    """Keyword equalities over the fields that are not None (AND-ed in a ``Filter``)."""
    return [_match(name, value) for name, value in fields.items() if value is not None]


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
        # Extra HNSW links per tenant only: every lookup filters by tenant, while the
        # narrower namespace/scope filters are answered from their payload index, and
        # links for every field would multiply the graph build time.
        indexes = [("tenant", q.KeywordIndexParams(is_tenant=True))]
        indexes += [(f, q.KeywordIndexParams(enable_hnsw=False)) for f in _KEYWORD_FIELDS]
        indexes += [(f, q.FloatIndexParams(enable_hnsw=False)) for f in _FLOAT_FIELDS]
        for name, schema in indexes:
            shard.update(q.UpdateOperation.create_field_index(name, schema))
        shard.flush()
    return shard
