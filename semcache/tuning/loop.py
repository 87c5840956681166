"""The tuning loop's state in one cache: serves, labels, the live estimate, near misses.

Feedback contract: a "wrong" verdict withdraws the entry that served the answer at once
(fenced against pending writes, dropped from memory, ended in the store so it stays withdrawn
across restarts; with a shared Redis tier on every replica, :mod:`semcache.replicas.purges`).
A verdict on a semantic hit also records a labeled pair. Feedback names an answer by its serve
id or entry key, and only the tenant it was served to may give it; with a shared Redis tier
any process finds it (:mod:`semcache.replicas.serves`), without one only the process that
served it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from semcache.core.memory import MemoryTier
from semcache.errors import UnknownServe
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.fence import PurgeFilter
from semcache.pipeline.semantic_tier import EXACT_ONLY_SCOPE
from semcache.pipeline.write_behind import WriteBehind
from semcache.stats import Stats
from semcache.tuning.estimate import FalseHitMonitor
from semcache.tuning.labels import LabelLog
from semcache.tuning.ledger import ServeLedger
from semcache.tuning.misses import MissLog, NearMisses
from semcache.tuning.records import LabeledPair, Served, Source
from semcache.tuning.results import FeedbackResult, TuningStats
from semcache.tuning.shadow import ShadowFactory, ShadowVerifier

if TYPE_CHECKING:
    from semcache.replicas.tier import SharedTier

#: Seconds ``close`` waits for running shadow checks before cancelling them.
SHADOW_CLOSE_TIMEOUT_S = 5.0


def estimate_key(served: Served) -> str:
    """Where a shadow verdict counts in the live estimate: its namespace, or for a hit the
    fallback lane served, ``namespace@embedder`` (another threshold, another rate)."""
    if served.routed_to is None:
        return served.namespace
    return f"{served.namespace}@{served.routed_to}"


class TuningLoop:
    """Feedback, shadow verdicts and miss analysis for one cache (see the module docstring).

    ``shadow`` builds the shadow verifier (None: verification off). It is a factory because
    the verifier reports to this loop's :meth:`on_verdict`: the loop builds it in its
    constructor, so a loop never exists without the verifier its settings asked for.
    """

    def __init__(
        self,
        *,
        backend: SemanticBackend,
        memory: MemoryTier,
        writer: WriteBehind,
        stats: Stats,
        clock: Callable[[], float],
        ledger: ServeLedger,
        labels: LabelLog,
        monitor: FalseHitMonitor,
        misses: MissLog,
        near_misses: NearMisses,
        shadow: ShadowFactory | None = None,
        shared: SharedTier | None = None,
    ) -> None:
        self._shared = shared
        self._backend = backend
        self._memory = memory
        self._writer = writer
        self._stats = stats
        self._clock = clock
        self.ledger = ledger
        self.labels = labels
        self.monitor = monitor
        self.misses = misses
        self.near_misses = near_misses
        self._shadow = None if shadow is None else shadow(self.on_verdict)

    @property
    def shadow(self) -> ShadowVerifier | None:
        """The shadow verifier (None when verification is off); the tuning stage feeds it."""
        return self._shadow

    # -- feedback -------------------------------------------------------------------------
    def resolve(self, ref: str, tenant: str) -> Served:
        """The serve ``ref`` names for ``tenant``: a serve id, else an entry key served or
        held in memory; :class:`UnknownServe` otherwise (also for another tenant's)."""
        served = self.ledger.get(ref)
        if served is not None and served.tenant == tenant:
            return served
        served = self.ledger.latest(ref, tenant)
        if served is not None:
            return served
        answer = self._memory.get(ref)
        entry = None if answer is None else answer.entry
        if entry is not None and entry.tenant == tenant:
            return Served.of_entry(entry, at=self._clock())
        if self._shared is not None:
            raise UnknownServe(
                "id",
                f"no answer {ref!r} was served to this tenant recently by any process sharing "
                "this Redis (or its record expired or was evicted)",
            )
        raise UnknownServe(
            "id",
            f"no answer {ref!r} was served to this tenant recently by this process (or it was "
            "forgotten); without redis.url a serve id is known only to the process that served "
            "the answer, so send the feedback there, or set redis.url to share them",
        )

    async def find(self, ref: str, tenant: str) -> Served:
        """:meth:`resolve`, then (with a shared Redis tier) the serve records every process
        writes there and its exact tier: feedback works on any replica or worker."""
        try:
            return self.resolve(ref, tenant)
        except UnknownServe:
            if self._shared is None:
                raise
            served = await self._shared.serves.find(ref, tenant)
            if served is None:
                raise
            return served

    async def feedback(self, ref: str, correct: bool, tenant: str) -> FeedbackResult:
        served = await self.find(ref, tenant)
        self._stats.count("feedback_right" if correct else "feedback_wrong")
        withdrawn = False if correct else await self._withdraw(served)
        labeled = await self._label(served, correct, Source.FEEDBACK, None)
        return FeedbackResult(served, correct, withdrawn, labeled)

    async def _withdraw(self, served: Served) -> bool:
        withdrawn = PurgeFilter(
            served.tenant,
            served.namespace,
            served.model,
            key=served.key,
            scope=served.scope or EXACT_ONLY_SCOPE,
        )
        removed = await self._writer.withdraw(
            served.key, lambda: self._writer.expire_stored(withdrawn)
        )
        if self._shared is not None:  # raises on a Redis error: the caller must know
            removed += await self._shared.withdraw(withdrawn)
        self._stats.count("feedback_withdrawn", 1 if removed else 0)
        return removed > 0

    async def _label(
        self, served: Served, correct: bool, source: Source, probability: float | None
    ) -> bool:
        if served.similarity is None or served.query is None or served.question is None:
            return False
        await self.labels.add(
            LabeledPair(
                text_a=served.query,
                text_b=served.question,
                label=1 if correct else 0,
                source=source,
                tenant=served.tenant,
                namespace=served.namespace,
                similarity=served.similarity,
                score=served.score,
                sample_probability=probability,
                at=self._clock(),
                routed_to=served.routed_to,
            )
        )
        return True

    # -- shadow verdicts ------------------------------------------------------------------
    async def on_verdict(self, served: Served, wrong: bool, probability: float) -> None:
        """A shadow verdict: into the live estimate and the labeled pairs."""
        self.monitor.add(estimate_key(served), wrong=wrong, probability=probability)
        await self._label(served, not wrong, Source.SHADOW, probability)

    # -- reading --------------------------------------------------------------------------
    def snapshot(self, counts: Mapping[str, int]) -> TuningStats:
        cost = self.shadow.cost if self.shadow is not None else None
        return TuningStats(
            delta=self.monitor.delta,
            estimates=self.monitor.estimates(),
            feedback_right=counts.get("feedback_right", 0),
            feedback_wrong=counts.get("feedback_wrong", 0),
            shadow_sampled=counts.get("verify_sampled", 0),
            shadow_agree=counts.get("verify_agree", 0),
            shadow_disagree=counts.get("verify_disagree", 0),
            shadow_skipped=counts.get("verify_skipped", 0),
            shadow_calls=0 if cost is None else cost.calls,
            shadow_tokens=0 if cost is None else cost.tokens,
            shadow_cost_usd=0.0 if cost is None else cost.cost_usd,
            labels=len(self.labels),
            near_misses=len(self.misses),
        )

    async def drain(self) -> None:
        """Wait for background shadow checks started so far."""
        if self.shadow is not None:
            await self.shadow.drain()

    async def close(self) -> None:
        if self.shadow is not None:
            await self.shadow.close(SHADOW_CLOSE_TIMEOUT_S)
