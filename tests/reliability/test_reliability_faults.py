"""Upstream fault matrix: every fault reaches every waiter, and nothing is stored.

Faults (an HTTP 500, a 429, a timeout, a connection error, a stream cut off mid-answer) x
call styles (sync, async, sync stream, async stream), each with three concurrent identical
callers sharing one flight. After each cell: no entry in memory or the store, and the next
identical request goes upstream again.
"""

from __future__ import annotations

import asyncio
from typing import Any

import litellm
import pytest

from semcache import CacheSettings, SemanticCache
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

FAULTS = {
    "http_500": lambda: litellm.InternalServerError("boom", "openai", "gpt-4o-mini"),
    "http_429": lambda: litellm.RateLimitError("slow down", "openai", "gpt-4o-mini"),
    "timeout": lambda: litellm.Timeout("took too long", "gpt-4o-mini", "openai"),
    "connection": lambda: litellm.APIConnectionError("reset", "openai", "gpt-4o-mini"),
}
STYLES = ("sync", "async", "sync_stream", "async_stream")
FOLLOWERS = 3


async def _call(cache: SemanticCache, style: str, kwargs: dict[str, Any]) -> str:
    if style == "sync":
        response = await asyncio.to_thread(lambda: cache.completion(**kwargs))
        return response.choices[0].message.content
    if style == "async":
        return (await cache.acompletion(**kwargs)).choices[0].message.content
    if style == "sync_stream":

        def read() -> str:
            stream = cache.completion(**kwargs, stream=True)
            return "".join(c.choices[0].delta.content or "" for c in stream)

        return await asyncio.to_thread(read)
    stream = await cache.acompletion(**kwargs, stream=True)
    return "".join([c.choices[0].delta.content or "" async for c in stream])


@pytest.fixture
def rig():
    upstream = FakeUpstream(delay_s=0.05, chunks=4)
    store = InMemoryStore()
    settings = CacheSettings(
        semantic={"verifier": "none", "max_batch_wait_ms": 0}, store={"backend": "none"}
    )
    cache = SemanticCache(settings, embedder=FakeEmbedder(), store=store, upstream=upstream)
    assert cache.ready()
    yield cache, upstream, store
    cache.close()


def _kwargs(fault: str, style: str) -> dict[str, Any]:
    question = f"fault matrix {fault} {style}"
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]}


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_fault_reaches_every_waiter_and_nothing_is_stored(rig, fault: str, style: str):
    cache, upstream, store = rig
    upstream.fail_next.append(FAULTS[fault]())
    kwargs = _kwargs(fault, style)
    results = await asyncio.gather(
        *(_call(cache, style, kwargs) for _ in range(FOLLOWERS)), return_exceptions=True
    )
    assert upstream.call_count == 1  # one flight
    assert all(isinstance(r, type(FAULTS[fault]())) for r in results), results
    await cache.aflush()
    assert cache.stats().memory_entries == 0 and store.count() == 0
    await _call(cache, style, kwargs)
    assert upstream.call_count == 2


@pytest.mark.parametrize("style", ["sync_stream", "async_stream"])
async def test_a_stream_cut_off_mid_answer_is_not_stored(rig, style: str) -> None:
    cache, upstream, store = rig
    upstream.abort_after = 2
    kwargs = _kwargs("abort", style)
    texts = await asyncio.gather(
        *(_call(cache, style, kwargs) for _ in range(FOLLOWERS)), return_exceptions=True
    )
    assert upstream.call_count == 1
    assert len({str(t) for t in texts}) == 1  # every waiter saw the same cut-off answer
    await cache.aflush()
    assert cache.stats().memory_entries == 0 and store.count() == 0
    upstream.abort_after = None
    await _call(cache, style, kwargs)
    assert upstream.call_count == 2
