"""One paraphrase stream spread round-robin over N ``semcache serve`` processes: hit rate.

    python benchmarks/bench_round_robin.py [--replicas 4] [--threshold 0.9] [--upstream-s 0.5]

The stream is the English pairs of ``semcache/data/pairs.jsonl`` that one answer serves
(paraphrases and light rewrites, 192 pairs): every first question is asked once, then every
second question. Request i goes to process i mod N. Three deployments, one run, the same
stream, the same default embedder (all-MiniLM-L6-v2) and threshold:

- **one process**, embedded store (the baseline);
- **N processes, one Redis 8 store** (``store.backend = "redis"`` + ``redis.url``);
- **N processes, each its own embedded store**, sharing only the Redis exact tier.

The fake upstream answers after ``--upstream-s`` (an LLM call takes about that long): the
shed budget is a fraction of the upstream latency it saves (docs/overload.md), so an instant
upstream would make every slow embedding a shed lookup. Prints, per deployment, the share
of second questions answered from the cache (semantic and exact tier separately), the
difference to one process in points, the misses by reason and the load average. With each
process keeping its own store, a paraphrase hits only when its first question went to the
same process (about 1 in N), which is what the shared store removes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import httpx
import redis as redis_client
from _procs import free_port, wait_ready

from semcache.testing import FakeOpenAIServer, RedisServer

PAIRS = Path(__file__).resolve().parents[1] / "semcache" / "data" / "pairs.jsonl"
CONFIG = """
[[model_list]]
model_name = "fast"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{api_base}"
litellm_params.api_key = "os.environ/UPSTREAM_KEY"
[[clients]]
key = "key-a"
tenant = "team-a"
[cache.semantic]
threshold = {threshold}
[cache.store]
{store}
"""


def stream() -> tuple[list[str], list[str]]:
    """First questions (deduplicated, in file order) and the second question of each pair."""
    firsts: list[str] = []
    seconds: list[str] = []
    for line in PAIRS.read_text().splitlines():
        row = json.loads(line)
        if row["lang"] == "en" and row["label"] == 1 and row["text_a"] != row["text_b"]:
            if row["text_a"] not in firsts:
                firsts.append(row["text_a"])
            seconds.append(row["text_b"])
    return firsts, seconds


def start(config: Path, port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "semcache", "serve", "--port", str(port)]
    command += ["--config", str(config)]
    env = {**os.environ, "UPSTREAM_KEY": "sk-bench"}
    return subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)


async def ask_all(ports: list[int], questions: list[str], offset: int) -> Counter[str]:
    """Ask each question on port (offset + i) mod N, 8 at a time; count the tiers."""
    tiers: Counter[str] = Counter()
    gate = asyncio.Semaphore(8)
    async with httpx.AsyncClient(timeout=60) as http:

        async def ask(i: int, question: str) -> None:
            port = ports[(offset + i) % len(ports)]
            body = {"model": "fast", "messages": [{"role": "user", "content": question}]}
            async with gate:
                r = await http.post(
                    f"http://127.0.0.1:{port}/v1/chat/completions",
                    json=body,
                    headers={"authorization": "Bearer key-a"},
                )
            r.raise_for_status()
            tier = r.headers.get("x-semcache-tier", "miss")
            tiers[tier] += 1
            if tier == "miss":
                tiers["reason:" + r.headers.get("x-semcache-miss-reason", "?")] += 1

        await asyncio.gather(*(ask(i, q) for i, q in enumerate(questions)))
    return tiers


def run(
    name: str,
    configs: list[Path],
    firsts: list[str],
    seconds: list[str],
    upstream: FakeOpenAIServer,
) -> Counter[str]:
    ports = [free_port() for _ in configs]
    processes = [start(config, port) for config, port in zip(configs, ports, strict=True)]
    try:
        wait_ready(ports, processes)
        before = upstream.chat_calls
        first_tiers = asyncio.run(ask_all(ports, firsts, 0))
        first_calls = upstream.chat_calls - before
        time.sleep(3.0)  # write-behind: let every store write land before the second questions
        # offset 1: the second question of the i-th pair goes to the next process over
        tiers = asyncio.run(ask_all(ports, seconds, 1))
        tiers.update({"first:" + k: v for k, v in first_tiers.items()})
        tiers["upstream:first"] = first_calls
        tiers["upstream:second"] = upstream.chat_calls - before - first_calls
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(timeout=60)
    return tiers


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replicas", type=int, default=4)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--upstream-s", type=float, default=0.5)
    args = parser.parse_args()
    firsts, seconds = stream()
    results: dict[str, Counter[str]] = {}
    upstream_server = FakeOpenAIServer(delay_s=args.upstream_s)
    with RedisServer() as redis, upstream_server as upstream, tempfile.TemporaryDirectory() as d:
        root = Path(d)

        def config(name: str, store: str, shared: bool) -> Path:
            path = root / f"{name}.toml"
            text = CONFIG.format(api_base=upstream.api_base, threshold=args.threshold, store=store)
            if shared:
                text += f'[cache.redis]\nurl = "{redis.url}"\n'
            path.write_text(text)
            return path

        n = args.replicas
        edge = 'backend = "edge"\npath = "{}"'
        deployments = {
            "one process, embedded store": [config("one", edge.format(root / "one"), False)],
            f"{n} processes, one Redis 8 store": [
                config(f"redis{i}", 'backend = "redis"', True) for i in range(n)
            ],
            f"{n} processes, each its own embedded store": [
                config(f"own{i}", edge.format(root / f"own{i}"), True) for i in range(n)
            ],
        }
        for name, configs in deployments.items():
            flush = redis_client.Redis.from_url(redis.url)
            flush.flushall()  # each deployment starts empty
            flush.close()
            results[name] = run(name, configs, firsts, seconds, upstream)
    total = len(seconds)
    base = None
    print(
        f"stream: {len(firsts)} first questions, then {total} second questions, round-robin; "
        f"upstream {args.upstream_s} s, threshold {args.threshold}"
    )
    for name, tiers in results.items():
        semantic = tiers["semantic"] / total
        cached = (tiers["semantic"] + tiers["exact"]) / total
        base = semantic if base is None else base
        print(
            f"{name}: semantic hits {semantic:.1%}, exact {tiers['exact'] / total:.1%}, "
            f"from the cache {cached:.1%} ({semantic - base:+.1%} semantic vs one process)"
        )
        reasons = {k[7:]: v for k, v in tiers.items() if k.startswith("reason:")}
        print(
            f"  misses by reason: {reasons}; merged with a paraphrase in flight "
            f"{tiers['merged']}, coalesced {tiers['coalesced']}"
        )
        firsts_by_tier = {k[6:]: v for k, v in tiers.items() if k.startswith("first:")}
        print(
            f"  upstream calls: {tiers['upstream:first']} for the {len(firsts)} first questions, "
            f"{tiers['upstream:second']} for the second; first questions by tier: {firsts_by_tier}"
        )
    print(f"load average (1, 5, 15 min): {os.getloadavg()}; {os.cpu_count()} cores, shared")


if __name__ == "__main__":
    main()
