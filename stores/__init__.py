"""Vector stores: where cached entries live and how they are found by meaning.

``QdrantEdgeStore`` (the default) runs Qdrant's engine inside this process; ``QdrantStore``
talks to a Qdrant server or cluster (or qdrant-client's local mode). Both implement
:class:`VectorStore` with the same behaviour. The backends are imported on first use, so
``import semcache.stores`` loads neither qdrant-edge nor qdrant-client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from semcache.errors import ConfigError

from .base import NEVER_EXPIRES, Entry, Match, VectorStore, point_id

if TYPE_CHECKING:
    from semcache.settings import StoreSettings

    from .edge import QdrantEdgeStore
    from .qdrant import QdrantStore

__all__ = [
    "NEVER_EXPIRES",
    "Entry",
    "Match",
    "QdrantEdgeStore",
    "QdrantStore",
    "VectorStore",
    "open_store",
    "point_id",
]

_LAZY = {"QdrantEdgeStore": ".edge", "QdrantStore": ".qdrant"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_store(settings: StoreSettings) -> VectorStore | None:
    """The store the settings describe, not yet set up (``backend="none"``: None)."""
    if settings.backend == "none":
        return None
    if settings.backend == "edge":
        from .edge import QdrantEdgeStore

        return QdrantEdgeStore(settings.path)
    if settings.url is None:
        raise ConfigError('store backend "qdrant" needs a server url (SEMCACHE_STORE__URL)')
    from .qdrant import QdrantStore

    api_key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    return QdrantStore(
        settings.url,
        api_key=api_key,
        collection=settings.collection,
        prefer_grpc=settings.prefer_grpc,
        timeout=settings.timeout_s,
    )
