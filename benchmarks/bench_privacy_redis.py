"""Private data in Redis: the whole private-data corpus through 2 replicas, then a full scan.

Two caches on one real redis-server (``semcache.testing.RedisServer``) answer every corpus
prompt at the same time (alternately streamed), so flights are shared where allowed; then
every Redis key and value (``SCAN`` + ``TYPE`` + every value and stream entry) is searched for
each private span. Baseline in the same run: the benign corpus prompts, whose text must be
found (the scan sees what flights share).

    .venv/bin/python benchmarks/bench_privacy_redis.py
"""

from __future__ import annotations

import asyncio
import os
import time

from semcache import CacheSettings, SemanticCache
from semcache.config.settings import StoreSettings
from semcache.privacy.corpus import load_privacy_corpus
from semcache.replicas.settings import RedisSettings
from semcache.testing import FakeUpstream, RedisServer


async def run(url: str, texts: list[str]) -> dict[str, int]:
    settings = CacheSettings(store=StoreSettings(backend="none"), redis=RedisSettings(url=url))
    upstream = FakeUpstream(delay_s=0.02)
    caches = [SemanticCache(settings, upstream=upstream) for _ in range(2)]

    async def one(cache: SemanticCache, text: str, stream: bool) -> None:
        request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}
        if stream:
            async for _ in await cache.acompletion(**request, stream=True):
                pass
        else:
            await cache.acompletion(**request)

    try:
        for i, text in enumerate(texts):
            await asyncio.gather(*(one(c, text, i % 2 == 0) for c in caches))
        return dict(caches[0].stats().counts)
    finally:
        for cache in caches:
            cache.close()


def main() -> None:
    rows = load_privacy_corpus()
    private = [row for row in rows if row["kinds"]]
    benign = [row["text"] for row in rows if not row["kinds"]]
    spans = [row["text"][s:e] for row in private for s, e, _ in row["spans"]]
    started = time.perf_counter()
    with RedisServer() as server:
        counts = asyncio.run(run(server.url, [row["text"] for row in private] + benign))
        blob = b"\x00".join(server.contents())
    found = [span for span in spans if span.encode() in blob]
    seen = sum(text.encode() in blob for text in benign)
    print(f"private prompts: {len(private)}, private spans: {len(spans)}, benign: {len(benign)}")
    print(f"private spans found in Redis: {len(found)}")
    for span in found[:10]:
        print(f"  found: {span!r}")
    print(f"baseline: benign prompts found in Redis: {seen} of {len(benign)}")
    print(f"flights skipped as private: {counts.get('shared_flight_private', 0)}")
    print(
        f"{time.perf_counter() - started:.1f} s; load average {os.getloadavg()[0]:.2f} "
        "(shared, noisy machine)"
    )


if __name__ == "__main__":
    main()
