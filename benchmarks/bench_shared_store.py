"""Withdrawn answers across replicas that keep their own embedded stores, on one Redis.

    python benchmarks/bench_shared_store.py [--asks 200]

Three replicas (``SemanticCache`` objects in this process, each with its own edge store
directory, a bag-of-words ``FakeEmbedder`` and the same Redis 8 from
``semcache.testing.RedisServer``) all learn one answer into their own stores. Then:

1. a "wrong" verdict on replica A; ``--asks`` asks (exact and paraphrase) spread over B and C;
2. a purge of the tenant on A while C is closed (down), C reopened on its store directory;
   ``--asks`` asks over B and C.

Prints how many later asks were served the withdrawn answer (target 0). Item 2 is the case
docs/deployment.md says needs the shared store; its figure shows why.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from semcache import CacheSettings, SemanticCache
from semcache.testing import FakeEmbedder, FakeUpstream, RedisServer

QUESTIONS = ["What is the capital city of France?", "what is the capital city of France"]


def req(content: str) -> dict:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]}


def replica(path: Path, redis_url: str, upstream: FakeUpstream) -> SemanticCache:
    settings = CacheSettings(
        semantic={"threshold": 0.8, "verifier": "none"},
        store={"backend": "edge", "path": str(path)},
        redis={"url": redis_url},
        admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
    )
    return SemanticCache(settings, embedder=FakeEmbedder(), upstream=upstream)


def served(caches: list[SemanticCache], withdrawn: set[str], asks: int, seen: set[str]) -> int:
    """Ask ``asks`` times round-robin; how many answers were in ``withdrawn`` (every answer's
    id is added to ``seen``)."""
    bad = 0
    for i in range(asks):
        cache = caches[i % len(caches)]
        response = cache.completion(**req(QUESTIONS[i % 2]))
        bad += response.id in withdrawn
        seen.add(response.id)
        cache.flush()
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=200)
    args = parser.parse_args()
    with RedisServer() as redis, tempfile.TemporaryDirectory() as d:
        upstream = FakeUpstream()
        a, b, c = (replica(Path(d) / name, redis.url, upstream) for name in "abc")
        first = a.completion(**req(QUESTIONS[0]))
        a.flush()
        for cache in (b, c):  # a paraphrase the store answers, then the exact key from Redis
            cache.completion(**req(QUESTIONS[0]))
        assert a.feedback(a.completion(**req(QUESTIONS[0])), correct=False).withdrawn
        seen = {first.id}
        bad = served([b, c], {first.id}, args.asks, seen)
        print(f"1. wrong verdict on A: {bad} of {args.asks} later asks on B, C served it")

        c.close()  # every answer seen so far is purged while C is down
        a.purge()
        c = replica(Path(d) / "c", redis.url, upstream)
        bad = served([b, c], set(seen), args.asks, seen)
        print(
            f"2. purge on A while C was down: {bad} of {args.asks} later asks on B, C served a "
            "purged answer (embedded stores per replica; see docs/deployment.md)"
        )
        for cache in (a, b, c):
            cache.close()
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
