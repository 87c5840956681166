"""The recorded lookups stay bounded by their settings, whatever the traffic."""

from __future__ import annotations

from semcache.observe.lookups import OTHER_TENANTS, SIMILARITY_BINS, LookupLog
from semcache.stats import CacheInfo, Tier


def test_buckets_tenants_and_histograms_are_bounded() -> None:
    now = [0.0]
    log = LookupLog(bucket_s=60, buckets=10, max_tenants=3, clock=lambda: now[0])
    for i in range(1000):
        now[0] = i * 6.0  # 100 buckets of traffic
        tier = Tier.SEMANTIC if i % 4 == 0 else Tier.MISS
        info = CacheInfo(
            tier=tier,
            similarity=0.95 if tier is Tier.SEMANTIC else None,
            nearest_similarity=0.95 if tier is Tier.SEMANTIC else 0.5,
            saved_cost_usd=0.01 if tier is Tier.SEMANTIC else 0.0,
        )
        log.record(f"tenant-{i % 7}", info)
    stats = log.snapshot(buckets=None)
    assert stats.lookups == 1000 and stats.hits == 250
    assert len(stats.history) == 10 and stats.history[-1].start == 5940.0
    assert len(log.snapshot().history) == 10 and len(log.snapshot(buckets=4).history) == 4
    assert set(stats.tenants) == {"tenant-0", "tenant-1", "tenant-2", OTHER_TENANTS}
    assert sum(sum(c.values()) for c in stats.tenants.values()) == 1000
    assert stats.dropped_tenants == 571  # every lookup of tenants 3..6
    assert len(stats.hit_similarity) == SIMILARITY_BINS
    assert stats.hit_similarity[int(0.95 * SIMILARITY_BINS)] == 250
    assert stats.miss_similarity[int(0.5 * SIMILARITY_BINS)] == 750
    assert abs(stats.saved_cost_usd - 2.5) < 1e-9


def test_each_bucket_counts_by_tenant_and_tier() -> None:
    now = [0.0]
    log = LookupLog(bucket_s=60, clock=lambda: now[0])
    for tenant, tier in [("a", Tier.EXACT), ("a", Tier.SEMANTIC), ("a", Tier.MISS)]:
        log.record(tenant, CacheInfo(tier=tier))
    now[0] = 60.0
    log.record("b", CacheInfo(tier=Tier.EXACT))
    log.record("a", CacheInfo(tier=Tier.BYPASS))
    first, second = log.snapshot().history
    assert first.tenant_tiers == {"a": {"exact": 1, "semantic": 1, "miss": 1}}
    assert first.tenants == {"a": (2, 3)}
    assert second.tenant_tiers == {"b": {"exact": 1}, "a": {"bypass": 1}}
    assert second.tenants == {"b": (1, 1), "a": (0, 1)}
