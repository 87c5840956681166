"""The semantic tier's parts from ``semantic`` and ``store``: the embedder, the vector store,
the hit scorer (learned file or plug-in) and the answer guard."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from semcache.config.settings import (
    CacheSettings,
    SemanticSettings,
    StoreSettings,
)
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.replicas.settings import RedisSettings
from semcache.stats import Stats

if TYPE_CHECKING:
    from semcache.embedders.base import Embedder
    from semcache.embedders.readability import Readability
    from semcache.embedders.vector_cache import VectorCache
    from semcache.embedders.window import Window
    from semcache.guard import HitVerifier
    from semcache.observe.otel import Telemetry
    from semcache.pipeline.backend import SemanticBackend
    from semcache.pipeline.model_watch import OnChange
    from semcache.pipeline.readability import ReadabilityGate
    from semcache.runtime.failopen import FailOpen
    from semcache.scoring import ScoredDecision
    from semcache.scoring.plugins import SavedPlugin
    from semcache.stores.base import VectorStore
    from semcache.tuning.applied import Thresholds


def semantic_tier(
    s: CacheSettings,
    embedder: Embedder | None,
    store: VectorStore | None,
    verifier: HitVerifier | None,
    scorer: ScoredDecision | None = None,
    stats: Stats | None = None,
    *,
    fallback_embedder: Embedder | None = None,
    fallback_store: VectorStore | None = None,
    telemetry: Telemetry | None = None,
    served: Thresholds | None = None,
) -> SemanticTier | None:
    """The semantic tier, with a fallback lane when ``semantic.fallback_embedder`` is set
    (or a ``fallback_embedder`` is injected): see :mod:`semcache.compose.routing`.
    ``telemetry``: both lanes' embedders and stores, and the guard, are traced.
    ``served``: the thresholds to serve instead of the configured ones (applied earlier)."""
    if not s.semantic.enabled or (store is None and s.store.backend == "none"):
        return None
    from semcache.compose.observe import traced_embedder, traced_store, traced_verifier
    from semcache.compose.routing import fallback_lane, routed

    lanes: list[SemanticTier] = []  # the tier, once built: the payload check embeds with it
    guard = verifier if verifier is not None else build_verifier(s.semantic.verifier, lanes)
    guard = traced_verifier(guard, telemetry)
    vectors = vector_cache(s.semantic.vector_cache_entries)
    primary: dict[str, Any] = {
        "embedder": traced_embedder(
            (lambda: embedder) if embedder is not None else embedder_factory(s.semantic),
            telemetry,
        ),
        "store": traced_store(
            (lambda: store) if store is not None else store_factory(s.store, s.redis), telemetry
        ),
        "verifier": guard,
        "threshold": s.semantic.threshold if served is None else served.threshold,
        "namespace_thresholds": s.semantic.namespace_thresholds
        if served is None
        else dict(served.namespaces),
        "scorer": (lambda: scorer)
        if scorer is not None
        else scorer_factory(s.semantic, embedder, stats),
        "max_batch": s.semantic.batch_size,
        "max_wait_ms": s.semantic.max_batch_wait_ms,
        "vectors": vectors,
        "readability": readability(s.semantic, embedder),
        "guard_candidates": s.semantic.guard_candidates,
    }
    lane = fallback_lane(
        s,
        primary_name=embedder.name if embedder is not None else s.semantic.embedder,
        embedder=fallback_embedder,
        store=fallback_store,
        primary_injected=store is not None,
        verifier=guard,
        vectors=vectors,
        telemetry=telemetry,
    )
    tier = (
        SemanticTier(**primary)
        if lane is None
        else routed(primary, lane, stats if stats is not None else Stats())
    )
    lanes.append(tier)
    return tier


def readability(s: SemanticSettings, embedder: Embedder | None) -> Readability:
    """What the injected embedder declares, else what ``semantic.embedder`` names declares."""
    from semcache.embedders.readability import readability_of
    from semcache.embedders.registry import readability_for

    return readability_of(embedder) if embedder is not None else readability_for(s.embedder)


def readability_gate(
    s: CacheSettings,
    tier: SemanticTier,
    embedder: Embedder | None,
    fallback_embedder: Embedder | None,
    stats: Stats,
) -> ReadabilityGate:
    """The readability gate with the window of the primary embedder (injected, else the one
    ``semantic.embedder`` names, built without loading it) and, when there is one, the
    fallback lane's."""
    from semcache.embedders import load_embedder
    from semcache.embedders.window import window_of
    from semcache.pipeline.readability import ReadabilityGate

    def window(injected: Embedder | None, name: str) -> Window:
        built = injected if injected is not None else load_embedder(name, runtime="torch")
        return window_of(built)  # building one loads nothing: the window reads its own files

    fallback = s.semantic.fallback_embedder
    lane = fallback_embedder is not None or fallback is not None
    return ReadabilityGate(
        tier,
        stats,
        window(embedder, s.semantic.embedder),
        window(fallback_embedder, fallback or "") if lane else None,
    )


