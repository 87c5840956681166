"""Private data never reaches Redis: a flagged question runs alone, not in a shared flight.

Two replicas (two caches on one real redis-server) answer private-data corpus prompts at the
same time, streamed and not; then every key and value in Redis is read back (``SCAN`` +
``TYPE`` + every value and stream entry) and searched for each private span. The full corpus
runs in ``benchmarks/bench_privacy_redis.py``.
"""

from __future__ import annotations

import asyncio

from semcache import CacheSettings, SemanticCache
from semcache.config.settings import StoreSettings
from semcache.privacy.corpus import load_privacy_corpus
from semcache.replicas.settings import RedisSettings
from semcache.testing import FakeUpstream


def spans_found(blobs: list[bytes], texts: list[str]) -> list[str]:
    joined = b"\x00".join(blobs)
    return [text for text in texts if text.encode("utf-8") in joined]


async def ask_both(caches: list[SemanticCache], text: str, stream: bool) -> None:
    request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}

    async def one(cache: SemanticCache) -> None:
        if stream:
            async for _ in await cache.acompletion(**request, stream=True):
                pass
        else:
            await cache.acompletion(**request)

    await asyncio.gather(*(one(cache) for cache in caches))


async def test_no_private_span_of_the_corpus_reaches_redis(redis_url, redis_server):
    rows = [row for row in load_privacy_corpus("dev") if row["kinds"]][:12]
    settings = CacheSettings(
        store=StoreSettings(backend="none"), redis=RedisSettings(url=redis_url)
    )
    upstream = FakeUpstream(delay_s=0.05)  # long enough for the second replica to follow
    caches = [SemanticCache(settings, upstream=upstream) for _ in range(2)]
    try:
        benign = "Which planets have rings besides Saturn?"
        await ask_both(caches, benign, stream=True)
        for i, row in enumerate(rows):
            await ask_both(caches, row["text"], stream=i % 2 == 0)
        counts = caches[0].stats().counts
    finally:
        for cache in caches:
            cache.close()
    blobs = redis_server.contents()
    assert spans_found(blobs, [benign]) == [benign]  # the scan sees a shared flight's text
    private = [row["text"][start:end] for row in rows for start, end, _ in row["spans"]]
    assert len(private) >= 12
    assert spans_found(blobs, private) == []
    assert counts.get("shared_flight_private", 0) >= len(rows)


async def test_a_private_answer_to_a_clean_question_leaves_no_stream_behind(
    redis_url, redis_server
):
    secret = "jane.doe.4471@corp-mail.io"
    settings = CacheSettings(
        store=StoreSettings(backend="none"), redis=RedisSettings(url=redis_url)
    )
    upstream = FakeUpstream(lambda params: f"Write to {secret} for access.", delay_s=0.1)
    caches = [SemanticCache(settings, upstream=upstream) for _ in range(2)]
    try:
        for stream in (True, False):
            question = f"Who handles access requests (streamed: {stream})?"
            await ask_both(caches, question, stream=stream)
        counts = [cache.stats().counts for cache in caches]
    finally:
        for cache in caches:
            cache.close()
    # the flights ran shared (a follower got the leader's answer), and nothing of it stayed
    assert sum(c.get("shared_flight_private", 0) for c in counts) == 0
    assert len(upstream.calls) <= 4
    assert spans_found(redis_server.contents(), [secret]) == []
