"""The composition root: the only code that reads ``CacheSettings`` to build a cache.

One module per thing it assembles: ``assemble`` (the request path, in order), ``semantic``
(embedder, store, scorer, guard), ``shared`` (what replicas share through Redis), ``tuning``
(the tuning loop and shadow verification).
"""

from semcache.compose.assemble import Assembly, assemble
from semcache.compose.semantic import (
    build_verifier,
    embedder_factory,
    scorer_factory,
    store_factory,
)

__all__ = [
    "Assembly",
    "assemble",
    "build_verifier",
    "embedder_factory",
    "scorer_factory",
    "store_factory",
]