def vector_cache(entries: int) -> VectorCache | None:
    if entries == 0:
        return None
    from semcache.embedders.vector_cache import VectorCache

    return VectorCache(entries)


def embedder_factory(s: SemanticSettings) -> Callable[[], Embedder]:
    """Loads the configured embedder when called (model loading is slow: done lazily)."""

    def load() -> Embedder:
        from semcache.embedders import load_embedder

        return load_embedder(
            s.embedder,
            device=s.device,
            batch_size=s.batch_size,
            precision=s.precision,
            runtime=s.runtime,
            threads=s.cpu_threads,
        )

    return load


def scorer_factory(
    s: SemanticSettings, embedder: Embedder | None = None, stats: Stats | None = None
) -> Callable[[], ScoredDecision] | None:
    """The calibrated decision ``semantic.scorer`` names (None when unset).

    The file is read and checked now, so a missing or malformed file, one calibrated for
    another embedder, or a judge whose API-key variable is not set fails construction
    (:class:`ConfigError` naming the setting), not the first request. Its primary embedder
    must be the cache's: ``semantic.embedder``, or the name of an injected ``embedder``. The
    returned factory runs when the semantic tier starts (in a worker thread): it loads any
    extra embedder a learned model needs (same device and runtime) or a plug-in
    cross-encoder; an LLM judge's calls, tokens and priced USD are counted in ``stats``.
    """
    if s.scorer is None:
        return None
    from semcache.errors import ConfigError
    from semcache.scoring import SavedScorer, ScoredDecision
    from semcache.scoring.saved import load_scorer_file

    try:
        saved = load_scorer_file(s.scorer)
    except ConfigError as exc:
        raise ConfigError(f"semantic.scorer: {exc}") from exc
    ours = {s.embedder} if embedder is None else {s.embedder, embedder.name}
    if saved.primary not in ours:
        raise ConfigError(
            f"semantic.scorer: {s.scorer} was calibrated with embedder {saved.primary!r}, but "
            f"the cache embeds with {' / '.join(sorted(ours))!r} (semantic.embedder); a "
            "score means nothing on another embedder's cosines"
        )
    if not s.store_question:
        raise ConfigError(
            "semantic.scorer needs semantic.store_question=true: the model scores the new "
            "question against the stored one"
        )
    if not isinstance(saved, SavedScorer):
        return plugin_factory(s, saved, stats)
    learned = saved

    def load() -> ScoredDecision:
        extra = {
            name: embedder_factory(s.model_copy(update={"embedder": name}))()
            for name in learned.embedders
            if name != learned.primary
        }
        return ScoredDecision.from_saved(learned, extra)

    return load


def plugin_factory(
    s: SemanticSettings, saved: SavedPlugin, stats: Stats | None
) -> Callable[[], ScoredDecision]:
    """A plug-in scorer file's decision; the judge's key is read from its variable now."""
    import os

    from semcache.errors import ConfigError
    from semcache.scoring import ScoredDecision
    from semcache.scoring.plugins import build_plugin

    variable = saved.plugin.api_key_env
    api_key = None if variable is None else os.environ.get(variable)
    if variable is not None and api_key is None:
        raise ConfigError(
            f"semantic.scorer: {s.scorer} names the judge's API key variable {variable}, "
            "which is not set"
        )
    sink = None if stats is None else _JudgeStats(stats)

    def load() -> ScoredDecision:
        scorer = build_plugin(saved.plugin, device=s.device, api_key=api_key, sink=sink)
        return ScoredDecision(scorer, saved.threshold, saved.band)

    return load


