"""A purge always wins: 1,000+ races between a purge and the answer it must withdraw.

Each race has its own tenant and question. The request's upstream call announces itself
and waits; the purge then runs either while the call is still waiting, or after it was
released, with a random delay of 0-3 ms, so it lands while the answer is being returned,
put in memory, embedded or written behind. Once the purge returned and the write-behind
flushed, the same question must be a miss: an answer from a request that began before the
purge is never served after it. Eight threads race at once (seeded).
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.stats import Tier
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

SEED = 1201
THREADS = 8
RACES_PER_THREAD = 130


class GatedUpstream(FakeUpstream):
    """``complete`` sets ``started[question]`` and waits for ``go[question]``."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self.started: dict[str, threading.Event] = {}
        self.go: dict[str, threading.Event] = {}

    def gates(self, question: str) -> tuple[threading.Event, threading.Event]:
        with self._lock:
            started = self.started.setdefault(question, threading.Event())
            go = self.go.setdefault(question, threading.Event())
            return started, go

    async def complete(self, params: Mapping[str, Any]) -> Any:
        started, go = self.gates(params["messages"][-1]["content"])
        started.set()
        await asyncio.to_thread(go.wait, 10)
        return await super().complete(params)


class SlowishEmbedder(FakeEmbedder):
    def embed(self, texts):  # a wider window between the answer and its store write
        time.sleep(0.001)
        return super().embed(texts)


def test_no_answer_is_served_after_the_purge_that_withdrew_it() -> None:
    upstream = GatedUpstream()
    settings = CacheSettings(
        semantic={"threshold": 0.9, "verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "none"},
        admission={"wait_ms": 1000},
    )
    cache = SemanticCache(
        settings, embedder=SlowishEmbedder(), store=InMemoryStore(), upstream=upstream
    )
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()

    def races(worker: int) -> None:
        rng = random.Random(SEED + worker)
        for n in range(RACES_PER_THREAD):
            tenant, question = f"race-{worker}-{n}", f"question number {worker} {n} please"
            request = {
                "model": "gpt-4o-mini",
                "messages": [{"role": "user", "content": question}],
                "tenant": tenant,
            }
            started, go = upstream.gates(question)
            first = threading.Thread(target=lambda r=request: cache.completion(**r))
            first.start()
            assert started.wait(10)
            if rng.random() < 0.3:
                order = "purge during the upstream call"
                cache.purge(tenant=tenant)
                go.set()
            else:
                order = "purge after the answer"
                go.set()
                time.sleep(rng.uniform(0, 0.003))
                cache.purge(tenant=tenant)
            first.join()
            cache.flush()
            tier = cache_info(cache.completion(**request)).tier
            with lock:
                outcomes["races"] += 1
                outcomes[order] += 1
                if tier is not Tier.MISS:
                    outcomes["served after purge"] += 1

    threads = [threading.Thread(target=races, args=(w,)) for w in range(THREADS)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        stats = cache.stats()
    finally:
        cache.close()
    print(f"\npurge races: {dict(outcomes)}; fenced writes {stats.counts.get('fenced_writes', 0)}")
    assert outcomes["races"] >= 1000
    assert outcomes["served after purge"] == 0
    assert stats.stored > 0  # answers did reach the store: the purge had something to win over
