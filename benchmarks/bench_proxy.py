"""The caching proxy under load, on loopback, against a baseline measured in the same run.

    python benchmarks/bench_proxy.py [--requests 5000] [--concurrency 200] [--json out.json]

Three processes, so the load generator does not steal the proxy's interpreter:
- a fake OpenAI upstream (``semcache.testing.FakeOpenAIServer``) answering after a random
  50-200 ms and recording, per question, how many calls it got and how many overlapped;
- ``semcache serve`` with the default cache (exact tiers, coalescer, bundled MiniLM,
  embedded Qdrant store in a temporary directory, default threshold and guard);
- this process: 200 concurrent keep-alive clients sending 5,000 chat requests, 50% unique
  questions, 30% exact repeats of earlier ones, 20% paraphrases of earlier ones (the
  project's own labelled pairs in ``semcache/data/pairs.jsonl``).

Reports throughput, latency p50/p99 by the tier the proxy reported, errors, upstream calls
vs unique request keys (and the most calls any one key got at the same time), the proxy's
added latency on an exact hit vs a direct ``SemanticCache.acompletion`` exact hit (both
sequential, after the load), and the proxy's peak RSS. Asserts nothing: machines are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import httpx
import numpy as np
from _procs import free_port

PAIRS = Path(__file__).resolve().parents[1] / "semcache" / "data" / "pairs.jsonl"
CLIENT_KEY = "bench-client-key"
ADMIN_KEY = "bench-admin-key"
UPSTREAM_KEY = "sk-bench-upstream"
MODEL = "bench-model"

_VERBS = [
    "fix",
    "clean",
    "paint",
    "store",
    "ship",
    "insure",
    "repair",
    "sell",
    "rent",
    "recycle",
    "measure",
    "register",
    "replace",
    "install",
    "heat",
    "cool",
    "test",
    "move",
    "pack",
    "grow",
]
_THINGS = [
    "a leather sofa",
    "an electric bike",
    "a sourdough starter",
    "a vinyl record",
    "a wool sweater",
    "a ceramic vase",
    "a gaming laptop",
    "a bonsai tree",
    "a canoe",
    "an espresso machine",
    "a piano",
    "a drone",
    "a wedding dress",
    "a fish tank",
    "a solar panel",
    "a chess set",
    "a violin",
    "a telescope",
    "a mattress",
    "a kayak",
]
_PLACES = [
    "in winter",
    "on a budget",
    "in a small flat",
    "before a long trip",
    "near the sea",
    "after a flood",
    "in Norway",
    "in Brazil",
    "for a school project",
    "with kids around",
    "without tools",
    "in a rented house",
    "at high altitude",
    "in a humid climate",
    "for the first time",
    "as a beginner",
    "in an emergency",
    "for a wedding",
    "in Japan",
    "overnight",
]


# -- the fake upstream (child process) -----------------------------------------------------
def upstream_main(min_delay_s: float, max_delay_s: float) -> None:
    """Serve until stdin closes, then print per-question call statistics as JSON."""
    from http.server import ThreadingHTTPServer

    from semcache.testing import FakeOpenAIServer, echo_responder

    # The stdlib default listen backlog (5) drops SYNs when 200 connections open at once,
    # which would add 1 s retransmits to the figures; a real upstream has a deep backlog.
    ThreadingHTTPServer.request_queue_size = 1024
    lock = threading.Lock()
    in_flight: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    peak: Counter[str] = Counter()

    def responder(body: dict[str, Any]) -> str:
        question = body["messages"][-1]["content"]
        with lock:
            in_flight[question] += 1
            calls[question] += 1
            peak[question] = max(peak[question], in_flight[question])
        time.sleep(random.uniform(min_delay_s, max_delay_s))
        with lock:
            in_flight[question] -= 1
        return echo_responder(body)

    server = FakeOpenAIServer(responder=responder).start()
    print(json.dumps({"api_base": server.api_base}), flush=True)
    for _ in sys.stdin:  # each line asks for the statistics so far; EOF stops the server
        with lock:
            stats = {
                "calls": sum(calls.values()),
                "keys": len(calls),
                "max_calls_per_key": max(calls.values(), default=0),
                "max_concurrent_per_key": max(peak.values(), default=0),
            }
        print(json.dumps(stats), flush=True)
    server.stop()


# -- workload -------------------------------------------------------------------------------
def workload(n: int, seed: int) -> list[tuple[str, str]]:
    """(kind, question) in send order: 50% unique, 30% exact repeats, 20% paraphrases."""
    rng = random.Random(seed)
    pairs = [
        (row["text_a"], row["text_b"])
        for row in map(json.loads, PAIRS.read_text(encoding="utf-8").splitlines())
        if row["lang"] == "en" and row["label"] == 1
    ]
    rng.shuffle(pairs)
    n_unique, n_repeat = n // 2, n * 3 // 10
    n_para = n - n_unique - n_repeat
    synthetic = [f"How do I {v} {t} {p}?" for v in _VERBS for t in _THINGS for p in _PLACES]
    rng.shuffle(synthetic)
    bases = list(dict.fromkeys(a for a, _ in pairs))
    uniques = bases + [q for q in synthetic if q not in set(bases)][: n_unique - len(bases)]
    kinds = ["unique"] * n_unique + ["repeat"] * n_repeat + ["paraphrase"] * n_para
    rng.shuffle(kinds)
    kinds[: len(bases)] = ["unique"] * len(bases)  # the pairs' bases go out first
    kinds = kinds[:n]
    paraphrases: dict[str, list[str]] = defaultdict(list)
    for a, b in pairs:
        paraphrases[a].append(b)
    out: list[tuple[str, str]] = []
    sent: list[str] = []
    asked: list[str] = []  # paraphrases whose base question was already sent
    next_unique = iter(uniques)
    for kind in kinds:
        if kind == "repeat" and sent:
            out.append((kind, rng.choice(sent)))
            continue
        if kind == "paraphrase" and asked:
            out.append((kind, rng.choice(asked)))
            continue
        question = next(next_unique, None)
        if question is None:
            out.append(("repeat", rng.choice(sent)))
            continue
        sent.append(question)
        asked.extend(paraphrases.get(question, ()))
        out.append(("unique", question))
    return out


# -- processes ------------------------------------------------------------------------------
def start_upstream(args: argparse.Namespace) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--upstream", str(args.min_delay_ms), str(args.max_delay_ms)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, json.loads(process.stdout.readline())["api_base"]


def start_proxy(
    api_base: str,
    workdir: Path,
    port: int,
    log_path: Path,
    extra_toml: str | None = None,
    *,
    client_key: str = CLIENT_KEY,
) -> tuple[subprocess.Popen, str]:
    """``semcache serve`` on ``port`` in front of ``api_base``, once ``/readyz`` says 200.

    ``extra_toml`` is appended to the config (default: an admin key and a store under
    ``workdir``); the config file is named after ``log_path``.
    """
    if extra_toml is None:
        extra_toml = f"""
