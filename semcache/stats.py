"""Counters of what the cache did, and ``CacheInfo``: what happened to one response."""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any, Literal

Tier = Literal["exact", "semantic", "coalesced", "miss", "bypass"]
TIERS: tuple[Tier, ...] = ("exact", "semantic", "coalesced", "miss", "bypass")


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """How one response was served.

    ``similarity``: cosine similarity of a semantic hit (hit when >= threshold).
    ``nearest_similarity``: best candidate seen by the semantic lookup, hit or not (None when
    no lookup ran), so operators can see how close misses come to the threshold.
    ``age_s``: seconds since the served answer was stored (None for fresh answers).
    ``saved_cost_usd`` / ``saved_tokens``: what the upstream call that was avoided would cost.
    """

    tier: Tier
    key: str | None = None
    similarity: float | None = None
    nearest_similarity: float | None = None
    age_s: float | None = None
    saved_cost_usd: float = 0.0
    saved_tokens: int = 0

    @property
    def hit(self) -> bool:
        return self.tier in ("exact", "semantic", "coalesced")


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
    return None


class Stats:
    """Thread-safe counters; ``snapshot()`` gives a plain dict for ``SemanticCache.stats()``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tiers: Counter[str] = Counter()
        self._errors: Counter[str] = Counter()
        self._counts: Counter[str] = Counter()
        self._saved_cost = 0.0
        self._saved_tokens = 0

    def served(self, info: CacheInfo) -> None:
        with self._lock:
            self._tiers[info.tier] += 1
            if info.hit:
                self._saved_cost += info.saved_cost_usd
                self._saved_tokens += info.saved_tokens

    def error(self, kind: str) -> None:
        with self._lock:
            self._errors[kind] += 1

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            requests = sum(self._tiers.values())
            hits = sum(self._tiers[t] for t in ("exact", "semantic", "coalesced"))
            return {
                "requests": requests,
                "tiers": {t: self._tiers[t] for t in TIERS},
                "hit_rate": hits / requests if requests else 0.0,
                "upstream_calls": self._counts["upstream_calls"],
                "stored": self._counts["stored"],
                "verifier_rejections": self._counts["verifier_rejections"],
                "errors": dict(self._errors),
                "saved_cost_usd": self._saved_cost,
                "saved_tokens": self._saved_tokens,
            }


class HitAudit:
    """Hit counts and last similarity per served entry, for operators' audits.

    Bounded: only the ``max_keys`` most recently hit entries are remembered.
    """

    def __init__(self, max_keys: int = 10_000) -> None:
        self._max_keys = max_keys
        self._records: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, key: str, similarity: float | None) -> None:
        with self._lock:
            record = self._records.setdefault(key, {"hits": 0, "last_similarity": None})
            self._records.move_to_end(key)
            record["hits"] += 1
            if similarity is not None:
                record["last_similarity"] = similarity
            while len(self._records) > self._max_keys:
                self._records.popitem(last=False)

    def get(self, key: str) -> dict[str, Any]:
        with self._lock:
            return dict(self._records.get(key, {}))
