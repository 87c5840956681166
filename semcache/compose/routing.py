"""``semantic.fallback_embedder``: the second lane of the semantic tier, from settings.

A question the primary embedder cannot read (by its declared scripts) is embedded by the
fallback and kept in the fallback's own store, judged at ``semantic.fallback_threshold``
(:mod:`semcache.pipeline.routed_tier`). The fallback's store sits beside the primary's:
the edge store's directory with the embedder's name appended, a Qdrant collection or Redis
key prefix likewise, so the two embedders' entries never share a store (each store records
one embedder and dimension).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from semcache.config.settings import CacheSettings, StoreSettings
from semcache.errors import ConfigError
from semcache.pipeline.routed_tier import RoutedTier
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.replicas.settings import RedisSettings
from semcache.stats import Stats

if TYPE_CHECKING:
    from semcache.embedders.base import Embedder
    from semcache.embedders.readability import Readability
    from semcache.embedders.vector_cache import VectorCache
    from semcache.guard import HitVerifier
    from semcache.observe.otel import Telemetry
    from semcache.stores.base import VectorStore


def fallback_lane(
    s: CacheSettings,
    *,
    primary_name: str,
    embedder: Embedder | None,
    store: VectorStore | None,
    primary_injected: bool,
    verifier: HitVerifier,
    vectors: VectorCache | None,
    telemetry: Telemetry | None = None,
) -> tuple[SemanticTier, str] | None:
    """The fallback's tier and configured name; None when no fallback is configured.
    ``telemetry``: its embedder and store are traced as the primary's are.

    ``embedder`` / ``store``: injected replacements (tests); with an injected primary store
    the fallback's must be injected too (there is no path to put it beside). Raises
    :class:`ConfigError` naming the setting: no threshold, an embedder that does not declare
    what it reads, or the primary itself."""
    from semcache.compose.observe import traced_embedder, traced_store
    from semcache.compose.semantic import embedder_factory, store_factory

    sem = s.semantic
    name = embedder.name if embedder is not None else sem.fallback_embedder
    if name is None:
        return None
    if sem.fallback_threshold is None:
        raise ConfigError(
            "semantic.fallback_embedder needs semantic.fallback_threshold: a threshold belongs "
            "to one embedder, and the primary's means nothing on another's cosines"
        )
    if name == primary_name:
        raise ConfigError(f"semantic.fallback_embedder {name!r} is the primary embedder")
    reads = _declared(name, embedder)
    if reads.scripts is None:
        raise ConfigError(
            f"semantic.fallback_embedder {name!r} does not declare the scripts it reads, so "
            "nothing could be routed to it safely; choose 'use-multilingual' or 'e5-small-4bit'"
        )
    if store is None and primary_injected:
        raise ConfigError(
            "an injected store needs an injected fallback_store when "
            "semantic.fallback_embedder is set"
        )
    make_embedder: Callable[[], Embedder] = (
        (lambda: embedder)
        if embedder is not None
        else embedder_factory(sem.model_copy(update={"embedder": name}))
    )
    make_store: Callable[[], VectorStore] = (
        (lambda: store) if store is not None else store_factory(*beside(s, name))
    )
    tier = SemanticTier(
        embedder=traced_embedder(make_embedder, telemetry),
        store=traced_store(make_store, telemetry),
        verifier=verifier,
        threshold=sem.fallback_threshold,
        max_batch=sem.batch_size,
        max_wait_ms=sem.max_batch_wait_ms,
        vectors=vectors,  # keyed by embedder name: sharing the LRU never mixes vectors
        readability=reads,
    )
    return tier, name


def routed(primary: dict[str, Any], lane: tuple[SemanticTier, str], stats: Stats) -> RoutedTier:
    """The primary's tier (``primary``: its :class:`SemanticTier` arguments) with ``lane``."""
    fallback, name = lane
    return RoutedTier(fallback=fallback, fallback_name=name, stats=stats, **primary)


def beside(s: CacheSettings, name: str) -> tuple[StoreSettings, RedisSettings]:
    """Store and Redis settings of the fallback's store: the primary's, suffixed with the
    embedder's name (an in-memory edge store stays in memory)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")
    st = s.store
    path = st.path if st.path == ":memory:" else f"{st.path.rstrip('/')}.{slug}"
    store = st.model_copy(update={"path": path, "collection": f"{st.collection}-{slug}"})
    return store, s.redis.model_copy(update={"key_prefix": f"{s.redis.key_prefix}-{slug}"})


def _declared(name: str, embedder: Embedder | None) -> Readability:
    from semcache.embedders.readability import readability_of
    from semcache.embedders.registry import readability_for

    return readability_of(embedder) if embedder is not None else readability_for(name)
