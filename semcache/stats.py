"""Typed results of the cache: how one response was served, counters, and audit records."""

from __future__ import annotations

import enum
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from semcache.compress.accounting import CompressionTotals
    from semcache.privacy.gate import PrivacyStats
    from semcache.tuning.results import TuningStats


class Tier(enum.StrEnum):
    """Where one answer came from; the one definition every module and the server read."""

    EXACT = "exact"
    SEMANTIC = "semantic"
    COALESCED = "coalesced"
    MERGED = "merged"
    """Waited for an in-flight upstream call of a paraphrase (same partition, same hit rule
    as a semantic hit); ``similarity`` is the cosine between the two questions."""
    MISS = "miss"
    BYPASS = "bypass"

    @property
    def is_hit(self) -> bool:
        """The answer cost no upstream call of this request's own."""
        return self in _HITS

    @property
    def used_upstream(self) -> bool:
        """An upstream call was made for this request (``miss`` or ``bypass``)."""
        return not self.is_hit

    @property
    def stored(self) -> bool:
        """The answer was read from storage (the exact or semantic tier)."""
        return self in (Tier.EXACT, Tier.SEMANTIC)


_HITS = frozenset({Tier.EXACT, Tier.SEMANTIC, Tier.COALESCED, Tier.MERGED})


class MissReason(enum.StrEnum):
    """Why a request went upstream: ``CacheInfo.miss_reason`` and the proxy's
    ``x-semcache-miss-reason`` header (None on hits)."""

    BYPASS = "bypass"
    """The caller or the policy kept every tier out (``no-cache``, a sampling request)."""
    PRIVATE = "private"
    """The question holds private data, which keeps it out of the semantic tier."""
    EXACT_ONLY = "exact_only"
    """Not a semantic question (no user message last, ``semantic`` off for it): only an
    exact repeat could have answered, and none was stored."""
    SEMANTIC_OFF = "semantic_off"
    """No semantic tier is configured (or it is failing to start): exact tiers only."""
    WARMING = "warming"
    """The semantic tier was still loading its model or opening its store."""
    SHED = "shed"
    """The cache's own queue would have delayed the answer past its budget (admission
    control), or an admitted lookup passed its deadline."""
    FAILED = "failed"
    """The store, the embedder or the shared Redis failed (counted in ``stats().errors``)."""
    UNREADABLE = "unreadable"
    """The embedder cannot read the question's text (the readability stage's check)."""
    BEYOND_WINDOW = "beyond_window"
    """The question goes on past what the embedder reads (its token window), so its
    vector cannot tell it from another that differs only there: exact repeats only."""
    NO_CANDIDATE = "no_candidate"
    """The partition holds no live entry to compare with."""
    BELOW_THRESHOLD = "below_threshold"
    """The nearest entry was not similar enough (``nearest_similarity`` says how close)."""
    REJECTED = "rejected"
    """Close enough, but the answer guard or the calibrated scorer vetoed it."""
    STALE = "stale"
    """The match was older than the caller's ``s-maxage`` or from a replaced model."""
    STATEFUL = "stateful"
    """A Responses request asking the provider to hold state (``previous_response_id``,
    ``conversation``, ``store: true``, ``background: true``): sent to the provider past every
    tier (see :mod:`semcache.protocols.stateful`)."""


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """How one response was served.

    ``similarity``: cosine similarity of a semantic hit (hit when >= threshold); for a
    ``merged`` answer, the similarity between this question and the in-flight one it waited
    for; for a ``coalesced`` answer, the leader's similarity, if it had one.
    ``nearest_similarity``: best candidate seen by the semantic lookup, hit or not (None when
    no lookup ran), so operators can see how close misses come to the threshold.
    ``origin``: for a ``coalesced`` answer, the tier the leader's answer came from (a
    ``semantic`` origin means the answer belongs to a paraphrase); None otherwise.
    ``age_s``: seconds since the served answer was stored (None for fresh answers).
    ``saved_cost_usd`` / ``saved_tokens``: what the upstream call that was avoided would cost.
    ``compression_saved_tokens`` / ``compression_saved_usd``: input tokens (and their price)
    that prompt compression removed from this request's upstream call; counted apart from the
    cache's own savings. ``provider_cached_tokens`` / ``provider_cached_usd``: input tokens
    the provider's prompt cache served on this request's own upstream call (a miss's; never a
    replay's), and what they saved against uncached input; also apart from the cache's savings.
    ``private_data``: kinds of private data the gate found in the question
    (``card``, ``email``, ...; never the text), which kept it out of the semantic tier.
    ``score``: for a semantic hit judged by a calibrated scorer (``semantic.scorer``), the
    learned probability that the stored answer serves this question (hit when >= the saved
    threshold); None when no model ran (no scorer, or a cosine outside the scored band).
    ``serve_id``: names a semantic hit for ``cache.feedback`` (None for other answers, whose
    feedback names the entry ``key``). ``miss_reason``: why a ``miss`` or ``bypass`` went
    upstream (:class:`MissReason`; None on hits). ``unreadable``: the question is in a script
    the embedder cannot read (miss reason ``unreadable``), so it was only looked up exactly
    and its answer is stored for exact repeats only. ``routed_to``: the embedder that
    looked the question up when the primary cannot read it (``semantic.fallback_embedder``:
    its own store and threshold); None when the primary did, or no semantic lookup ran.
    """

    tier: Tier
    key: str | None = None
    similarity: float | None = None
    nearest_similarity: float | None = None
    age_s: float | None = None
    saved_cost_usd: float = 0.0
    saved_tokens: int = 0
    origin: Tier | None = None
    compression_saved_tokens: int = 0
    compression_saved_usd: float = 0.0
    provider_cached_tokens: int = 0
    provider_cached_usd: float = 0.0
    private_data: tuple[str, ...] = ()
    score: float | None = None
    serve_id: str | None = None
    miss_reason: MissReason | None = None
    unreadable: bool = False
    routed_to: str | None = None

    @property
    def hit(self) -> bool:
        return self.tier.is_hit


