"""MicroBatcher: concurrent single lookups share embedder calls, off the event loop."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from semcache.embedders import MicroBatcher
from semcache.errors import ConfigError, EmbedderError


async def test_64_concurrent_lookups_share_one_call(minilm, counting) -> None:
    embedder = counting(minilm)
    batcher = MicroBatcher(embedder, max_batch=64, max_wait_ms=5)
    texts = [f"How do I cook recipe number {i}?" for i in range(64)]
    try:
        rows = await asyncio.gather(*(batcher.embed_one(text) for text in texts))
    finally:
        batcher.close()
    assert len(embedder.batches) <= 2 and sum(embedder.batches) == 64
    np.testing.assert_allclose(np.stack(rows), minilm.embed(texts), atol=2e-3)
    assert all(row.shape == (minilm.dim,) and row.dtype == np.float32 for row in rows)


async def test_max_batch_is_respected(hash_embedder, counting) -> None:
    embedder = counting(hash_embedder)
    batcher = MicroBatcher(embedder, max_batch=8, max_wait_ms=50, max_load_batch=8)
    texts = [f"text {i}" for i in range(50)]
    rows = await asyncio.gather(*(batcher.embed_one(text) for text in texts))
    batcher.close()
    assert max(embedder.batches) <= 8
    assert sum(embedder.batches) == 50
    assert len(embedder.batches) == 7  # full batches go at once, without waiting
    np.testing.assert_allclose(np.stack(rows), hash_embedder.embed(texts))


async def test_batches_grow_under_load_and_lookups_go_before_writes(hash_embedder, counting):
    embedder = counting(hash_embedder)
    batcher = MicroBatcher(embedder, max_batch=8, max_wait_ms=50)  # load batches up to 32
    assert batcher.backlog() == (0, None)
    writes = [batcher.embed_one(f"write {i}", background=True) for i in range(20)]
    lookups = [batcher.embed_one(f"lookup {i}") for i in range(30)]
    tasks = [asyncio.ensure_future(c) for c in [*writes, *lookups]]
    await asyncio.sleep(0)
    assert batcher.backlog()[0] == 30  # foreground only: writes queue behind lookups
    rows = await asyncio.gather(*tasks)
    batcher.close()
    assert embedder.batches[0] == 30 + 2  # the lookups' backlog went in one batch, first
    assert sum(embedder.batches) == 50 and max(embedder.batches) <= 32
    queued, cost = batcher.backlog()
    assert queued == 0 and cost is not None and cost > 0
    texts = [*(f"write {i}" for i in range(20)), *(f"lookup {i}" for i in range(30))]
    np.testing.assert_allclose(np.stack(rows), hash_embedder.embed(texts))


async def test_embedder_runs_off_the_event_loop(hash_embedder, counting) -> None:
    embedder = counting(hash_embedder)
    batcher = MicroBatcher(embedder)
    await batcher.embed_one("hello")
    batcher.close()
    assert threading.get_ident() not in embedder.threads


async def test_a_lone_lookup_waits_at_most_max_wait(hash_embedder, counting) -> None:
    embedder = counting(hash_embedder)
    batcher = MicroBatcher(embedder, max_batch=64, max_wait_ms=30)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await batcher.embed_one("alone")
    elapsed = loop.time() - started
    batcher.close()
    assert embedder.batches == [1]
    assert 0.025 <= elapsed < 2.0  # generous: the machine running tests may be busy


async def test_lookups_within_the_wait_join_one_batch(hash_embedder, counting) -> None:
    embedder = counting(hash_embedder)
    batcher = MicroBatcher(embedder, max_batch=64, max_wait_ms=500)
    first = asyncio.ensure_future(batcher.embed_one("first"))
    await asyncio.sleep(0.01)
    second = asyncio.ensure_future(batcher.embed_one("second"))
    await asyncio.gather(first, second)
    batcher.close()
    assert embedder.batches == [2]


async def test_an_error_reaches_every_caller_of_the_batch(hash_embedder, counting) -> None:
    boom = EmbedderError("model exploded")
    embedder = counting(hash_embedder, fail_with=boom)
    batcher = MicroBatcher(embedder, max_batch=16, max_wait_ms=20)
    outcomes = await asyncio.gather(
        *(batcher.embed_one(f"t{i}") for i in range(16)), return_exceptions=True
    )
    assert all(outcome is boom for outcome in outcomes)
    assert embedder.batches == [16]

    embedder.fail_with = None  # the batcher keeps working after a failed batch
    row = await batcher.embed_one("after")
    np.testing.assert_allclose(row, hash_embedder.embed(["after"])[0])
    with pytest.raises(EmbedderError, match="exploded"):
        embedder.fail_with = boom
        await batcher.embed_many(["a", "b"])
    batcher.close()


async def test_a_wrong_shaped_answer_is_an_embedder_error(hash_embedder) -> None:
    class Short:
        name, dim = "short", 32

        def embed(self, texts):
            return hash_embedder.embed(texts[:-1])

    batcher = MicroBatcher(Short(), max_wait_ms=0)
    with pytest.raises(EmbedderError, match="for 2 texts"):
        await batcher.embed_many(["a", "b"])
    batcher.close()


async def test_embed_many_matches_direct_embed(hash_embedder) -> None:
    batcher = MicroBatcher(hash_embedder, max_batch=3, max_wait_ms=0)
    texts = [f"sentence {i}" for i in range(10)]
    np.testing.assert_allclose(await batcher.embed_many(texts), hash_embedder.embed(texts))
    empty = await batcher.embed_many([])
    assert empty.shape == (0, hash_embedder.dim)
    batcher.close()


async def test_a_cancelled_caller_drops_its_text(hash_embedder, counting) -> None:
    embedder = counting(hash_embedder)
    batcher = MicroBatcher(embedder, max_batch=64, max_wait_ms=50)
    doomed = asyncio.ensure_future(batcher.embed_one("doomed"))
    kept = asyncio.ensure_future(batcher.embed_one("kept"))
    await asyncio.sleep(0)
    doomed.cancel()
    await kept
    batcher.close()
    assert doomed.cancelled()
    assert embedder.batches == [1]


async def test_close_fails_queued_and_refuses_new(hash_embedder) -> None:
    batcher = MicroBatcher(hash_embedder, max_wait_ms=10_000)
    queued = asyncio.ensure_future(batcher.embed_one("queued"))
    await asyncio.sleep(0)
    batcher.close()
    batcher.close()  # idempotent
    with pytest.raises(EmbedderError, match="closed"):
        await queued
    with pytest.raises(EmbedderError, match="closed"):
        await batcher.embed_one("late")
    with pytest.raises(EmbedderError, match="closed"):
        await batcher.embed_many([])
    assert batcher.closed


def test_works_on_any_event_loop(hash_embedder, counting) -> None:
    embedder = counting(hash_embedder)
    batcher = MicroBatcher(embedder, max_wait_ms=1)

    async def lookups() -> np.ndarray:
        return np.stack(await asyncio.gather(*(batcher.embed_one(f"q{i}") for i in range(4))))

    first = asyncio.run(lookups())
    results: list[np.ndarray] = []
    thread = threading.Thread(target=lambda: results.append(asyncio.run(lookups())))
    thread.start()
    thread.join()
    batcher.close()
    np.testing.assert_allclose(first, results[0])
    assert embedder.batches == [4, 4]


def test_a_callers_executor_is_used_and_left_running(hash_embedder, counting) -> None:
    from concurrent.futures import ThreadPoolExecutor

    embedder = counting(hash_embedder)
    with ThreadPoolExecutor(1, thread_name_prefix="caller-pool") as pool:
        worker = pool.submit(threading.get_ident).result()
        batcher = MicroBatcher(embedder, executor=pool)
        asyncio.run(batcher.embed_one("hello"))
        batcher.close()
        assert pool.submit(lambda: 42).result() == 42
    assert embedder.threads == {worker}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_batch": 0}, "max_batch"),
        ({"max_wait_ms": -1}, "max_wait_ms"),
        ({"max_wait_ms": float("nan")}, "max_wait_ms"),
    ],
)
def test_bad_arguments(hash_embedder, kwargs, match) -> None:
    with pytest.raises(ConfigError, match=match):
        MicroBatcher(hash_embedder, **kwargs)
