"""The composition root: the only code that reads ``CacheSettings`` to build a cache.

It turns settings (plus any components a caller injected) into the stages of the request
path, in order. Library classes take explicit arguments; the facade, the CLI and the server
call :func:`assemble`. Adding a stage is a new module under ``semcache/pipeline/`` and one
line in :func:`assemble`'s list. The order: private-data gate, exact memory, exact store,
coalescer, semantic, in-flight merge (and gathering window), write-behind, answer check,
compression, then the upstream call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from semcache._admission import Admission, LoopLag
from semcache._coalesce import Coalescer
from semcache._failopen import FailOpen
from semcache._memory import MemoryTier
from semcache.compress.accounting import CompressionLedger
from semcache.errors import EmbedderError
from semcache.model_watch import ModelWatch
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Pipeline, Stage
from semcache.pipeline.coalesce import CoalesceStage
from semcache.pipeline.compress import CompressStage
from semcache.pipeline.exact_store import ExactStoreStage
from semcache.pipeline.fence import PurgeFilter
from semcache.pipeline.gather import GatherWindow
from semcache.pipeline.memory import MemoryStage
from semcache.pipeline.merge import MergeStage
from semcache.pipeline.model_watch import ModelWatchStage
from semcache.pipeline.prepare import Prepare
from semcache.pipeline.privacy import PrivacyAnswerStage, PrivacyStage
from semcache.pipeline.semantic import SemanticStage
from semcache.pipeline.upstream import UpstreamCall
from semcache.pipeline.write_behind import WriteBehind, WriteBehindStage
from semcache.privacy.gate import PrivacyGate
from semcache.privacy.settings import build_gate
from semcache.replicas.settings import RedisSettings
from semcache.semantic import SemanticTier
from semcache.settings import CacheSettings, CoalesceSettings, SemanticSettings, StoreSettings
from semcache.stats import HitAudit, Stats
from semcache.tuning.estimate import FalseHitMonitor
from semcache.tuning.labels import LabelLog
from semcache.tuning.ledger import ServeLedger
from semcache.tuning.loop import TuningLoop
from semcache.tuning.misses import MissLog, MissStage
from semcache.tuning.settings import VerifySettings
from semcache.tuning.stage import TuningStage

if TYPE_CHECKING:
    import numpy as np
    from litellm.types.utils import ModelResponseStream

    from semcache._upstream import Upstream
    from semcache.embedders.base import Embedder
    from semcache.embedders.vector_cache import VectorCache
    from semcache.guard import HitVerifier
    from semcache.replicas.tier import SharedTier
    from semcache.scoring import ScoredDecision
    from semcache.scoring.plugins import SavedPlugin
    from semcache.stores.base import VectorStore
    from semcache.tuning.shadow import OnVerdict, ShadowFactory, ShadowVerifier


@dataclass(frozen=True, slots=True)
class Assembly:
    """Everything one ``SemanticCache`` runs, wired together."""

    prepare: Prepare
    pipeline: Pipeline
    upstream_call: UpstreamCall
    memory_stage: MemoryStage
    coalescer: Coalescer[Found, ModelResponseStream]
    memory: MemoryTier
    backend: SemanticBackend
    writer: WriteBehind
    failopen: FailOpen
    embed_gate: Admission
    store_gate: Admission
    lag: LoopLag | None
    health_window_s: float
    stats: Stats
    audit: HitAudit
    privacy: PrivacyGate
    compression: CompressionLedger
    clock: Callable[[], float]
    tuning: TuningLoop
    shared: SharedTier | None = None


def assemble(
    settings: CacheSettings,
    *,
    embedder: Embedder | None = None,
    store: VectorStore | None = None,
    verifier: HitVerifier | None = None,
    upstream: Upstream | None = None,
    clock: Callable[[], float] = time.time,
    scorer: ScoredDecision | None = None,
) -> Assembly:
    """The request path that ``settings`` describe; injected components replace built ones
    (``scorer``: a hit decision used instead of ``semantic.scorer``'s file)."""
    s = settings
    stats = Stats()
    failopen = FailOpen(
        stats, timeout_s=s.store.timeout_s, warn_interval_s=s.health.warn_interval_s
    )
    memory = MemoryTier(max_entries=s.exact.max_entries, max_bytes=s.exact.max_bytes, clock=clock)
    tier = _semantic_tier(s, embedder, store, verifier, scorer, stats)
    backend = SemanticBackend(tier, failopen, stats)
    wait_s = s.admission.wait_ms / 1000.0
    max_lag_ms = s.admission.max_loop_lag_ms
    lag = LoopLag() if max_lag_ms is not None else None
    max_lag_s = max_lag_ms / 1000.0 if max_lag_ms is not None else 0.0
    embed_gate, store_gate = (
        Admission(wait_budget_s=wait_s, lag=lag, max_lag_s=max_lag_s) for _ in range(2)
    )
    writer = WriteBehind(
        backend,
        memory,
        failopen,
        stats,
        clock,
        purge_interval_s=s.store.purge_interval_s,
        embed_gate=embed_gate,
        max_pending=s.admission.max_pending_writes,
    )
    deadline_ms = s.admission.lookup_deadline_ms
    watch = ModelWatch(stats, invalidate=s.policy.on_model_change == "invalidate")
    memory_stage = MemoryStage(memory, clock, watch.fresh)
    coalescer: Coalescer[Found, ModelResponseStream] = Coalescer(max_wait=s.coalesce.max_wait_s)
    if upstream is None:
        from semcache._upstream import LiteLLMUpstream

        upstream = LiteLLMUpstream()
    privacy = build_gate(s.privacy)
    ledger = CompressionLedger()
    shared = _shared_tier(s.redis, memory, writer, failopen, watch, clock)
    tuning = _tuning(s, backend, memory, writer, failopen, stats, clock, upstream, shared)
    stages: list[Stage] = [
        PrivacyStage(privacy, s.privacy),
        memory_stage,
        *([] if shared is None else [_redis_read(shared, memory, failopen, writer, watch)]),
        ExactStoreStage(
            backend, memory, failopen, writer.fence, clock, admission=store_gate, fresh=watch.fresh
        ),
        CoalesceStage(coalescer, memory_stage.peek, enabled=s.coalesce.enabled),
        *_shared_flight(shared, failopen, stats, s.coalesce, watch),
        *([] if shared is None else [_redis_write(shared, failopen, stats, watch)]),
        TuningStage(backend, tuning.ledger, tuning.shadow, clock),
        SemanticStage(
            backend,
            failopen,
            stats,
            clock,
            admission=embed_gate,
            deadline_s=deadline_ms / 1000.0 if deadline_ms is not None else None,
            fresh=watch.fresh,
        ),
        MergeStage(
            backend,
            Coalescer(max_wait=s.coalesce.max_wait_s),
            writer.fence,
            stats,
            _gather_window(s.coalesce),
            failopen,
            merge=s.coalesce.merge and s.coalesce.enabled,
            fresh=watch.fresh,
        ),
        tuning.miss_stage,
        WriteBehindStage(writer),
        ModelWatchStage(watch),
        PrivacyAnswerStage(privacy),
        CompressStage(s.compression, ledger, failopen),
    ]
    terminal = UpstreamCall(
        upstream,
        stats,
        clock,
        default_ttl_s=s.policy.default_ttl_s,
        namespace_ttl_s=s.policy.namespace_ttl_s,
        store_question=s.semantic.store_question,
    )
    return Assembly(
        prepare=Prepare(max_shared_temperature=s.policy.max_shared_temperature),
        pipeline=Pipeline(stages, terminal),
        upstream_call=terminal,
        memory_stage=memory_stage,
        coalescer=coalescer,
        memory=memory,
        backend=backend,
        writer=writer,
        failopen=failopen,
        embed_gate=embed_gate,
        store_gate=store_gate,
        lag=lag,
        health_window_s=s.health.window_s,
        stats=stats,
        audit=HitAudit(),
        privacy=privacy,
        compression=ledger,
        clock=clock,
        tuning=tuning,
        shared=shared,
    )


def _tuning(
    s: CacheSettings,
    backend: SemanticBackend,
    memory: MemoryTier,
    writer: WriteBehind,
    failopen: FailOpen,
    stats: Stats,
    clock: Callable[[], float],
    upstream: Upstream,
    shared: SharedTier | None,
) -> TuningLoop:
    """Feedback, the live estimate and miss analysis; shadow verification when sampled."""
    t = s.tuning
    misses = MissLog(t.max_misses)
    return TuningLoop(
        backend=backend,
        memory=memory,
        writer=writer,
        stats=stats,
        clock=clock,
        ledger=ServeLedger(t.max_serves),
        labels=LabelLog(capacity=t.max_labels, path=t.labels_path),
        monitor=FalseHitMonitor(delta=t.delta, window=t.window),
        misses=misses,
        miss_stage=MissStage(backend, misses, clock, margin=t.miss_margin),
        shadow=_shadow(s.verify, backend, failopen, stats, upstream),
        shared=shared,
    )


def _shadow(
    v: VerifySettings,
    backend: SemanticBackend,
    failopen: FailOpen,
    stats: Stats,
    upstream: Upstream,
) -> ShadowFactory | None:
    """Shadow verification as ``verify`` describes it (None when ``sample_rate`` is 0); the
    tuning loop builds it with its own ``on_verdict``."""
    if v.sample_rate <= 0:
        return None
    import random

    from semcache.tuning.compare import AnswerJudge, EmbeddingJudge, LLMJudge
    from semcache.tuning.sampling import Sampler, SamplingPolicy
    from semcache.tuning.shadow import ShadowVerifier

    async def embed(text: str) -> np.ndarray:
        tier = await backend.ready()
        if tier is None:
            raise EmbedderError("shadow verification needs the semantic tier's embedder")
        return await tier.embed(text)

    judge: AnswerJudge = (
        EmbeddingJudge(embed, min_cosine=v.answer_similarity)
        if v.judge_model is None
        else LLMJudge(v.judge_model)
    )
    policy = SamplingPolicy(v.sample_rate, boost=v.near_boost, width=v.near_width)

    def build(on_verdict: OnVerdict) -> ShadowVerifier:
        return ShadowVerifier(
            upstream,
            judge,
            Sampler(policy, random.Random(v.seed)),
            on_verdict,
            failopen,
            stats,
            max_concurrency=v.max_concurrency,
            max_pending=v.max_pending,
        )

    return build


def _shared_tier(
    r: RedisSettings,
    memory: MemoryTier,
    writer: WriteBehind,
    failopen: FailOpen,
    watch: ModelWatch,
    clock: Callable[[], float],
) -> SharedTier | None:
    """The Redis shared by replicas (exact tier, purge broadcast, flights), if configured."""
    if r.url is None:
        return None
    from semcache.replicas.connect import RedisOptions, connect
    from semcache.replicas.exact import RedisExact
    from semcache.replicas.flights import SharedFlights
    from semcache.replicas.keys import KeySpace
    from semcache.replicas.purges import PurgeBroadcast
    from semcache.replicas.tier import SharedTier

    client = connect(
        RedisOptions(
            url=r.url,
            username=r.username,
            password=None if r.password is None else r.password.get_secret_value(),
            tls_ca_file=r.tls_ca_file,
            tls_cert_file=r.tls_cert_file,
            tls_key_file=r.tls_key_file,
            tls_verify=r.tls_verify,
            timeout_s=r.timeout_s,
            max_connections=r.max_connections,
        )
    )
    keys = KeySpace(r.key_prefix)

    def drop_memory() -> None:  # a gap in the purge subscription: forget everything local
        writer.fence.record(PurgeFilter())
        memory.purge()

    broadcast = PurgeBroadcast(
        client,
        keys.purges,
        failopen,
        on_purge=writer.purge,
        on_gap=drop_memory,
        on_model_change=watch.mark,
    )
    flights = None
    if r.coalesce:
        # A follower polls the lease between blocking reads; a read must end well within
        # the command timeout, and often enough to notice a dead leader soon after expiry.
        poll_ms = max(10, min(r.lease_ms // 3, int(r.timeout_s * 500)))
        flights = SharedFlights(
            client,
            keys,
            failopen,
            lease_ms=r.lease_ms,
            stream_ttl_ms=int(r.stream_ttl_s * 1000),
            poll_ms=poll_ms,
        )
    return SharedTier(client, RedisExact(client, keys, clock), broadcast, flights)


def _redis_read(
    shared: SharedTier,
    memory: MemoryTier,
    failopen: FailOpen,
    writer: WriteBehind,
    watch: ModelWatch,
) -> Stage:
    from semcache.pipeline.redis_exact import RedisReadStage

    return RedisReadStage(shared.exact, shared.broadcast, memory, failopen, writer.fence, watch)


def _redis_write(shared: SharedTier, failopen: FailOpen, stats: Stats, watch: ModelWatch) -> Stage:
    from semcache.pipeline.redis_exact import RedisWriteStage

    return RedisWriteStage(shared.exact, shared.broadcast, failopen, stats, watch)


def _shared_flight(
    shared: SharedTier | None,
    failopen: FailOpen,
    stats: Stats,
    c: CoalesceSettings,
    watch: ModelWatch,
) -> list[Stage]:
    if shared is None or shared.flights is None or not c.enabled:
        return []
    from semcache.pipeline.shared_flight import SharedFlightStage

    flight = SharedFlightStage(
        shared.flights, failopen, stats, max_wait_s=c.max_wait_s, fresh=watch.fresh
    )
    return [flight]


def _gather_window(c: CoalesceSettings) -> GatherWindow:
    if c.window_ms == "adaptive":
        return GatherWindow(
            fixed_s=None, fraction=c.window_fraction, max_s=c.window_max_ms / 1000.0
        )
    return GatherWindow(fixed_s=float(c.window_ms) / 1000.0)


def _semantic_tier(
    s: CacheSettings,
    embedder: Embedder | None,
    store: VectorStore | None,
    verifier: HitVerifier | None,
    scorer: ScoredDecision | None = None,
    stats: Stats | None = None,
) -> SemanticTier | None:
    if not s.semantic.enabled or (store is None and s.store.backend == "none"):
        return None
    return SemanticTier(
        embedder=(lambda: embedder) if embedder is not None else embedder_factory(s.semantic),
        store=(lambda: store) if store is not None else store_factory(s.store),
        verifier=verifier if verifier is not None else build_verifier(s.semantic.verifier),
        threshold=s.semantic.threshold,
        namespace_thresholds=s.semantic.namespace_thresholds,
        scorer=(lambda: scorer)
        if scorer is not None
        else scorer_factory(s.semantic, embedder, stats),
        max_batch=s.semantic.batch_size,
        max_wait_ms=s.semantic.max_batch_wait_ms,
        vectors=_vector_cache(s.semantic.vector_cache_entries),
    )


def _vector_cache(entries: int) -> VectorCache | None:
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
        return _plugin_factory(s, saved, stats)
    learned = saved

    def load() -> ScoredDecision:
        extra = {
            name: embedder_factory(s.model_copy(update={"embedder": name}))()
            for name in learned.embedders
            if name != learned.primary
        }
        return ScoredDecision.from_saved(learned, extra)

    return load


def _plugin_factory(
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


def store_factory(s: StoreSettings) -> Callable[[], VectorStore]:
    """Opens the configured store when called (constructors do no I/O)."""

    def open_() -> VectorStore:
        from semcache.stores import open_store

        api_key = s.api_key.get_secret_value() if s.api_key is not None else None
        store = open_store(
            s.backend,
            path=s.path,
            url=s.url,
            api_key=api_key,
            prefer_grpc=s.prefer_grpc,
            collection=s.collection,
            timeout_s=s.timeout_s,
        )
        if store is None:  # pragma: no cover - backend "none" never builds a semantic tier
            raise RuntimeError("store backend 'none' has no store to open")
        return store

    return open_


def build_verifier(name: str) -> HitVerifier:
    """The answer guard named in settings (``none``: the null guard, never None)."""
    from semcache.guard import get_verifier

    return get_verifier(name)
