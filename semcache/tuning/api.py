"""The tuning loop's methods on ``SemanticCache`` (a mixin, like ``semcache.direct``).

Sync methods run on the cache's loop and block; the ``a``-prefixed twins await the same
coroutine, so both expose the same operations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from semcache.core.policy import validate_tenant
from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.stats import cache_info
from semcache.tuning.applied import Thresholds
from semcache.tuning.misses import MissCluster, cluster_misses, export_rows
from semcache.tuning.records import LabeledPair
from semcache.tuning.results import FeedbackResult
from semcache.tuning.review import find_miss, review_pair, to_label

if TYPE_CHECKING:
    from semcache.compose import Assembly
    from semcache.config.settings import CacheSettings
    from semcache.runtime.loop import LoopThread


@dataclass(frozen=True, slots=True)
class ThresholdChange:
    """The hit thresholds (cosine, a hit when >=) before and after ``apply_thresholds``."""

    threshold_before: float
    threshold_after: float
    namespace_thresholds_before: Mapping[str, float]
    namespace_thresholds_after: Mapping[str, float]

    @property
    def changed(self) -> bool:
        return self.threshold_before != self.threshold_after or dict(
            self.namespace_thresholds_before
        ) != dict(self.namespace_thresholds_after)


def feedback_ref(response_or_key: Any) -> str:
    """The serve id (or, for an exact hit, the entry key) a response or string names."""
    if isinstance(response_or_key, str):
        if not response_or_key:
            raise InvalidRequest("response_or_key", "is empty")
        return response_or_key
    info = cache_info(response_or_key)
    if info is None:
        raise InvalidRequestType(
            "response_or_key",
            f"expected a response returned by semcache or a key, got "
            f"{type(response_or_key).__name__}",
        )
    if not info.tier.stored and info.origin is None:
        raise InvalidRequest(
            "response_or_key", f"this answer was not served from the cache (tier {info.tier})"
        )
    ref = info.serve_id if info.serve_id is not None else info.key
    if ref is None:
        raise InvalidRequest("response_or_key", "the response names no cached answer")
    return ref


class TuningAPI:
    """Feedback, miss analysis and live threshold changes; mixed into ``SemanticCache``."""

    _parts: Assembly
    _loop: LoopThread

    def feedback(
        self, response_or_key: Any, correct: bool, *, tenant: str | None = None
    ) -> FeedbackResult:
        """Say whether a cached answer was right for the query it served.

        ``response_or_key``: a response semcache returned, its ``serve_id``, or an entry key.
        "Wrong" withdraws the entry at once (:mod:`semcache.tuning.loop`); a semantic hit's verdict
        is also a labeled pair. :class:`semcache.errors.UnknownServe` when none was served to
        ``tenant`` recently.
        """
        return self._loop.run(self._feedback(response_or_key, correct, tenant))

    async def afeedback(
        self, response_or_key: Any, correct: bool, *, tenant: str | None = None
    ) -> FeedbackResult:
        """``feedback`` for async callers."""
        return await self._loop.arun(self._feedback(response_or_key, correct, tenant))

    async def _feedback(
        self, response_or_key: Any, correct: bool, tenant: str | None
    ) -> FeedbackResult:
        if not isinstance(correct, bool):
            raise InvalidRequestType("correct", f"expected true or false, got {correct!r}")
        ref = feedback_ref(response_or_key)
        return await self._parts.tuning.feedback(ref, correct, validate_tenant(tenant))

    def misses(self, *, tenant: str | None = None, min_count: int = 1) -> list[MissCluster]:
        """Recent near misses grouped by the stored question they came close to."""
        return cluster_misses(
            self._parts.tuning.misses.recent(), tenant=tenant, min_count=min_count
        )

    def miss_rows(self, *, tenant: str | None = None) -> list[dict[str, Any]]:
        """Near misses as pairs to label (``text_a``, ``text_b``, ``label`` null)."""
        return export_rows(self._parts.tuning.misses.recent(), tenant=tenant)

    def near_misses_to_label(
        self, *, tenant: str | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        """Near misses not labeled yet (``miss_rows`` with an ``id``), most frequent first."""
        tuning = self._parts.tuning
        return to_label(tuning.misses.recent(), tuning.labels.pairs(), tenant=tenant, limit=limit)

    def label_near_miss(self, miss_id: str, correct: bool) -> LabeledPair:
        """Record an operator's verdict on a near miss (``correct``: its stored answer would
        have been right for the query): a labeled pair of source ``review``, appended to
        ``tuning.labels_path`` where ``semcache calibrate --labels`` reads it. Raises
        :class:`InvalidRequest` naming ``id`` when no such near miss is remembered."""
        if not isinstance(correct, bool):
            raise InvalidRequestType("correct", f"expected true or false, got {correct!r}")
        tuning = self._parts.tuning
        miss = find_miss(tuning.misses.recent(), miss_id)
        if miss is None:
            raise InvalidRequest("id", f"no near miss {miss_id!r} is remembered")
        pair = review_pair(miss, correct, self._parts.clock())
        self._loop.run(tuning.labels.add(pair))
        return pair

    def labeled_pairs(self) -> list[LabeledPair]:
        """Labeled pairs recorded from feedback and shadow verdicts, oldest first."""
        return self._parts.tuning.labels.pairs()

    def drain_tuning(self) -> None:
        """Wait for background shadow checks and miss lookups started so far."""
        self._loop.run(self._parts.tuning.drain())

    def threshold(self, namespace: str = "default") -> float | None:
        """The cosine a semantic hit needs in ``namespace`` now (None: no semantic tier)."""
        tier = self._parts.backend.tier
        return None if tier is None else tier.threshold_for(namespace)

    def served_thresholds(self) -> tuple[float | None, dict[str, float]]:
        """The default threshold served now and the namespace overrides (None, {}: no
        semantic tier): what ``GET /admin/threshold`` reports."""
        tier = self._parts.backend.tier
        return (None, {}) if tier is None else (tier.threshold, dict(tier.namespace_thresholds))

    def thresholds_persisted(self) -> bool:
        """Whether a threshold applied now is kept across a restart
        (``tuning.thresholds_path`` is set)."""
        return self._parts.applied is not None

    def apply_thresholds(self, settings: CacheSettings) -> ThresholdChange:
        """Serve with ``settings``' semantic threshold and namespace overrides from now on
        (the proxy's admin reload); other settings need a restart. With
        ``tuning.thresholds_path``, thresholds applied over these same settings stay served
        (as after a restart); once the configured ones changed, they win."""
        tier = self._parts.backend.tier
        configured = Thresholds(
            settings.semantic.threshold, dict(settings.semantic.namespace_thresholds)
        )
        applied = self._parts.applied
        if applied is not None:
            applied.configured = configured
        new = configured if applied is None else applied.served()
        new_ns = dict(new.namespaces)
        if tier is None:
            return ThresholdChange(new.threshold, new.threshold, new_ns, new_ns)
        change = ThresholdChange(
            tier.threshold, new.threshold, dict(tier.namespace_thresholds), new_ns
        )
        tier.namespace_thresholds = new_ns
        tier.threshold = new.threshold
        return change

    def serve_threshold(self, threshold: float, namespace: str | None = None) -> ThresholdChange:
        """Serve with ``threshold`` (cosine, a hit when >=) from now on, as the default or as
        ``namespace``'s override: the proxy's ``POST /admin/threshold``, which
        ``semcache calibrate --apply --reload-url`` and the dashboard's apply call. With
        ``tuning.thresholds_path`` it is written there first (a failed write changes
        nothing), so a restart serves it; without, a restart serves the configured one."""
        if isinstance(threshold, bool) or not 0.0 <= threshold <= 1.0:
            raise InvalidRequest("threshold", f"expected a cosine in [0, 1], got {threshold!r}")
        tier = self._parts.backend.tier
        if tier is None:
            raise InvalidRequest("threshold", "this cache has no semantic tier")
        before_ns = dict(tier.namespace_thresholds)
        after = (
            Thresholds(threshold, before_ns)
            if namespace is None
            else Thresholds(tier.threshold, {**before_ns, namespace: threshold})
        )
        if self._parts.applied is not None:
            self._parts.applied.save(after)
        change = ThresholdChange(tier.threshold, after.threshold, before_ns, dict(after.namespaces))
        tier.namespace_thresholds = dict(after.namespaces)
        tier.threshold = after.threshold
        return change
