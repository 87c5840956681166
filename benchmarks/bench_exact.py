"""Exact tier, fingerprint and coalescer, measured against baselines in the same run.

    python benchmarks/bench_exact.py [--repeats 2000] [--concurrent 1000]

1. exact-hit latency: ``SemanticCache.completion`` vs LiteLLM's own in-memory cache hit
   (``litellm.cache = Cache()``), same request, same process, alternating blocks;
2. fingerprint of a ~4k-token conversation (p50, p99);
3. 1,000 concurrent identical ``acompletion`` calls: upstream calls made, and the follower
   overhead: for every follower, the time between the leader getting its answer and the
   follower getting its own copy, and its end-to-end latency.
Prints figures and ratios; asserts nothing (these machines are noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import numpy as np


def pct(values, q):
    return float(np.percentile(np.asarray(values), q))


def us(values):
    return f"p50 {pct(values, 50) * 1e6:8.1f} µs   p99 {pct(values, 99) * 1e6:8.1f} µs"


def bench_exact_hit(api_base: str, repeats: int) -> dict[str, float]:
    import litellm
    from litellm.caching.caching import Cache

    from semcache import CacheSettings, SemanticCache

    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    request = {
        "model": "openai/gpt-4o-mini",
        "api_base": api_base,
        "api_key": "sk-bench",
        "messages": messages,
    }
    cache = SemanticCache(CacheSettings(store={"backend": "none"}))
    cache.completion(**request)
    litellm.cache = Cache()  # LiteLLM's built-in in-memory cache
    litellm.completion(**request, caching=True)
    ours, theirs = [], []
    # Alternating blocks, so drift hits both equally; after each LiteLLM block, a pause lets
    # its background logging threads finish instead of holding the GIL during our block.
    block = 250
    for _ in range(max(1, repeats // block)):
        for _ in range(block):
            t = time.perf_counter()
            cache.completion(**request)
            ours.append(time.perf_counter() - t)
        for _ in range(block):
            t = time.perf_counter()
            r = litellm.completion(**request, caching=True)
            theirs.append(time.perf_counter() - t)
        time.sleep(0.2)
    assert r._hidden_params.get("cache_hit"), "LiteLLM baseline did not hit its cache"
    litellm.cache = None
    cache.close()
    print(f"exact hit, semcache       {us(ours)}")
    print(f"exact hit, litellm Cache  {us(theirs)}")
    ratio = pct(ours, 50) / pct(theirs, 50)
    print(f"  ratio semcache/litellm p50 = {ratio:.3f}   (target <= 0.10)")
    return {"ours_p50": pct(ours, 50), "litellm_p50": pct(theirs, 50), "ratio": ratio}


def bench_fingerprint(repeats: int) -> dict[str, float]:
    from litellm import token_counter

    from semcache.core.fingerprint import request_keys

    sentence = "The quarterly report shows revenue growth across all regions, led by APAC. "
    turns = []
    for i in range(40):
        turns.append({"role": "user" if i % 2 == 0 else "assistant", "content": sentence * 7})
    messages = [
        {"role": "system", "content": "You are a financial analyst."},
        *turns,
        {"role": "user", "content": "Summarise the trend in one sentence."},
    ]
    tokens = token_counter(model="gpt-4o-mini", messages=messages)
    request = {
        "model": "gpt-4o-mini",
        "messages": messages,
        "temperature": 0.2,
        "max_tokens": 200,
        "tools": [
            {
                "type": "function",
                "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}},
            }
        ],
    }
    request_keys(request, tenant="t", namespace="n")
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        request_keys(request, tenant="t", namespace="n")
        times.append(time.perf_counter() - t)
    print(
        f"fingerprint, {tokens} tokens, {len(messages)} messages  {us(times)}"
        "   (target p50 < 100 µs)"
    )
    return {"tokens": tokens, "p50": pct(times, 50), "p99": pct(times, 99)}


def bench_coalescing(server, n: int, delay_s: float) -> dict[str, float]:
    from semcache import CacheSettings, SemanticCache, cache_info

    server.reset()
    server.delay_s = delay_s
    cache = SemanticCache(CacheSettings(store={"backend": "none"}))
    request = {
        "model": "openai/gpt-4o-mini",
        "api_base": server.api_base,
        "api_key": "sk",
        "messages": [{"role": "user", "content": "hot question"}],
    }

    async def run():
        done: list[tuple[float, float, str]] = []

        async def one():
            start = time.perf_counter()
            response = await cache.acompletion(**request)
            done.append((start, time.perf_counter(), cache_info(response).tier))

        await asyncio.gather(*(one() for _ in range(n)))
        return done

    done = asyncio.run(run())
    cache.close()
    leader_end = next(end for _, end, tier in done if tier == "miss")
    followers = [(s, e) for s, e, tier in done if tier == "coalesced"]
    after_leader = [max(0.0, e - leader_end) for _, e in followers]
    latency = [e - s for s, e in followers]
    ends = sorted(e for _, e in followers)
    gaps = np.diff([leader_end, *ends])
    print(
        f"coalescing {n} concurrent identical requests: upstream calls = {server.chat_calls}"
        f" (target 1), followers = {len(followers)}"
    )
    print(
        f"  follower done after leader   p50 {pct(after_leader, 50) * 1e3:7.2f} ms"
        f"   p99 {pct(after_leader, 99) * 1e3:7.2f} ms   (all {len(followers)} served in"
        f" {max(after_leader) * 1e3:.1f} ms)"
    )
    print(
        f"  per-follower fan-out cost    p50 {pct(gaps, 50) * 1e6:7.1f} µs"
        f"   p99 {pct(gaps, 99) * 1e6:7.1f} µs   (target p99 < 2 ms)"
    )
    print(
        f"  follower end-to-end latency (upstream takes {delay_s * 1e3:.0f} ms): p50 "
        f"{pct(latency, 50) * 1e3:.1f} ms, p99 {pct(latency, 99) * 1e3:.1f} ms"
    )
    return {
        "upstream_calls": server.chat_calls,
        "gap_p50": pct(gaps, 50),
        "gap_p99": pct(gaps, 99),
        "after_leader_p99": pct(after_leader, 99),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--concurrent", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.2, help="upstream latency, s")
    args = parser.parse_args()
    from semcache.testing import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        import litellm

        litellm.completion(
            model="openai/gpt-4o-mini",
            api_base=server.api_base,
            api_key="sk",
            messages=[{"role": "user", "content": "warm up"}],
        )
        bench_exact_hit(server.api_base, args.repeats)
        bench_fingerprint(args.repeats)
        bench_coalescing(server, args.concurrent, args.delay)


if __name__ == "__main__":
    main()
