"""The composition root: the only code that reads ``CacheSettings`` to build a cache.

It turns settings (plus any components a caller injected) into the stages of the request
path, in order. Library classes take explicit arguments; the facade, the CLI and the server
call :func:`assemble`. Adding a stage is a new module under ``semcache/pipeline/`` and one
line in :func:`assemble`'s list. The order: private-data gate, exact memory, exact store,
coalescer, semantic, in-flight merge (and gathering window), write-behind, answer check,
compression, provider prompt-cache marks, then the upstream call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from semcache.compress.accounting import CompressionLedger
from semcache.config.settings import (
    CacheSettings,
    CoalesceSettings,
)
from semcache.core.coalesce import Coalescer
from semcache.core.memory import MemoryTier
from semcache.core.model_watch import ModelWatch
from semcache.core.prompt_cache import PromptCacheMarks
from semcache.observe.lookups import Observer
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Pipeline, Stage
from semcache.pipeline.compress import CompressStage
from semcache.pipeline.gather import GatherWindow
from semcache.pipeline.hedge import HedgeStage
from semcache.pipeline.lookup import Lookup
from semcache.pipeline.merge import MergeStage
from semcache.pipeline.model_watch import ModelWatchStage
from semcache.pipeline.path import RequestPath
from semcache.pipeline.prepare import Prepare
from semcache.pipeline.privacy import PrivacyAnswerStage, QuestionGate, ScanRunner
from semcache.pipeline.prompt_cache import PromptCacheStage
from semcache.pipeline.upstream import UpstreamCall
from semcache.pipeline.write_behind import WriteBehind, WriteBehindStage
from semcache.privacy.gate import PrivacyGate
from semcache.privacy.settings import build_gate
from semcache.runtime.admission import Admission, LoopLag, UpstreamLatency
from semcache.runtime.failopen import FailOpen
from semcache.stats import HitAudit, Stats
from semcache.tuning.loop import TuningLoop
from semcache.tuning.stage import Serves

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream

    from semcache.embedders.base import Embedder
    from semcache.guard import HitVerifier
    from semcache.replicas.tier import SharedTier
    from semcache.runtime.upstream import Upstream
    from semcache.scoring import ScoredDecision
    from semcache.stores.base import Entry, VectorStore
    from semcache.tuning.applied import AppliedThresholds


from semcache.compose.observe import observer, telemetry, traced_upstream, write_behind
from semcache.compose.semantic import readability_gate, semantic_tier, store_watermark
from semcache.compose.shared import (
    local_store_dir,
    redis_lookup,
    redis_write,
    shared_flight,
    shared_merge,
    shared_tier,
)
from semcache.compose.tuning import applied_thresholds, tuning_loop


@dataclass(frozen=True, slots=True)
class Assembly:
    """Everything one ``SemanticCache`` runs, wired together."""

    prepare: Prepare
    path: RequestPath
    upstream_call: UpstreamCall
    coalescer: Coalescer[Found, ModelResponseStream]
    memory: MemoryTier
    backend: SemanticBackend
    writer: WriteBehind
    failopen: FailOpen
    embed_gate: Admission
    lag: LoopLag | None
    health_window_s: float
    stats: Stats
    audit: HitAudit
    privacy: PrivacyGate
    compression: CompressionLedger
    clock: Callable[[], float]
    tuning: TuningLoop
    fresh: Callable[[Entry], bool]
    observer: Observer
    shared: SharedTier | None = None
    applied: AppliedThresholds | None = None
    store_wait_s: float = 30.0
    shed_window_s: float = 2.0


def assemble(
    settings: CacheSettings,
    *,
    embedder: Embedder | None = None,
    store: VectorStore | None = None,
    verifier: HitVerifier | None = None,
    upstream: Upstream | None = None,
    clock: Callable[[], float] = time.time,
    scorer: ScoredDecision | None = None,
    fallback_embedder: Embedder | None = None,
    fallback_store: VectorStore | None = None,
) -> Assembly:
    """The request path that ``settings`` describe; injected components replace built ones
    (``scorer``: a hit decision used instead of ``semantic.scorer``'s file;
    ``fallback_embedder`` / ``fallback_store``: the routed lane's, see
    :mod:`semcache.compose.routing`)."""
    s = settings
    stats = Stats()
    otel = telemetry(s.telemetry)
    failopen = FailOpen(
        stats, timeout_s=s.store.timeout_s, warn_interval_s=s.health.warn_interval_s
    )
    memory = MemoryTier(max_entries=s.exact.max_entries, max_bytes=s.exact.max_bytes, clock=clock)
    applied = applied_thresholds(s)
    tier = semantic_tier(
        s,
        embedder,
        store,
        verifier,
        scorer,
        stats,
        fallback_embedder=fallback_embedder,
        fallback_store=fallback_store,
        telemetry=otel,
        served=None if applied is None else applied.served(),
    )
    backend = SemanticBackend(tier, failopen, stats)
    max_lag_ms = s.admission.max_loop_lag_ms
    lag = LoopLag() if max_lag_ms is not None else None
    latency = UpstreamLatency()
    embed_gate = Admission(
        backlog=tier.backlog if tier is not None else lambda _: None,
        upstream=latency,
        wait_budget_s=s.admission.wait_ms / 1000.0,
        wait_fraction=s.admission.wait_fraction,
        lag=lag,
        max_lag_s=max_lag_ms / 1000.0 if max_lag_ms is not None else 0.0,
    )
    writer = write_behind(otel)(
        backend,
        memory,
        failopen,
        stats,
        clock,
        purge_interval_s=s.store.purge_interval_s,
        max_pending=s.admission.max_pending_writes,
        timeout_s=max(s.store.timeout_s, s.admission.store_wait_s),
    )
    deadline_ms = s.admission.lookup_deadline_ms
    watch = ModelWatch(stats, invalidate=s.policy.on_model_change == "invalidate")
    coalescer: Coalescer[Found, ModelResponseStream] = Coalescer(max_wait=s.coalesce.max_wait_s)
    if upstream is None:
        from semcache.runtime.upstream import LiteLLMUpstream

        upstream = LiteLLMUpstream()
    upstream = traced_upstream(upstream, otel)
    privacy = build_gate(s.privacy)
    scans = ScanRunner(s.privacy.scan_timeout_s)
    scans.preload(privacy.load)
    ledger = CompressionLedger()
    store_dir = local_store_dir(s.store.backend, s.store.path, injected=store is not None)
    shared = shared_tier(
        s.redis,
        memory,
        writer,
        failopen,
        watch,
        clock,
        backend=backend,
        stats=stats,
        store_dir=store_dir,
    )
    tuning = tuning_loop(s, backend, memory, writer, failopen, stats, clock, upstream, shared)
    merge = MergeStage(
        backend,
        Coalescer(max_wait=s.coalesce.max_wait_s),
        writer.fence,
        stats,
        gather_window(s.coalesce, latency),
        failopen,
        merge=s.coalesce.merge and s.coalesce.enabled,
        fresh=watch.fresh,
        clock=clock,
        shared=shared_merge(shared, failopen, stats, s.coalesce, watch),
        follow_budget_s=embed_gate.budget_s,
        landing=writer.landing,
    )
    lookup = Lookup(
        memory=memory,
        backend=backend,
        failopen=failopen,
        fence=writer.fence,
        stats=stats,
        clock=clock,
        fresh=watch.fresh,
        privacy=QuestionGate(privacy, s.privacy, scans),
        readability=None
        if tier is None
        else readability_gate(s, tier, embedder, fallback_embedder, stats),
        admission=embed_gate,
        serves=Serves(
            backend,
            tuning.ledger,
            tuning.shadow,
            clock,
            shared=None if shared is None else shared.serves,
        ),
        near_misses=tuning.near_misses,
        shared=redis_lookup(shared),
        deadline_s=deadline_ms / 1000.0 if deadline_ms is not None else None,
        hedge=s.admission.hedge,
    )
    answer: list[Stage] = [
        *shared_flight(shared, failopen, stats, s.coalesce, watch),
        *([] if shared is None else [redis_write(shared, failopen, stats, watch)]),
        HedgeStage(lookup, embed_gate, failopen, stats, adopter=merge),
        merge,
        WriteBehindStage(writer),
        ModelWatchStage(watch, store_watermark(backend, failopen)),
        PrivacyAnswerStage(privacy, scans),
        CompressStage(s.compression, ledger, failopen),
        PromptCacheStage(prompt_cache_marks(s, clock)),
    ]
    terminal = UpstreamCall(
        upstream,
        stats,
        clock,
        default_ttl_s=s.policy.default_ttl_s,
        namespace_ttl_s=s.policy.namespace_ttl_s,
        store_question=s.semantic.store_question,
        latency=latency,
    )
    return Assembly(
        prepare=Prepare(
            max_shared_temperature=s.policy.max_shared_temperature,
            tools_semantic=s.policy.tool_requests == "semantic",
        ),
        path=RequestPath(lookup, Pipeline(answer, terminal), coalescer, enabled=s.coalesce.enabled),
        upstream_call=terminal,
        coalescer=coalescer,
        memory=memory,
        backend=backend,
        writer=writer,
        failopen=failopen,
        embed_gate=embed_gate,
        lag=lag,
        health_window_s=s.health.window_s,
        stats=stats,
        audit=HitAudit(),
        privacy=privacy,
        compression=ledger,
        clock=clock,
        tuning=tuning,
        shared=shared,
        store_wait_s=s.admission.store_wait_s,
        shed_window_s=s.health.shed_window_s,
        fresh=watch.fresh,
        observer=observer(s.telemetry, clock, otel, tuning.monitor.estimates),
        applied=applied,
    )


def prompt_cache_marks(s: CacheSettings, clock: Callable[[], float]) -> PromptCacheMarks | None:
    """The prompt-cache marker of ``prompt_cache``; None when it is off (nothing marked,
    the providers' reported cached tokens still counted)."""
    p = s.prompt_cache
    if not p.enabled:
        return None
    return PromptCacheMarks(
        min_tokens=p.min_tokens, window_s=p.window_s, max_prefixes=p.max_prefixes, clock=clock
    )


def gather_window(c: CoalesceSettings, latency: UpstreamLatency) -> GatherWindow:
    if c.window_ms == "adaptive":
        return GatherWindow(
            fixed_s=None,
            fraction=c.window_fraction,
            max_s=c.window_max_ms / 1000.0,
            upstream_s=lambda: latency.p50_s,
        )
    return GatherWindow(fixed_s=float(c.window_ms) / 1000.0)
