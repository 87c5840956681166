"""Replicas on one Redis: upstream calls and follower overhead, and Redis vs store exact hits.

    python benchmarks/bench_replicas.py [--requests 1000] [--replicas 1 2 4] [--delay 1.0]

Starts its own ``redis-server`` (Debian's package), then up to 4 replica processes (each a
``SemanticCache`` with ``redis.url`` set, its own memory tier and an in-process
``FakeUpstream``; the store is off so only Redis is shared). Everything is on loopback, bounded
by timeouts, and stopped at the end.

1. For N = 1, 2, 4 replicas: ``--requests`` concurrent identical ``acompletion`` calls
   spread evenly over the replicas, all released at one wall-clock instant (a fresh question
   per N). Reported: upstream calls (target 1 for every N); for every follower, the time
   between the leader's upstream call returning and the follower getting its own copy (p50,
   p99; N = 1 is the same-run baseline: in-process coalescing only); per replica other than
   the leader's, its first answer after that instant; and the same with one request per
   replica (no in-process fan-out: the cross-replica notification alone).
2. Exact hit from Redis vs from the embedded Qdrant (edge) store: the same stored answer read
   by key, memory tier off (``exact.max_entries=0``), sync ``completion``, p50 and p99 of
   ``--hits`` calls each, alternating blocks in one process.

Prints figures and ratios; asserts nothing (this machine is shared and noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import tempfile
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

MODEL = "openai/gpt-4o-mini"
STEP_TIMEOUT_S = 120.0


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def request(question: str) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": question}]}


# -- replica process ----------------------------------------------------------------------------


def replica_main(conn: Any, redis_url: str, delay_s: float, gc_freeze: bool) -> None:
    """One replica: a cache on the shared Redis, answering burst commands from the parent.

    Its upstream is in-process (``FakeUpstream``), so the instant the upstream call returned
    is known exactly (no HTTP client in between); the parent adds up the replicas' calls.
    """
    from semcache import CacheSettings, SemanticCache
    from semcache.testing import FakeUpstream

    returned: list[float] = []

    class TimedUpstream(FakeUpstream):
        async def complete(self, params: Any) -> Any:
            response = await super().complete(params)
            returned.append(time.time())
            return response

    upstream = TimedUpstream(delay_s=delay_s)
    cache = SemanticCache(
        CacheSettings(store={"backend": "none"}, redis={"url": redis_url}), upstream=upstream
    )
    cache.completion(**request("warm up"))  # first-call imports
    if gc_freeze:  # what `semcache serve` does before serving (server.gc_freeze)
        from semcache.server.cli import freeze_startup_heap

        freeze_startup_heap()
    conn.send("ready")
    while True:
        command = conn.recv()
        if command is None:
            break
        question, n, start_at = command
        calls, returned[:] = upstream.call_count, []
        done = asyncio.run(burst(cache, request(question), n, start_at))
        conn.send((done, upstream.call_count - calls, list(returned)))
    cache.close()


Done = tuple[float, float, str]
"""(wall time asked, wall time answered, tier) of one call."""


async def burst(cache: Any, req: dict[str, Any], n: int, start_at: float) -> list[Done]:
    """``n`` concurrent calls released at ``start_at``."""
    from semcache import cache_info

    async def one() -> Done:
        asked = time.time()
        response = await cache.acompletion(**req)
        return asked, time.time(), str(cache_info(response).tier)

    await asyncio.sleep(max(0.0, start_at - time.time()))
    return await asyncio.gather(*(one() for _ in range(n)))


class Fleet:
    def __init__(self, size: int, redis_url: str, delay_s: float, gc_freeze: bool) -> None:
        ctx = mp.get_context("spawn")
        self.conns = []
        self.processes = []
        for _ in range(size):
            parent, child = ctx.Pipe()
            process = ctx.Process(
                target=replica_main, args=(child, redis_url, delay_s, gc_freeze), daemon=True
            )
            process.start()
            self.conns.append(parent)
            self.processes.append(process)
        for conn in self.conns:
            if not conn.poll(300) or conn.recv() != "ready":
                raise RuntimeError("a replica did not start")

    def burst(
        self, n_replicas: int, question: str, total: int
    ) -> list[tuple[list[Done], int, list[float]]]:
        start_at = time.time() + 1.0
        per = total // n_replicas
        for i in range(n_replicas):
            self.conns[i].send((question, per + (1 if i < total % n_replicas else 0), start_at))
        results = []
        for i in range(n_replicas):
            if not self.conns[i].poll(STEP_TIMEOUT_S):
                raise RuntimeError(f"replica {i} did not answer in time")
            results.append(self.conns[i].recv())
        return results

    def close(self) -> None:
        for conn in self.conns:
            conn.send(None)
        for process in self.processes:
            process.join(timeout=15)
            if process.is_alive():
                process.kill()


def bench_fleet(fleet: Fleet, sizes: list[int], total: int | None, *, tag: str = "") -> list[dict]:
    """The reference instant is the leader's upstream call returning (wall clock, same
    machine). A follower's overhead is how long after that it got its own copy: the leader
    storing the answer, Redis telling the other replicas, and each replica's in-process
    fan-out (the part N = 1 has too)."""
    rows = []
    for n in sizes:
        question = f"Question {tag} for {n} replica(s): what is coalescing?"
        replies = fleet.burst(n, question, n if total is None else total)
        per_replica = [done for done, _, _ in replies]
        calls = sum(c for _, c, _ in replies)
        answered = [t for _, _, times in replies for t in times]
        everything = [(*d, i) for i, done in enumerate(per_replica) for d in done]
        leader_replica = next((i for _, _, tier, i in everything if tier == "miss"), -1)
        reference = min(answered) if answered else float("nan")
        # followers that were already waiting when the answer came (late ones are hits)
        followers = [
            t - reference
            for asked, t, tier, _ in everything
            if tier != "miss" and asked < reference
        ]
        # serial fan-out inside each replica: gaps between its consecutive answers
        gaps = [
            float(g)
            for done in per_replica
            for g in np.diff(sorted(t for _, t, _ in done if t >= reference))
        ]
        notify = [
            min(t for _, t, _ in done) - reference
            for i, done in enumerate(per_replica)
            if i != leader_replica
        ]
        tiers: dict[str, int] = {}
        for _, _, tier, _ in everything:
            tiers[tier] = tiers.get(tier, 0) + 1
        rows.append(
            {
                "replicas": n,
                "requests": len(everything),
                "waiting": len(followers),
                "upstream_calls": calls,
                "tiers": tiers,
                "after_leader_p50_ms": pct(followers, 50) * 1e3,
                "after_leader_p99_ms": pct(followers, 99) * 1e3,
                "notify_ms": [round(x * 1e3, 2) for x in notify],
                "gap_p50_us": pct(gaps, 50) * 1e6,
            }
        )
    return rows


# -- exact hit: Redis vs edge store --------------------------------------------------------------


def bench_exact_hits(redis_url: str, hits: int) -> dict[str, list[float]]:
    from semcache import CacheSettings, SemanticCache, cache_info
    from semcache.testing import FakeEmbedder, FakeUpstream

    with tempfile.TemporaryDirectory(prefix="bench-replicas-edge-") as path:
        redis_cache = SemanticCache(
            CacheSettings(
                store={"backend": "none"}, exact={"max_entries": 0}, redis={"url": redis_url}
            ),
            upstream=FakeUpstream(),
        )
        edge_cache = SemanticCache(
            CacheSettings(store={"backend": "edge", "path": path}, exact={"max_entries": 0}),
            embedder=FakeEmbedder(),
            upstream=FakeUpstream(),
        )
        req = request("What is the exact-hit latency of each store?")
        for cache in (redis_cache, edge_cache):
            cache.completion(**req)
            cache.flush()
            tier = cache_info(cache.completion(**req)).tier
            if tier != "exact":
                raise RuntimeError(f"expected an exact hit, got {tier}")
        times: dict[str, list[float]] = {"redis": [], "edge": []}
        block = 100
        for _ in range(max(1, hits // block)):
            for name, cache in (("redis", redis_cache), ("edge", edge_cache)):
                for _ in range(block):
                    t = time.perf_counter()
                    cache.completion(**req)
                    times[name].append(time.perf_counter() - t)
        redis_cache.close()
        edge_cache.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument(
        "--delay",
        type=float,
        default=1.0,
        help="upstream seconds per call: long enough for every request to be waiting",
    )
    parser.add_argument("--hits", type=int, default=2000)
    parser.add_argument(
        "--no-gc-freeze",
        action="store_true",
        help="replicas keep their start-up heap in the collector's sight (serve freezes it)",
    )
    args = parser.parse_args()

    from semcache.testing import RedisServer

    with RedisServer() as redis_server:
        fleet = Fleet(max(args.replicas), redis_server.url, args.delay, not args.no_gc_freeze)
        try:
            # a throwaway burst on every replica first: one-time costs (lazy imports, script
            # loading, first pickles) would otherwise land on whichever row runs first
            bench_fleet(fleet, [max(args.replicas)], 100, tag="warm-up")
            rows = bench_fleet(fleet, args.replicas, args.requests)
            # one request per replica: no in-process fan-out, so what remains after the
            # upstream's answer is the leader storing it and Redis telling the others
            single = bench_fleet(fleet, [n for n in args.replicas if n > 1], None, tag="single")
        finally:
            fleet.close()
        times = bench_exact_hits(redis_server.url, args.hits)

    print(
        f"\n{args.requests} concurrent identical requests, upstream {args.delay * 1e3:.0f} ms, "
        f"gc_freeze {not args.no_gc_freeze}, load average {os.getloadavg()[0]:.1f}"
    )
    print(
        "| replicas | upstream calls | tiers | waiting followers: answered after the upstream "
        "call returned, p50 / p99 | each other replica's first answer after it | in-replica gap "
        "between answers, p50 |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    base = rows[0]["after_leader_p99_ms"]
    for r in rows:
        tiers = ", ".join(f"{k} {v}" for k, v in sorted(r["tiers"].items()))
        print(
            f"| {r['replicas']} | {r['upstream_calls']} | {tiers} | ({r['waiting']}) "
            f"{r['after_leader_p50_ms']:.2f} / {r['after_leader_p99_ms']:.2f} ms "
            f"({r['after_leader_p99_ms'] / base:.2f}x N={rows[0]['replicas']}) | "
            f"{r['notify_ms'] or '-'} ms | {r['gap_p50_us']:.0f} µs |"
        )
    print("\none request per replica (no in-process fan-out):")
    for r in single:
        print(
            f"  N={r['replicas']}: upstream calls {r['upstream_calls']}, other replicas answered "
            f"{r['notify_ms']} ms after the leader's upstream call returned"
        )
    redis_p50, edge_p50 = pct(times["redis"], 50), pct(times["edge"], 50)
    print(f"\nexact hit, memory tier off, {len(times['redis'])} calls each (sync completion):")
    print(
        f"  Redis p50 {redis_p50 * 1e6:.0f} µs  p99 {pct(times['redis'], 99) * 1e6:.0f} µs | "
        f"edge store p50 {edge_p50 * 1e6:.0f} µs  p99 {pct(times['edge'], 99) * 1e6:.0f} µs | "
        f"Redis / edge p50 = {redis_p50 / edge_p50:.2f}x"
    )


if __name__ == "__main__":
    main()