[server]
admin_key = "os.environ/BENCH_ADMIN_KEY"

[cache.store]
path = "{workdir / "store"}"
"""
    config = workdir / f"{log_path.stem}.toml"
    config.write_text(
        f"""
[[model_list]]
model_name = "{MODEL}"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{api_base}"
litellm_params.api_key = "os.environ/BENCH_UPSTREAM_KEY"
litellm_params.max_retries = 0
litellm_params.timeout = 60

[[clients]]
key = "{client_key}"
tenant = "bench"
{extra_toml}""",
        encoding="utf-8",
    )
    code = "import sys; from semcache.server.cli import serve_main as m; sys.exit(m(sys.argv[1:]))"
    process = subprocess.Popen(
        [sys.executable, "-c", code, "--port", str(port), "--config", str(config)],
        env={**os.environ, "BENCH_UPSTREAM_KEY": UPSTREAM_KEY, "BENCH_ADMIN_KEY": ADMIN_KEY},
        stdout=subprocess.DEVNULL,
        stderr=log_path.open("w"),
        cwd=workdir,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240
    while True:  # /readyz loads the embedder and opens the store
        try:
            if httpx.get(f"{base}/readyz", timeout=120).status_code == 200:
                return process, base
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"proxy did not become ready; see {log_path}")
        time.sleep(0.2)


def proxy_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process, all threads (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# -- load -----------------------------------------------------------------------------------
def body(question: str) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": question}]}


async def run_load(
    base: str, requests: list[tuple[str, str]], concurrency: int
) -> tuple[float, list[dict[str, Any]]]:
    queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    for item in requests:
        queue.put_nowait(item)
    results: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"authorization": f"Bearer {CLIENT_KEY}"}
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=120, headers=headers) as c:

        async def worker() -> None:
            while not queue.empty():
                kind, question = queue.get_nowait()
                started = time.perf_counter()
                try:
                    response = await c.post("/v1/chat/completions", json=body(question))
                    status, tier = response.status_code, response.headers.get("x-semcache-tier")
                except httpx.HTTPError as exc:
                    status, tier = type(exc).__name__, None
                results.append(
                    {
                        "kind": kind,
                        "status": status,
                        "tier": tier or "error",
                        "latency_s": time.perf_counter() - started,
                    }
                )

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, results


class RawClient:
    """A minimal keep-alive HTTP/1.1 client over one socket: next to no client-side cost,
    so what it times is the proxy (uvicorn, app, cache) plus the loopback round trip."""

    def __init__(self, base: str) -> None:
        import socket

        host, port = base.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def post(self, path: str, payload: dict[str, Any], authorization: str) -> dict[str, str]:
        data = json.dumps(payload).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nhost: bench\r\nauthorization: {authorization}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
        )
        self.sock.sendall(head.encode() + data)
        received = b""
        while b"\r\n\r\n" not in received:
            received += self.sock.recv(65536)
        raw_head, rest = received.split(b"\r\n\r\n", 1)
        lines = raw_head.decode().split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:])
        while len(rest) < int(headers["content-length"]):
            rest += self.sock.recv(65536)
        headers["status"] = lines[0].split()[1]
        return headers

    def close(self) -> None:
        self.sock.close()


async def exact_hit_latencies(base: str, api_base: str, n: int) -> dict[str, list[float]]:
    """Sequential exact hits: through the proxy (raw socket and httpx clients) and straight
    into the library (``SemanticCache.acompletion``, memory tier, same upstream)."""
    from semcache import CacheSettings, SemanticCache

    question = "What is the boiling point of water at sea level?"
    authorization = f"Bearer {CLIENT_KEY}"
    raw = RawClient(base)
    via_raw: list[float] = []
    try:
        for i in range(n + 1):
            started = time.perf_counter()
            headers = raw.post("/v1/chat/completions", body(question), authorization)
            elapsed = time.perf_counter() - started
            if i:  # the first call is the miss that stores the answer
                assert headers["x-semcache-tier"] == "exact", headers
                via_raw.append(elapsed)
    finally:
        raw.close()
    via_httpx: list[float] = []
    headers = {"authorization": authorization}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
        for _ in range(n):
            started = time.perf_counter()
            response = await client.post("/v1/chat/completions", json=body(question))
            via_httpx.append(time.perf_counter() - started)
            assert response.headers["x-semcache-tier"] == "exact"
    cache = SemanticCache(CacheSettings(store={"backend": "none"}))
    request = {
        "model": "openai/gpt-4o-mini",
        "api_base": api_base,
        "api_key": UPSTREAM_KEY,
        "max_retries": 0,
        "messages": body(question)["messages"],
        "tenant": "bench",
    }
    direct: list[float] = []
    try:
        for i in range(n + 1):
            started = time.perf_counter()
            await cache.acompletion(**request)
            if i:
                direct.append(time.perf_counter() - started)
    finally:
        await cache.aclose()
    return {"proxy": via_raw, "proxy_httpx": via_httpx, "direct": direct}


# -- report ---------------------------------------------------------------------------------
def ms(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q) * 1000) if values else float("nan")


def report(
    wall_s: float,
    results: list[dict[str, Any]],
    upstream: dict[str, Any],
    exact: dict[str, list[float]],
    peak_mib: float,
    unique_keys: int,
    metrics_upstream_calls: float,
) -> dict[str, Any]:
    by_tier: dict[str, list[float]] = defaultdict(list)
    for r in results:
        by_tier[r["tier"]].append(r["latency_s"])
    errors = [r for r in results if r["status"] != 200]
    kinds_tiers = Counter((r["kind"], r["tier"]) for r in results)
    proxy_p50, direct_p50 = ms(exact["proxy"], 50), ms(exact["direct"], 50)
    summary = {
        "requests": len(results),
        "wall_s": round(wall_s, 2),
        "throughput_rps": round(len(results) / wall_s, 1),
        "errors": len(errors),
        "latency_ms_by_tier": {
            tier: {"n": len(v), "p50": round(ms(v, 50), 2), "p99": round(ms(v, 99), 2)}
            for tier, v in sorted(by_tier.items())
        },
        "kind_to_tier": {f"{k}->{t}": n for (k, t), n in sorted(kinds_tiers.items())},
        "unique_request_keys": unique_keys,
        "upstream_calls": upstream["calls"],
        "upstream_calls_in_proxy_metrics": metrics_upstream_calls,
        "max_upstream_calls_per_key": upstream["max_calls_per_key"],
        "max_concurrent_upstream_calls_per_key": upstream["max_concurrent_per_key"],
        "exact_hit_ms": {
            "proxy_p50": round(proxy_p50, 3),
            "proxy_p99": round(ms(exact["proxy"], 99), 3),
            "proxy_httpx_client_p50": round(ms(exact["proxy_httpx"], 50), 3),
            "proxy_httpx_client_p99": round(ms(exact["proxy_httpx"], 99), 3),
            "direct_p50": round(direct_p50, 3),
            "direct_p99": round(ms(exact["direct"], 99), 3),
            "added_p50": round(proxy_p50 - direct_p50, 3),
            "ratio_p50": round(proxy_p50 / direct_p50, 1),
        },
        "proxy_peak_rss_mib": round(peak_mib, 1),
    }
    print(
        f"{len(results)} requests in {wall_s:.1f} s: {summary['throughput_rps']} req/s, "
        f"{len(errors)} errors"
    )
    for tier, figures in summary["latency_ms_by_tier"].items():
        print(
            f"  {tier:<10} n={figures['n']:>5}  p50 {figures['p50']:8.2f} ms  "
            f"p99 {figures['p99']:8.2f} ms"
        )
    print(f"  intended kind -> served tier: {summary['kind_to_tier']}")
    print(
        f"upstream calls {upstream['calls']} for {unique_keys} unique request keys "
        f"(proxy metrics: {metrics_upstream_calls:.0f}); most calls for one key "
        f"{upstream['max_calls_per_key']}, most at once {upstream['max_concurrent_per_key']}"
    )
    e = summary["exact_hit_ms"]
    print(
        f"exact hit, sequential: proxy p50 {e['proxy_p50']:.3f} ms (p99 {e['proxy_p99']:.3f}; "
        f"with an httpx client p50 {e['proxy_httpx_client_p50']:.3f}) vs direct library "
        f"p50 {e['direct_p50']:.3f} ms (p99 {e['direct_p99']:.3f}): added "
        f"{e['added_p50']:.3f} ms, {e['ratio_p50']}x"
    )
    print(f"proxy peak RSS {peak_mib:.0f} MiB")
    if errors:
        print(f"first errors: {errors[:3]}")
    return summary


def scrape_upstream_calls(base: str) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{base}/metrics").text
    return sum(
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "semcache_upstream_calls_total"
    )


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--upstream":
        upstream_main(float(sys.argv[2]) / 1000, float(sys.argv[3]) / 1000)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--min-delay-ms", type=float, default=50)
    parser.add_argument("--max-delay-ms", type=float, default=200)
    parser.add_argument("--exact-repeats", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the summary here")
    parser.add_argument("--proxy-log", type=Path, help="keep the proxy's JSON log here")
    args = parser.parse_args()

    requests = workload(args.requests, args.seed)
    unique_keys = len({q for _, q in requests})
    upstream, api_base = start_upstream(args)
    with tempfile.TemporaryDirectory(prefix="semcache-bench-proxy-") as tmp:
        workdir = Path(tmp)
        log_path = args.proxy_log or workdir / "proxy.log"
        proxy, base = start_proxy(api_base, workdir, free_port(), log_path)
        assert upstream.stdin is not None and upstream.stdout is not None
        try:
            load_before = os.getloadavg()[0]
            cpu_before = proxy_cpu_s(proxy.pid)
            wall_s, results = asyncio.run(run_load(base, requests, args.concurrency))
            cpu_ms_per_request = (proxy_cpu_s(proxy.pid) - cpu_before) * 1000 / len(results)
            load_after = os.getloadavg()[0]
            metrics_calls = scrape_upstream_calls(base)
            admin = {"authorization": f"Bearer {ADMIN_KEY}"}
            cache_stats = httpx.get(f"{base}/admin/stats", headers=admin).json()
            upstream.stdin.write("stats\n")
            upstream.stdin.flush()
            upstream_stats = json.loads(upstream.stdout.readline())
            exact = asyncio.run(exact_hit_latencies(base, api_base, args.exact_repeats))
            peak_mib = peak_rss_mib(proxy.pid)
        finally:
            proxy.terminate()
            proxy.wait(timeout=60)
            upstream.stdin.close()
            upstream.wait(timeout=30)
    summary = report(wall_s, results, upstream_stats, exact, peak_mib, unique_keys, metrics_calls)
    summary["proxy_cpu_ms_per_request"] = round(cpu_ms_per_request, 2)
    summary["load_average_1m"] = {"before": load_before, "after": load_after}
    print(
        f"proxy CPU {cpu_ms_per_request:.1f} ms per request; machine load average "
        f"{load_before:.1f} before, {load_after:.1f} after the load ({os.cpu_count()} CPUs)"
    )
    summary["cache_stats"] = {
        k: cache_stats.get(k)
        for k in ("tiers", "stored", "verifier_rejections", "errors", "store_entries")
    }
    print(f"cache stats after the load: {summary['cache_stats']}")
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
