"""The composition root: the only code that reads ``CacheSettings`` to build a cache.

It turns settings (plus any components a caller injected) into the stages of the request
path, in order. Library classes take explicit arguments; the facade, the CLI and the server
call :func:`assemble`. Adding a stage is a new module under ``semcache/pipeline/`` and one
line in :func:`assemble`'s list. The order: private-data gate, exact memory, exact store,
coalescer, semantic, write-behind, answer check, compression, then the upstream call.
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
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Pipeline, Stage
from semcache.pipeline.coalesce import CoalesceStage
from semcache.pipeline.compress import CompressStage
from semcache.pipeline.exact_store import ExactStoreStage
from semcache.pipeline.memory import MemoryStage
from semcache.pipeline.prepare import Prepare
from semcache.pipeline.privacy import PrivacyAnswerStage, PrivacyStage
from semcache.pipeline.semantic import SemanticStage
from semcache.pipeline.upstream import UpstreamCall
from semcache.pipeline.write_behind import WriteBehind, WriteBehindStage
from semcache.privacy.gate import PrivacyGate
from semcache.privacy.settings import build_gate
from semcache.semantic import SemanticTier
from semcache.settings import CacheSettings, SemanticSettings, StoreSettings
from semcache.stats import HitAudit, Stats

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream

    from semcache._upstream import Upstream
    from semcache.embedders.base import Embedder
    from semcache.guard import HitVerifier
    from semcache.stores.base import VectorStore


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


def assemble(
    settings: CacheSettings,
    *,
    embedder: Embedder | None = None,
    store: VectorStore | None = None,
    verifier: HitVerifier | None = None,
    upstream: Upstream | None = None,
    clock: Callable[[], float] = time.time,
) -> Assembly:
    """The request path that ``settings`` describe; injected components replace built ones."""
    s = settings
    stats = Stats()
    failopen = FailOpen(
        stats, timeout_s=s.store.timeout_s, warn_interval_s=s.health.warn_interval_s
    )
    memory = MemoryTier(max_entries=s.exact.max_entries, max_bytes=s.exact.max_bytes, clock=clock)
    backend = SemanticBackend(_semantic_tier(s, embedder, store, verifier), failopen)
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
    memory_stage = MemoryStage(memory, clock)
    coalescer: Coalescer[Found, ModelResponseStream] = Coalescer(max_wait=s.coalesce.max_wait_s)
    if upstream is None:
        from semcache._upstream import LiteLLMUpstream

        upstream = LiteLLMUpstream()
    privacy = build_gate(s.privacy)
    ledger = CompressionLedger()
    stages: list[Stage] = [
        PrivacyStage(privacy, s.privacy),
        memory_stage,
        ExactStoreStage(backend, memory, failopen, writer.fence, clock, admission=store_gate),
        CoalesceStage(coalescer, memory_stage.peek, enabled=s.coalesce.enabled),
        SemanticStage(
            backend,
            failopen,
            stats,
            clock,
            admission=embed_gate,
            deadline_s=deadline_ms / 1000.0 if deadline_ms is not None else None,
        ),
        WriteBehindStage(writer),
        PrivacyAnswerStage(privacy),
        CompressStage(s.compression, ledger, failopen),
    ]
    terminal = UpstreamCall(
        upstream,
        stats,
        clock,
        default_ttl_s=s.policy.default_ttl_s,
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
    )


def _semantic_tier(
    s: CacheSettings,
    embedder: Embedder | None,
    store: VectorStore | None,
    verifier: HitVerifier | None,
) -> SemanticTier | None:
    if not s.semantic.enabled or (store is None and s.store.backend == "none"):
        return None
    return SemanticTier(
        embedder=(lambda: embedder) if embedder is not None else embedder_factory(s.semantic),
        store=(lambda: store) if store is not None else store_factory(s.store),
        verifier=verifier if verifier is not None else build_verifier(s.semantic.verifier),
        threshold=s.semantic.threshold,
        namespace_thresholds=s.semantic.namespace_thresholds,
        max_batch=s.semantic.batch_size,
        max_wait_ms=s.semantic.max_batch_wait_ms,
    )


def embedder_factory(s: SemanticSettings) -> Callable[[], Embedder]:
    """Loads the configured embedder when called (model loading is slow: done lazily)."""

    def load() -> Embedder:
        from semcache.embedders import load_embedder

        if s.cpu_threads is not None and not s.embedder.startswith("litellm:"):
            limit_torch_threads(s.cpu_threads)

        return load_embedder(
            s.embedder,
            device=s.device,
            batch_size=s.batch_size,
            precision=s.precision,
            runtime=s.runtime,
        )

    return load


def limit_torch_threads(threads: int) -> None:
    """``torch.set_num_threads(threads)`` when torch is installed (local embedders use it)."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.set_num_threads(threads)


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