InfoSource = Callable[[Mapping[str, Any]], "CacheInfo | None"]
"""Finds the ``CacheInfo`` of a response from its LiteLLM hidden params, for responses that
semcache saw but could not tag (LiteLLM's cache slot on the async path: see
:mod:`semcache.integrations.litellm`). Registered with :func:`add_info_source`."""

_INFO_SOURCES: list[InfoSource] = []


def add_info_source(source: InfoSource) -> None:
    """Let ``cache_info`` ask ``source`` about responses that carry no ``CacheInfo``."""
    if source not in _INFO_SOURCES:
        _INFO_SOURCES.append(source)


def cache_info(response: Any) -> CacheInfo | None:
    """The ``CacheInfo`` of a response, stream or stream chunk returned by semcache."""
    info = getattr(response, "cache_info", None)
    if isinstance(info, CacheInfo):
        return info
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict):
        info = hidden.get("semcache")
        if isinstance(info, CacheInfo):
            return info
        for source in _INFO_SOURCES:
            info = source(hidden)
            if info is not None:
                return info
    return None


@dataclass(frozen=True, slots=True)
class LookupBucket:
    """One time bucket: ``start`` (epoch seconds), answers by tier, (hits, lookups) by
    tenant, the upstream cost hits saved (USD), and answers by tenant and tier."""

    start: float
    tiers: Mapping[str, int]
    tenants: Mapping[str, tuple[int, int]]
    saved_cost_usd: float
    tenant_tiers: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LookupStats:
    """What :class:`LookupLog` holds (``CacheStats.lookups``; recorded by
    :class:`semcache.observe.lookups.LookupLog`).

    ``tiers`` and ``tenants`` are totals since start (``tenants``: tier -> count each);
    ``history`` the most recent time buckets (the last 60 unless asked for more),
    oldest first, ``bucket_s`` seconds each;
    ``similarity_edges`` the bin edges (41 over [0, 1]) of ``hit_similarity`` and
    ``miss_similarity`` (counts of the nearest similarity of semantic lookups that hit and
    that missed; requests that ran no semantic lookup are not in them).
    """

    bucket_s: int
    lookups: int
    hits: int
    saved_cost_usd: float
    tiers: Mapping[str, int]
    tenants: Mapping[str, Mapping[str, int]]
    history: tuple[LookupBucket, ...]
    similarity_edges: tuple[float, ...]
    hit_similarity: tuple[int, ...]
    miss_similarity: tuple[int, ...]
    dropped_tenants: int = 0

    @property
    def hit_rate(self) -> float:
        return self.hits / self.lookups if self.lookups else 0.0


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counters since the cache started, and the sizes of its tiers (``SemanticCache.stats``).

    ``errors``: cache failures served as misses, by kind; ``shed``: work admission control
    skipped; ``write_refused``: writes a fence refused, by tier and reason (never silent: a
    requested write raises :class:`~semcache.errors.WriteRefused`); ``store_entries``: None
    when not countable; ``privacy``, ``compression``, ``tuning``: their sections;
    ``spent_usd``: money the cache spent to decide hits, by kind; ``lookups``: the recorded
    lookups (:mod:`semcache.observe.lookups`); ``provider_cached_tokens`` /
    ``provider_cached_usd``: input tokens the providers' prompt caches served on the cache's
    upstream calls, and what they saved (apart from hits).
    """

    requests: int
    tiers: Mapping[Tier, int]
    upstream_calls: int
    stored: int
    verifier_rejections: int
    errors: Mapping[str, int]
    saved_cost_usd: float
    saved_tokens: int
    memory_entries: int = 0
    memory_bytes: int = 0
    in_flight: int = 0
    store_entries: int | None = None
    counts: Mapping[str, int] = field(default_factory=dict)
    privacy: PrivacyStats | None = None
    compression: CompressionTotals | None = None
    shed: Mapping[str, int] = field(default_factory=dict)
    tuning: TuningStats | None = None
    spent_usd: Mapping[str, float] = field(default_factory=dict)
    lookups: LookupStats | None = None
    provider_cached_tokens: int = 0
    provider_cached_usd: float = 0.0
    write_refused: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    @property
    def hit_rate(self) -> float:
        """Share of served requests that were hits (0.0 before the first request)."""
        hits = sum(n for tier, n in self.tiers.items() if tier.is_hit)
        return hits / self.requests if self.requests else 0.0


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """One stored answer as operators audit it (``SemanticCache.recent_entries``)."""

    key: str
    tenant: str
    namespace: str
    model: str
    question: str | None
    created_at: float
    expires_at: float
    hits: int
    last_similarity: float | None


def _nested(counts: Mapping[tuple[str, str], int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (outer, inner), n in counts.items():
        out.setdefault(outer, {})[inner] = n
    return out


class Stats:
    """Thread-safe counters behind :class:`CacheStats`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tiers: Counter[Tier] = Counter()
        self._errors: Counter[str] = Counter()
        self._shed: Counter[str] = Counter()
        self._refused: Counter[tuple[str, str]] = Counter()
        self._counts: Counter[str] = Counter()
        self._spent: dict[str, float] = {}
        self._saved_cost = 0.0
        self._saved_tokens = 0
        self._provider_cached_tokens = 0
        self._provider_cached_usd = 0.0

    def served(self, info: CacheInfo) -> None:
        with self._lock:
            self._tiers[info.tier] += 1
            if info.hit:
                self._saved_cost += info.saved_cost_usd
                self._saved_tokens += info.saved_tokens
            else:
                self._provider_cached_tokens += info.provider_cached_tokens
                self._provider_cached_usd += info.provider_cached_usd

    def error(self, kind: str) -> None:
        with self._lock:
            self._errors[kind] += 1

    def shed(self, kind: str) -> None:
        with self._lock:
            self._shed[kind] += 1

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def refused(self, tier: str, reason: str) -> None:
        """A write to ``tier`` refused by a fence, and why (``pipeline.fence.Refusal``)."""
        with self._lock:
            self._refused[(tier, reason)] += 1

    def spend(self, kind: str, usd: float) -> None:
        """Money the cache spent deciding (``kind``: what spent it), in USD."""
        with self._lock:
            self._spent[kind] = self._spent.get(kind, 0.0) + usd

    def snapshot(self, **sizes: Any) -> CacheStats:
        """The counters now; ``sizes`` are the tier sizes the caller measured."""
        with self._lock:
            counts = dict(self._counts)
            return CacheStats(
                requests=sum(self._tiers.values()),
                tiers={tier: self._tiers[tier] for tier in Tier},
                upstream_calls=counts.pop("upstream_calls", 0),
                stored=counts.pop("stored", 0),
                verifier_rejections=counts.pop("verifier_rejections", 0),
                errors=dict(self._errors),
                saved_cost_usd=self._saved_cost,
                saved_tokens=self._saved_tokens,
                provider_cached_tokens=self._provider_cached_tokens,
                provider_cached_usd=self._provider_cached_usd,
                counts=counts,
                shed=dict(self._shed),
                write_refused=_nested(self._refused),
                spent_usd=dict(self._spent),
                **sizes,
            )


