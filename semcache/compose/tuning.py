"""The tuning loop as ``tuning`` and ``verify`` describe it: feedback, the live false-hit
estimate, miss analysis and (when sampled) shadow verification."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from semcache.config.settings import (
    CacheSettings,
)
from semcache.core.memory import MemoryTier
from semcache.errors import EmbedderError
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.write_behind import WriteBehind
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats
from semcache.tuning.applied import AppliedThresholds, Thresholds
from semcache.tuning.estimate import FalseHitMonitor
from semcache.tuning.labels import LabelLog
from semcache.tuning.ledger import ServeLedger
from semcache.tuning.loop import TuningLoop
from semcache.tuning.misses import MissLog, NearMisses
from semcache.tuning.settings import VerifySettings

if TYPE_CHECKING:
    import numpy as np

    from semcache.replicas.tier import SharedTier
    from semcache.runtime.upstream import Upstream
    from semcache.tuning.shadow import OnVerdict, ShadowFactory, ShadowVerifier


def tuning_loop(
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
        near_misses=NearMisses(backend, misses, clock, margin=t.miss_margin),
        shadow=shadow_factory(s.verify, backend, failopen, stats, upstream),
        shared=shared,
    )


def applied_thresholds(s: CacheSettings) -> AppliedThresholds | None:
    """Where thresholds applied at runtime are kept (``tuning.thresholds_path``; None: in
    memory only), over the configured ones."""
    if s.tuning.thresholds_path is None:
        return None
    configured = Thresholds(s.semantic.threshold, dict(s.semantic.namespace_thresholds))
    return AppliedThresholds(s.tuning.thresholds_path, configured)


def shadow_factory(
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
