"""Does the Redis store give the answer guard other candidates than the edge store?

    python benchmarks/store_candidates.py

The round-robin stream of ``bench_round_robin.py`` (every first question, then every second
question of the English label-1 pairs), asked in order in ONE process (``SemanticCache``,
the default embedder, threshold 0.9), once with ``store.backend = "edge"`` and once with
``store.backend = "redis"`` on the same Redis 8. Prints the tiers and miss reasons of the
second questions per store, and every question where the two differ (tier, miss reason or
the served similarity beyond 1e-5). No difference means the store's candidates (count,
order, similarity) are not what separates 4 processes on one Redis store from one process
(that was the guard judging the nearest candidate only: ``bench_guard_candidates.py``).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import redis as redis_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_round_robin import stream

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.testing import FakeUpstream, RedisServer

Row = tuple[str, str, float | None]


def ask(cache: SemanticCache, question: str) -> Row:
    messages = [{"role": "user", "content": question}]
    info = cache_info(cache.completion(model="openai/gpt-4o-mini", messages=messages))
    return str(info.tier), str(info.miss_reason), info.similarity


def main() -> None:
    firsts, seconds = stream()
    rows: dict[str, list[Row]] = {}
    with RedisServer() as server, tempfile.TemporaryDirectory() as d:
        for backend in ("edge", "redis"):
            store = {"backend": "edge", "path": f"{d}/edge"} if backend == "edge" else {}
            settings = CacheSettings(
                store={"backend": backend, **store},
                redis={"url": server.url},
                semantic={"threshold": 0.9},
            )
            cache = SemanticCache(settings, upstream=FakeUpstream())
            for question in firsts:
                ask(cache, question)
            cache.flush()
            time.sleep(1.0)
            rows[backend] = [ask(cache, question) for question in seconds]
            cache.close()
            flush = redis_client.Redis.from_url(server.url)
            flush.flushall()
            flush.close()
    for backend, found in rows.items():
        tiers = Counter(tier for tier, _, _ in found)
        reasons = Counter(reason for _, reason, _ in found if reason != "None")
        print(f"{backend}: tiers {dict(tiers)}; miss reasons {dict(reasons)}")
    differ = [
        (i, seconds[i], e, r)
        for i, (e, r) in enumerate(zip(rows["edge"], rows["redis"], strict=True))
        if e[:2] != r[:2] or abs((e[2] or 0.0) - (r[2] or 0.0)) > 1e-5
    ]
    print(f"questions where the stores differ: {len(differ)} of {len(seconds)}")
    for row in differ:
        print(f"  {row}")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
