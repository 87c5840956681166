"""How long eight concurrent 1 MB bodies delay a small question on ``semcache serve``.

One ``semcache serve`` (no store, semantic tier off, default privacy settings) in front of
``FakeOpenAIServer``. Measured in the same run: the small question's latency alone (the
baseline), then with eight 1 MB bodies in flight, for each body shape (digit groups, the input
that cost the unbounded phone detector ~500 CPU-s per MB; and 200 KB of digit groups, under
the default 256 KB scan cap, so each is actually scanned). Prints the medians and the delay.

Run: ``python benchmarks/bench_big_bodies.py [rounds]`` (about a minute on 2 cores).
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from _procs import free_port, wait_ready

from semcache.testing import FakeOpenAIServer

AUTH = {"authorization": "Bearer key-a", "content-type": "application/json"}
KB = 1024


def _config(directory: Path, api_base: str) -> Path:
    path = directory / "proxy.toml"
    path.write_text(
        f"""
[[model_list]]
model_name = "fast"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{api_base}"
litellm_params.api_key = "os.environ/UPSTREAM_KEY"
litellm_params.max_retries = 0
[[clients]]
key = "key-a"
tenant = "team-a"
[cache.store]
backend = "none"
[cache.semantic]
enabled = false
"""
    )
    return path


def _body(content: str) -> bytes:
    return json.dumps(
        {"model": "fast", "messages": [{"role": "user", "content": content}]}
    ).encode()


def _digit_groups(size: int) -> str:
    unit = "123 456 789 012 "
    return (unit * (size // len(unit) + 1))[:size]


def _small(client: httpx.Client, base: str, n: int) -> float:
    start = time.perf_counter()
    body = _body(f"What is the capital of country number {n}?")
    response = client.post(f"{base}/v1/chat/completions", content=body, headers=AUTH)
    response.raise_for_status()
    return time.perf_counter() - start


def _loaded(base: str, big: bytes, n: int) -> float:
    def send() -> None:
        httpx.post(f"{base}/v1/chat/completions", content=big, headers=AUTH, timeout=300)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # the bodies are on their way in
    with httpx.Client(timeout=300) as client:
        latency = _small(client, base, n)
    for thread in threads:
        thread.join()
    return latency


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    shapes = {
        "8 x 1 MB digit groups (over the cap)": _body(_digit_groups(1024 * KB)),
        "8 x 200 KB digit groups (scanned)": _body(_digit_groups(200 * KB)),
    }
    with FakeOpenAIServer() as upstream, tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        code = (
            "import sys; from semcache.server.cli import serve_main as m; sys.exit(m(sys.argv[1:]))"
        )
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                code,
                "--port",
                str(port),
                "--config",
                str(_config(Path(tmp), upstream.api_base)),
            ],
            env={**os.environ, "UPSTREAM_KEY": "sk-bench"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_ready([port], [process])
            with httpx.Client(timeout=60) as client:
                _small(client, base, -1)  # warm-up: LiteLLM's first call
                alone = statistics.median(_small(client, base, i) for i in range(rounds))
            print(f"small question alone (baseline): {alone * 1000:8.1f} ms (median of {rounds})")
            for name, big in shapes.items():
                loaded = statistics.median(_loaded(base, big, 100 + i) for i in range(rounds))
                print(
                    f"{name:38}: {loaded * 1000:8.1f} ms, delay {(loaded - alone) * 1000:8.1f} ms,"
                    f" {loaded / alone:5.1f}x the baseline"
                )
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)


if __name__ == "__main__":
    main()
