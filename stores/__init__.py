"""Vector stores: where cached entries live and how they are found by meaning.

``QdrantEdgeStore`` (default, in this process), ``QdrantStore`` (a Qdrant server) and
``RedisVectorStore`` (Redis 8 vector sets) implement :class:`VectorStore` and
:class:`StoreAdmin` with the same behaviour; :class:`Where` decides what a lookup may see.
Backends are imported on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from semcache.errors import ConfigError

from .base import NEVER_EXPIRES, Entry, Match, StoreAdmin, VectorStore, point_id
from .where import Selection, Where, is_live

if TYPE_CHECKING:
    from .edge import QdrantEdgeStore
    from .qdrant import QdrantStore
    from .redis_vectors import RedisVectorStore

__all__ = [
    "NEVER_EXPIRES",
    "Entry",
    "Match",
    "QdrantEdgeStore",
    "QdrantStore",
    "RedisVectorStore",
    "Selection",
    "StoreAdmin",
    "VectorStore",
    "Where",
    "is_live",
    "open_store",
    "point_id",
]

_LAZY = {
    "QdrantEdgeStore": ".edge",
    "QdrantStore": ".qdrant",
    "RedisVectorStore": ".redis_vectors",
}
BACKENDS = ("edge", "qdrant", "redis", "none")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_store(
    backend: str,
    *,
    path: str | Path,
    url: str | None = None,
    api_key: str | None = None,
    prefer_grpc: bool = True,
    collection: str = "semcache",
    timeout_s: float = 2.0,
    redis_client: Any = None,
    redis_prefix: str = "semcache",
) -> VectorStore | None:
    """The store these arguments describe, not yet set up (``backend="none"``: None).

    ``"edge"``: the embedded store in ``path``; ``"qdrant"``: the server at ``url`` (required);
    ``"redis"``: vector sets through ``redis_client`` (a client or URL; required) under
    ``redis_prefix``. Other backends' arguments are ignored. Raises :class:`ConfigError`
    naming the argument.
    """
    if backend == "none":
        return None
    if backend == "edge":
        from .edge import QdrantEdgeStore

        return QdrantEdgeStore(path)
    if backend == "qdrant":
        if url is None:
            raise ConfigError('store backend "qdrant" needs a server url (SEMCACHE_STORE__URL)')
        from .qdrant import QdrantStore

        return QdrantStore(
            url,
            api_key=api_key,
            collection=collection,
            prefer_grpc=prefer_grpc,
            timeout=timeout_s,
        )
    if backend == "redis":
        if redis_client is None:
            raise ConfigError(
                'store.backend "redis" needs a Redis 8 server: set redis.url (SEMCACHE_REDIS__URL)'
            )
        from .redis_vectors import RedisVectorStore

        return RedisVectorStore(redis_client, prefix=redis_prefix)
    raise ConfigError(f"store backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
