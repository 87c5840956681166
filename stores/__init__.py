"""Vector stores: where cached entries live and how they are found by meaning.

``QdrantEdgeStore`` (the default) runs Qdrant's engine inside this process; ``QdrantStore``
talks to a Qdrant server or cluster (or qdrant-client's local mode); ``RedisVectorStore``
keeps entries in Redis 8 vector sets shared by every process. All implement
:class:`VectorStore` (the request path) and :class:`StoreAdmin` (operators' operations)
with the same behaviour; :class:`Where` decides what a lookup may see, for all of them.
``semcache.testing.InMemoryStore`` is the in-process double. The backends are imported on
first use, so ``import semcache.stores`` loads neither qdrant-edge nor qdrant-client.
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

    ``"edge"``: the embedded store in directory ``path`` (``":memory:"`` for a temporary
    one). ``"qdrant"``: the server at ``url`` (required) with ``api_key``, ``collection``,
    gRPC when ``prefer_grpc``, and ``timeout_s`` seconds per call. ``"redis"``: vector sets
    through ``redis_client`` (a sync ``redis.Redis``-compatible client or a URL; required),
    keys under ``redis_prefix``. The other arguments of one backend are ignored by the
    others. Raises :class:`ConfigError` naming the argument.
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
