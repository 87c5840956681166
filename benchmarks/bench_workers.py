"""``semcache serve --workers 2`` vs 1 worker: exact-hit throughput, 50 clients, one machine.

    python benchmarks/bench_workers.py [--clients 50] [--seconds 10] [--workers 1 2] [--client wrk]

Starts a Redis 8 (``semcache.testing.RedisServer``) and a loopback fake upstream, then for
each worker count a ``semcache serve --workers N`` (store "none", semantic tier off, the
Redis exact tier shared), stores one answer, and runs ``--clients`` concurrent HTTP clients
(httpx, one asyncio loop, keep-alive connections) asking that question for ``--seconds``.
Every answer must be an exact hit. Prints requests/s per N, the ratio to N = 1 measured in
the same run, and the load average: the client shares the cores with the workers, and the
machine may be shared with other jobs, so the figure is noisy.

``--client httpx`` (the default) is a Python client: on a 2-core machine it takes most of a
core itself, so it caps what two workers can show. ``--client wrk`` drives the same requests
from ``wrk`` (a C load generator, e.g. Debian's ``wrk`` package; not a project dependency),
which leaves the cores to the workers; exact hits are then checked by the upstream's call
count (one call: the first miss) and wrk's count of non-2xx answers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import re
import shutil

import httpx
import redis as redis_client
from _procs import free_port

from semcache.testing import FakeOpenAIServer, RedisServer

QUESTION = {"role": "user", "content": "How many legs does a spider have?"}
CONFIG = """
[[model_list]]
model_name = "fast"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{api_base}"
litellm_params.api_key = "os.environ/UPSTREAM_KEY"
[[clients]]
key = "key-a"
tenant = "team-a"
[cache.store]
backend = "none"
[cache.semantic]
enabled = false
[cache.redis]
url = "{redis_url}"
"""


def start(config: Path, workers: int, port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "semcache", "serve", "--workers", str(workers)]
    command += ["--port", str(port), "--config", str(config)]
    env = {**os.environ, "UPSTREAM_KEY": "sk-bench"}
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    seen: set[str] = set()
    deadline = time.monotonic() + 300
    while len(seen) < workers:
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError(f"serve --workers {workers} did not become ready")
        try:
            r = httpx.get(f"http://127.0.0.1:{port}/readyz", headers={"connection": "close"})
            if r.status_code == 200:
                seen.add(r.headers["x-semcache-worker"])
        except httpx.TransportError:
            time.sleep(0.3)
    return process


async def load(port: int, clients: int, seconds: float) -> tuple[int, int]:
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    body = {"model": "fast", "messages": [QUESTION]}
    headers = {"authorization": "Bearer key-a"}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=30) as http:
        first = await http.post(url, json=body, headers=headers)  # the miss that stores it
        assert first.status_code == 200, first.text
        done = 0
        not_exact = 0
        stop = time.monotonic() + seconds

        async def client() -> None:
            nonlocal done, not_exact
            while time.monotonic() < stop:
                r = await http.post(url, json=body, headers=headers)
                done += 1
                not_exact += r.headers.get("x-semcache-tier") != "exact"

        await asyncio.gather(*(client() for _ in range(clients)))
    return done, not_exact


WRK_SCRIPT = """
wrk.method = "POST"
wrk.body = '{body}'
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer key-a"
"""


def load_wrk(port: int, clients: int, seconds: float, workdir: Path) -> tuple[int, int]:
    """wrk's request count and its non-2xx count, after one request that stores the answer."""
    import json

    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    body = {"model": "fast", "messages": [QUESTION]}
    first = httpx.post(url, json=body, headers={"authorization": "Bearer key-a"}, timeout=30)
    assert first.status_code == 200, first.text
    script = workdir / "post.lua"
    script.write_text(WRK_SCRIPT.format(body=json.dumps(body)))
    command = ["wrk", "-t2", f"-c{clients}", f"-d{seconds:.0f}s", "-s", str(script), url]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    done = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return done, int(bad.group(1)) if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--client", choices=["httpx", "wrk"], default="httpx")
    args = parser.parse_args()
    if args.client == "wrk" and shutil.which("wrk") is None:
        parser.error("--client wrk needs wrk on PATH (e.g. apt-get install wrk)")
    rates: dict[int, float] = {}
    with RedisServer() as redis, FakeOpenAIServer() as upstream, tempfile.TemporaryDirectory() as d:
        config = Path(d) / "proxy.toml"
        config.write_text(CONFIG.format(api_base=upstream.api_base, redis_url=redis.url))
        for workers in args.workers:
            flush = redis_client.Redis.from_url(redis.url)
            flush.flushall()  # each N stores its own first answer
            flush.close()
            port = free_port()
            process = start(config, workers, port)
            try:
                before = os.getloadavg()
                calls_before = sum(upstream.calls.values())
                if args.client == "wrk":
                    done, not_exact = load_wrk(port, args.clients, args.seconds, Path(d))
                    # every answer after the first was served without an upstream call
                    not_exact += sum(upstream.calls.values()) - calls_before - 1
                else:
                    done, not_exact = asyncio.run(load(port, args.clients, args.seconds))
            finally:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)
            rates[workers] = done / args.seconds
            print(
                f"workers={workers}: {rates[workers]:.0f} req/s ({done} in {args.seconds:.0f} s, "
                f"{not_exact} not exact hits), load average before "
                f"{before[0]:.2f} after {os.getloadavg()[0]:.2f}"
            )
    base = rates[args.workers[0]]
    for workers, rate in rates.items():
        print(f"ratio workers={workers} / workers={args.workers[0]}: {rate / base:.2f}x")
    print(f"client: {args.client}, {args.clients} connections")
    print(f"load average now (1, 5, 15 min): {os.getloadavg()}; {os.cpu_count()} cores, shared")


if __name__ == "__main__":
    main()