@dataclass(slots=True)
class _Audit:
    hits: int = 0
    last_similarity: float | None = None


class HitAudit:
    """Hit counts and last similarity per served entry, for operators' audits.

    Bounded: only the ``max_keys`` most recently hit entries are remembered.
    """

    def __init__(self, max_keys: int = 10_000) -> None:
        self._max_keys = max_keys
        self._records: OrderedDict[str, _Audit] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, key: str, similarity: float | None) -> None:
        with self._lock:
            record = self._records.setdefault(key, _Audit())
            self._records.move_to_end(key)
            record.hits += 1
            if similarity is not None:
                record.last_similarity = similarity
            while len(self._records) > self._max_keys:
                self._records.popitem(last=False)

    def get(self, key: str) -> tuple[int, float | None]:
        """(hits, last similarity) of ``key``; (0, None) when never hit or forgotten."""
        with self._lock:
            record = self._records.get(key)
            return (0, None) if record is None else (record.hits, record.last_similarity)


@dataclass(frozen=True, slots=True)
class CacheHit:
    """What ``check`` found: the stored answer (a private copy), how it was found, and the
    metadata stored with it (``store(..., metadata=...)``; None when none was)."""

    response: Any
    info: CacheInfo
    metadata: Mapping[str, Any] | None = None

    @property
    def text(self) -> str | None:
        """The first choice's message text (None for a tool call or an empty answer)."""
        choices = getattr(self.response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        content = getattr(message, "content", None)
        return content if isinstance(content, str) else None


@dataclass(frozen=True, slots=True)
class FlushReport:
    """What write-behind did with the answers handed to it since the previous ``flush``:
    ``written``; ``dropped`` (kept in memory only, ``admission.max_pending_writes`` reached;
    ``store()`` never drops); ``failed``; ``fenced`` (refused by a fence: overtaken by a
    purge, by design, or begun before a lost purge history); ``reasons`` for dropped, failed
    and fenced (``refused: <reason>``).
    """

    written: int = 0
    dropped: int = 0
    failed: int = 0
    fenced: int = 0
    reasons: Mapping[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Every write handed over since the previous flush landed (or was purged)."""
        return self.dropped == 0 and self.failed == 0


@dataclass(frozen=True, slots=True)
class ImportFailure:
    """One item of ``store_many`` that did not reach the store: its position and why."""

    index: int
    reason: str


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What ``store_many`` did: ``written`` items are in the store (checked by their write's
    outcome, not assumed); ``skipped`` were kept out by the policy (``no-store``, ``ttl=0``,
    a sampled request, an incomplete answer), as ``store`` returns None for them;
    ``failed`` lists the others with reasons. ``keys``: each item's key (None when skipped)."""

    total: int
    written: int
    skipped: int
    failed: tuple[ImportFailure, ...] = ()
    keys: tuple[str | None, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failed
