"""Seeded randomized isolation: no answer ever crosses a partition.

Requests are drawn over tenants x namespaces x models x conversation histories x
paraphrases x call styles (sync, async, sync stream, async stream), many concurrent, with
write-behind flushed now and then so exact, semantic and coalesced answers all occur. The
upstream signs every answer with the partition of the request that caused it (passed in
``metadata``, which is not part of the cache key), so a served answer from another tenant,
namespace, model or history is caught whatever tier served it.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.stats import Tier
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

SEED = 20261201
REQUESTS = 2400
TENANTS = ("acme", "globex", "initech")
NAMESPACES = ("default", "support")
MODELS = ("gpt-4o-mini", "gpt-4o")
HISTORIES = (
    (),
    ({"role": "system", "content": "You answer in French."},),
    (
        {"role": "user", "content": "I use the mobile app."},
        {"role": "assistant", "content": "Noted, the mobile app."},
    ),
)
TOPICS = (
    ("how do I reset my account password", "how can I reset my account password please"),
    ("what is the refund policy for annual plans", "what is the refund policy on annual plans"),
    ("where can I download my monthly invoice", "where do I download my monthly invoice"),
    ("how do I enable two factor login", "how to enable two factor login"),
)
STYLES = ("sync", "async", "sync_stream", "async_stream")


def signed(params: Any) -> str:
    """The upstream's answer: the caller's partition and question, unforgeable by the cache."""
    question = params["messages"][-1]["content"]
    return f"{params['metadata']['partition']}::{question}"


def _partition(tenant: str, namespace: str, model: str, history: int) -> str:
    return f"{tenant}/{namespace}/{model}/h{history}"


async def _ask(cache: SemanticCache, style: str, kwargs: dict[str, Any]) -> tuple[str, Tier]:
    if style == "sync":
        response = await asyncio.to_thread(lambda: cache.completion(**kwargs))
        return response.choices[0].message.content, cache_info(response).tier
    if style == "async":
        response = await cache.acompletion(**kwargs)
        return response.choices[0].message.content, cache_info(response).tier
    if style == "sync_stream":

        def read() -> tuple[str, Tier]:
            stream = cache.completion(**kwargs, stream=True)
            text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
            return text, cache_info(stream).tier

        return await asyncio.to_thread(read)
    stream = await cache.acompletion(**kwargs, stream=True)
    parts = [chunk.choices[0].delta.content or "" async for chunk in stream]
    return "".join(parts), cache_info(stream).tier


async def test_no_answer_crosses_a_partition() -> None:
    rng = random.Random(SEED)
    upstream = FakeUpstream(signed, chunks=3, delay_s=0.01)
    settings = CacheSettings(
        semantic={"threshold": 0.8, "verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "none"},
        admission={"wait_ms": 50},
    )
    cache = SemanticCache(
        settings, embedder=FakeEmbedder(), store=InMemoryStore(), upstream=upstream
    )
    tiers: Counter[Tier] = Counter()
    checked = wrong = 0
    try:
        assert await cache.aready()
        for _batch in range(REQUESTS // 24):
            calls = []
            for _ in range(24):
                tenant, namespace = rng.choice(TENANTS), rng.choice(NAMESPACES)
                model, history = rng.choice(MODELS), rng.randrange(len(HISTORIES))
                question = rng.choice(rng.choice(TOPICS))
                partition = _partition(tenant, namespace, model, history)
                kwargs = {
                    "model": model,
                    "messages": [*HISTORIES[history], {"role": "user", "content": question}],
                    "tenant": tenant,
                    "cache": {"namespace": namespace},
                    "metadata": {"partition": partition},
                }
                calls.append((partition, _ask(cache, rng.choice(STYLES), kwargs)))
            results = await asyncio.gather(*(call for _, call in calls))
            for (partition, _), (text, tier) in zip(calls, results, strict=True):
                checked += 1
                tiers[tier] += 1
                if text.split("::")[0] != partition:
                    wrong += 1
            if rng.random() < 0.5:
                await cache.aflush()
    finally:
        await cache.aclose()
    print(f"\nisolation: {checked} answers checked, {wrong} across partitions, tiers {dict(tiers)}")
    assert checked >= 2000
    assert wrong == 0
    # every tier took part, so the check covered each path an answer can take
    for tier in (Tier.MISS, Tier.EXACT, Tier.SEMANTIC, Tier.COALESCED):
        assert tiers[tier] > 0, tiers
