"""Exact-hit latency of ``/v1/responses`` and ``/v1/messages`` against ``/v1/chat/completions``.

    python benchmarks/bench_protocol_hits.py [--rounds 10] [--per-round 100] [--json out.json]

One ``semcache serve`` process (store "none", semantic tier off: every repeat is an exact hit
from the memory tier) in front of the loopback fakes (``FakeOpenAIServer`` for chat and
Responses, ``FakeAnthropicServer`` for Messages); this process asks each route's question
once (the miss that stores it), then sends sequential repeats on one keep-alive connection.
The six series (three routes, non-streamed and streamed) are interleaved request by request,
the order rotating at each step, so machine noise falls on all of them alike. Per round it
prints each series' median and p90 and the ratio of its median to the chat route's in the
same round (streamed to streamed); the spread of those ratios over the rounds is the noise.
The summary gives every series' median and p90 over all rounds and the median, lowest and
highest of its per-round ratios. Asserts nothing: machines are noisy.
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


def labels() -> list[tuple[str, str, dict[str, Any]]]:
    """``(label, path, body)`` of each series: every route, non-streamed then streamed."""
    return [
        (f"{name}{'+stream' if stream else ''}", path, {**body, "stream": stream})
        for stream in (False, True)
        for name, (path, body) in ROUTES.items()
    ]


def measure(http: httpx.Client, base: str, rounds: int, per_round: int) -> list[dict[str, list]]:
    """Per round, the latencies (ms) of exact hits of each series."""
    headers = {"authorization": "Bearer key-a"}
    series = labels()
    for _, path, body in series:  # the misses that store each answer, then a warm-up
        for _ in range(20):
            r = http.post(f"{base}{path}", json=body, headers=headers)
            assert r.status_code == 200, r.text
    out: list[dict[str, list[float]]] = []
    for _ in range(rounds):
        samples: dict[str, list[float]] = {label: [] for label, _, _ in series}
        for step in range(per_round):
            shift = step % len(series)
            for label, path, body in series[shift:] + series[:shift]:
                started = time.perf_counter()
                r = http.post(f"{base}{path}", json=body, headers=headers)
                _ = r.content
                samples[label].append((time.perf_counter() - started) * 1000)
                if r.headers.get("x-semcache-tier") != "exact":
                    raise RuntimeError(f"{label}: not an exact hit: {r.headers}")
        out.append(samples)
    return out


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def _baseline(label: str) -> str:
    return "chat+stream" if label.endswith("+stream") else "chat"


def per_round(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """One round's median, p90 and median ratio to chat per series."""
    medians = {label: statistics.median(values) for label, values in samples.items()}
    return {
        label: {
            "p50_ms": medians[label],
            "p90_ms": _p90(values),
            "ratio": medians[label] / medians[_baseline(label)],
        }
        for label, values in samples.items()
    }


def summary(rounds: list[dict[str, list[float]]]) -> dict[str, dict[str, Any]]:
    """Every series over all rounds, and the spread of its per-round ratios."""
    each = [per_round(samples) for samples in rounds]
    out: dict[str, dict[str, Any]] = {}
    for label in rounds[0]:
        values = [v for samples in rounds for v in samples[label]]
        ratios = [row[label]["ratio"] for row in each]
        out[label] = {
            "n": len(values),
            "p50_ms": statistics.median(values),
            "p90_ms": _p90(values),
            "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
            "rounds": [row[label] for row in each],
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=100)
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
                rounds = measure(http, f"http://127.0.0.1:{port}", args.rounds, args.per_round)
        finally:
            process.terminate()
            process.wait(timeout=30)
        upstream = {"chat": oa.chat_calls, "messages": an.messages_calls}
    result = summary(rounds)
    print(f"upstream calls (one miss per route and mode): {upstream}")
    print("per round: median ms (ratio to chat)")
    print("round " + " ".join(f"{label:>22}" for label in result))
    for i in range(len(rounds)):
        cells = [result[label]["rounds"][i] for label in result]
        print(f"{i:>5} " + " ".join(f"{c['p50_ms']:>14.3f} ({c['ratio']:.2f})" for c in cells))
    ratio_head = "ratio p50/chat (min-max over rounds)"
    print(f"{'series':18} {'n':>6} {'p50 ms':>8} {'p90 ms':>8} {ratio_head:>38}")
    for label, row in result.items():
        spread = f"{row['ratio_median']:.3f} ({row['ratio_min']:.2f}-{row['ratio_max']:.2f})"
        print(f"{label:18} {row['n']:>6} {row['p50_ms']:>8.3f} {row['p90_ms']:>8.3f} {spread:>38}")
    if args.json is not None:
        args.json.write_text(json.dumps({"series": result, "upstream": upstream}, indent=2))


if __name__ == "__main__":
    main()
