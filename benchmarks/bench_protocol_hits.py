"""Exact-hit latency of ``/v1/responses`` and ``/v1/messages`` against ``/v1/chat/completions``.

    python benchmarks/bench_protocol_hits.py [--rounds 20] [--per-round 50] [--json out.json]

One ``semcache serve`` process (store "none", semantic tier off: every repeat is an exact hit
from the memory tier) in front of the loopback fakes (``FakeOpenAIServer`` for chat and
Responses, ``FakeAnthropicServer`` for Messages); this process asks each route's question
once (the miss that stores it), then sends sequential repeats on one keep-alive connection,
non-streamed and streamed, the routes interleaved round by round so machine noise falls on
all of them alike. Prints p50/p99/mean per route and each new route's ratio to the chat
route's (the baseline measured in the same run). Asserts nothing: machines are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import httpx
from _procs import free_port, wait_ready

from semcache.testing import FakeAnthropicServer, FakeOpenAIServer

QUESTION = "How many legs does a spider have?"
CONFIG = """
[[model_list]]
model_name = "fast"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{openai_base}"
litellm_params.api_key = "os.environ/UPSTREAM_KEY"
[[model_list]]
model_name = "claude"
litellm_params.model = "anthropic/claude-3-5-haiku-latest"
litellm_params.api_base = "{anthropic_base}"
litellm_params.api_key = "os.environ/UPSTREAM_KEY"
[[clients]]
key = "key-a"
tenant = "team-a"
[cache.store]
backend = "none"
[cache.semantic]
enabled = false
"""

ROUTES: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": (
        "/v1/chat/completions",
        {"model": "fast", "messages": [{"role": "user", "content": QUESTION}]},
    ),
    "responses": ("/v1/responses", {"model": "fast", "input": QUESTION}),
    "messages": (
        "/v1/messages",
        {"model": "claude", "max_tokens": 64, "messages": [{"role": "user", "content": QUESTION}]},
    ),
}


def measure(http: httpx.Client, base: str, rounds: int, per_round: int) -> dict[str, list[float]]:
    """Latencies (ms) of exact hits per ``route`` and ``route+stream``."""
    samples: dict[str, list[float]] = {}
    headers = {"authorization": "Bearer key-a"}
    for stream in (False, True):
        for path, body in ROUTES.values():
            r = http.post(f"{base}{path}", json={**body, "stream": stream}, headers=headers)
            assert r.status_code == 200, r.text
    for _ in range(rounds):
        for stream in (False, True):
            for name, (path, body) in ROUTES.items():
                label = f"{name}{'+stream' if stream else ''}"
                for _ in range(per_round):
                    started = time.perf_counter()
                    r = http.post(f"{base}{path}", json={**body, "stream": stream}, headers=headers)
                    _ = r.content
                    samples.setdefault(label, []).append((time.perf_counter() - started) * 1000)
                    if r.headers.get("x-semcache-tier") != "exact":
                        raise RuntimeError(f"{label}: not an exact hit: {r.headers}")
    return samples


def summary(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for label, values in samples.items():
        ordered = sorted(values)
        out[label] = {
            "n": len(values),
            "p50_ms": statistics.median(ordered),
            "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
            "mean_ms": statistics.fmean(ordered),
        }
    for label, row in out.items():
        baseline = out["chat+stream" if label.endswith("+stream") else "chat"]
        row["p50_ratio_vs_chat"] = row["p50_ms"] / baseline["p50_ms"]
        row["mean_ratio_vs_chat"] = row["mean_ms"] / baseline["mean_ms"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--per-round", type=int, default=50)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with FakeOpenAIServer() as oa, FakeAnthropicServer() as an, tempfile.TemporaryDirectory() as d:
        config = Path(d) / "proxy.toml"
        config.write_text(CONFIG.format(openai_base=oa.api_base, anthropic_base=an.api_base))
        port = free_port()
        command = [sys.executable, "-m", "semcache", "serve", "--port", str(port)]
        env = {**os.environ, "UPSTREAM_KEY": "sk-bench"}
        process = subprocess.Popen(
            [*command, "--config", str(config)], env=env, stderr=subprocess.DEVNULL
        )
        try:
            wait_ready([port], [process])
            with httpx.Client(timeout=30) as http:
                samples = measure(http, f"http://127.0.0.1:{port}", args.rounds, args.per_round)
        finally:
            process.terminate()
            process.wait(timeout=30)
        upstream = {"chat": oa.chat_calls, "messages": an.messages_calls}
    result = summary(samples)
    print(f"upstream calls (one miss per route and mode): {upstream}")
    print(f"{'route':18} {'n':>6} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'p50/chat':>9}")
    for label, row in result.items():
        print(
            f"{label:18} {row['n']:>6.0f} {row['p50_ms']:>8.3f} {row['p99_ms']:>8.3f} "
            f"{row['mean_ms']:>8.3f} {row['p50_ratio_vs_chat']:>9.3f}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps({"routes": result, "upstream": upstream}, indent=2))


if __name__ == "__main__":
    main()