class _JudgeStats:
    """An LLM judge scorer's calls in the cache's stats: ``scorer_judge_calls``, ``_tokens``
    and ``_unpriced_calls`` in ``counts``, priced USD in ``spent_usd["scorer_judge"]``."""

    def __init__(self, stats: Stats) -> None:
        self._stats = stats

    def add(self, prompt_tokens: int, completion_tokens: int, usd: float | None) -> None:
        self._stats.count("scorer_judge_calls")
        self._stats.count("scorer_judge_tokens", prompt_tokens + completion_tokens)
        if usd is None:
            self._stats.count("scorer_judge_unpriced_calls")
        else:
            self._stats.spend("scorer_judge", usd)


def store_factory(s: StoreSettings, r: RedisSettings | None = None) -> Callable[[], VectorStore]:
    """Opens the configured store when called (constructors do no I/O).

    ``store.backend = "redis"`` needs ``redis.url`` (checked now, a :class:`ConfigError`
    naming both): the store's client is built from the ``redis.*`` settings (auth, TLS,
    timeout), keys under ``redis.key_prefix``."""
    if s.backend == "redis" and (r is None or r.url is None):
        from semcache.errors import ConfigError

        raise ConfigError(
            'store.backend "redis" needs redis.url (SEMCACHE_REDIS__URL): the Redis Open '
            "Source >= 8.0 server whose vector sets hold the entries"
        )

    def open_() -> VectorStore:
        from semcache.stores import open_store

        client = None if s.backend != "redis" or r is None else redis_client(r, r.url)
        api_key = s.api_key.get_secret_value() if s.api_key is not None else None
        store = open_store(
            s.backend,
            path=s.path,
            url=s.url,
            api_key=api_key,
            prefer_grpc=s.prefer_grpc,
            collection=s.collection,
            timeout_s=s.timeout_s,
            redis_client=client,
            redis_prefix="semcache" if r is None else r.key_prefix,
        )
        if store is None:  # pragma: no cover - backend "none" never builds a semantic tier
            raise RuntimeError("store backend 'none' has no store to open")
        return store

    return open_


def redis_client(r: RedisSettings, url: str | None) -> object:
    """A blocking client for the Redis store, from the same ``redis.*`` settings as the
    shared tier's (nothing connects until the first command)."""
    from semcache.compose.shared import redis_options
    from semcache.replicas.connect import connect_sync

    if url is None:
        return None
    return connect_sync(redis_options(r, url))


def store_watermark(backend: SemanticBackend, failopen: FailOpen) -> OnChange:
    """A model-snapshot change noticed here, applied to a store that keeps watermarks itself
    (the shared Redis store: every process stops serving the older answers); counted as
    kind ``store_mark_model`` when it fails."""

    async def mark(model: str, before: float) -> None:
        import asyncio

        from semcache.stores.base import StoreWatermark

        tier = backend.started
        store = None if tier is None else tier.store
        if isinstance(store, StoreWatermark):
            marked = store

            async def call() -> int:
                return await asyncio.to_thread(marked.mark_model, model, before)

            await failopen.call("store_mark_model", call, None)

    return mark


def build_verifier(name: str, tier: list[SemanticTier] | None = None) -> HitVerifier:
    """The answer guard named in settings (``none``: the null guard, never None). Given the
    (soon built) semantic tier, any guard but ``none`` also judges a templated pair by its
    differing parts, embedded with the tier's embedder for the question
    (:class:`~semcache.guard.payload.PayloadGuard`)."""
    from semcache.guard import NoGuard, get_verifier
    from semcache.guard.payload import PayloadGuard

    guard = get_verifier(name)
    if tier is None or isinstance(guard, NoGuard):
        return guard

    def embedder(text: str) -> Embedder | None:
        return tier[0].lane(text).embedder if tier else None

    return PayloadGuard(guard, embedder)
