"""Is the cache ever worse than no cache? The proxy with its cache against the same proxy
with the cache disabled, at 20, 150 and 400 concurrent clients, loopback only.

    python benchmarks/bench_overload.py [--seconds 10] [--levels 20,150,400] [--json out.json]

Processes (all on 127.0.0.1, all stopped at the end, the whole run bounded by --max-total-s):
- a fake OpenAI upstream (``bench_proxy.py --upstream``) answering after 50-150 ms;
- proxy "cache": ``semcache serve`` with the default cache (exact tiers, coalescer, bundled
  MiniLM embedder on the CPU, embedded store in a temporary directory, admission control at
  its defaults);
- proxy "nocache": the same config with every tier off (``semantic.enabled = false``,
  ``store.backend = "none"``, ``exact.max_entries = 0``, ``coalesce.enabled = false``);
- this process: closed-loop clients (aiohttp), each sending its next request when the last one was
  answered, for --seconds per proxy and level, split into --rounds interleaved slices
  (nocache, cache, cache, nocache, ...) so both proxies see the same background load on a
  shared machine, on ``bench_proxy``'s workload: 50% new questions, 30% exact repeats,
  20% paraphrases (``semcache/data/pairs.jsonl``), each run's questions tagged with the run
  so that no run is answered from an earlier one.

``--paced SHARE`` adds, per level, a run in which both proxies are offered the same request
rate (SHARE x the no-cache proxy's closed-loop throughput just measured): closed-loop clients
of a faster proxy send more requests in the same seconds, so on a saturated machine its
misses queue behind extra work that an equal offered load does not bring.

``bench_hits_under_load.py`` uses these helpers for its check of semantic hits under load.

Reported per level: throughput of each proxy and their ratio (cache / nocache), latency p50
and p99 of the no-cache proxy, of the cache proxy's misses, and the difference ("added",
with a 95% bootstrap interval for the p99 difference),
hits by tier, and what the cache shed or failed (from its /metrics). Asserts nothing; the
issue's targets are p99 added <= 10 ms and a throughput ratio >= 0.95 at every level.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import aiohttp
import httpx
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_proxy  # noqa: E402
from _procs import free_port  # noqa: E402
from bench_proxy import workload  # noqa: E402

CLIENT_KEY = "overload-client-key"


class Sent(NamedTuple):
    """One cache-proxy request of a traced run; ``sent`` / ``answered``: perf_counter s."""

    kind: str
    question: str
    tier: str
    reason: str  # x-semcache-miss-reason of a miss, else ""
    sent: float
    answered: float


Trace = list[Sent]
MODEL = "bench-model"
DISABLED = """
[cache.semantic]
enabled = false
[cache.store]
backend = "none"
[cache.exact]
max_entries = 0
[cache.coalesce]
enabled = false
"""


def start_upstream(min_ms: float, max_ms: float) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, str(HERE / "bench_proxy.py"), "--upstream", str(min_ms), str(max_ms)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, json.loads(process.stdout.readline())["api_base"]


def start_proxy(name: str, api_base: str, workdir: Path, cache_toml: str) -> tuple[Any, str]:
    return bench_proxy.start_proxy(
        api_base, workdir, free_port(), workdir / f"{name}.log", cache_toml, client_key=CLIENT_KEY
    )


async def closed_loop(
    base: str,
    position: Iterator[tuple[str, str]],
    clients: int,
    seconds: float,
    rate: float | None = None,
    sent: list[str] | None = None,
    origins: Counter[str] | None = None,
    trace: Trace | None = None,
) -> tuple[float, list[tuple[str, str, float]]]:
    """``clients`` workers send the next questions until ``seconds`` have passed.

    ``origins`` counts, for each ``coalesced`` answer, the tier the shared answer came from
    (its ``x-semcache-origin``), and each miss as ``"<kind> miss: <x-semcache-miss-reason>"``.

    ``trace`` gets a row per request (:data:`Trace`).

    ``rate`` (requests per second, all workers together) paces them: each worker sends when
    its previous request was answered *and* its next Poisson arrival time has come, so both
    proxies are offered the same load; a worker that falls behind sends at once (closed loop).
    Latency is measured from the send.
    """
    rng = random.Random(clients)
    results: list[tuple[str, str, float]] = []  # (kind, tier, latency_s)
    headers = {"authorization": f"Bearer {CLIENT_KEY}"}
    # aiohttp, not httpx: httpx's async pool (httpcore 1.0.9) holds requests on kept-alive
    # connections for seconds once 150 are open (150 requests to the fake upstream alone, in
    # waves: 1.3 s, then 5.2, 2.4, 3.4 s median; aiohttp 1.0 s each), and that wait was most
    # of the p99 measured for both proxies. LiteLLM's own upstream calls already use aiohttp.
    connector = aiohttp.TCPConnector(limit=clients)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(
        base_url=base, connector=connector, timeout=timeout, headers=headers
    ) as c:
        stop_at = time.perf_counter() + seconds

        async def worker() -> None:
            due = time.perf_counter()
            while time.perf_counter() < stop_at:
                if rate is not None:
                    due += rng.expovariate(rate / clients)
                    # never past the slice's end: a worker's last arrival must not stretch it
                    await asyncio.sleep(max(0.0, min(due, stop_at) - time.perf_counter()))
                    if time.perf_counter() >= stop_at:
                        break
                kind, question = next(position)
                if sent is not None:
                    sent.append(question)
                body = {"model": MODEL, "messages": [{"role": "user", "content": question}]}
                started = time.perf_counter()
                why = ""
                try:
                    async with c.post("/v1/chat/completions", json=body) as response:
                        await response.read()
                        tier = response.headers.get("x-semcache-tier", "error")
                        why = response.headers.get("x-semcache-miss-reason", "unknown")
                        if response.status != 200:
                            tier = f"http_{response.status}"
                        elif tier == "coalesced" and origins is not None:
                            origins[response.headers.get("x-semcache-origin", "unknown")] += 1
                        elif tier == "miss" and origins is not None:
                            origins[f"{kind} miss: {why}"] += 1
                except (aiohttp.ClientError, TimeoutError) as exc:
                    tier = type(exc).__name__
                results.append((kind, tier, time.perf_counter() - started))
                if trace is not None:
                    reason = why if tier == "miss" else ""
                    trace.append(Sent(kind, question, tier, reason, started, time.perf_counter()))

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return time.perf_counter() - started, results


CACHE_COUNTERS = (
    "semcache_cache_shed_total",
    "semcache_cache_failures_total",
    "semcache_cache_events_total",
)


def cache_counters(base: str) -> dict[str, float]:
    text = httpx.get(f"{base}/metrics", timeout=30).text
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith(CACHE_COUNTERS):
            name, value = line.rsplit(" ", 1)
            out[name.replace("semcache_cache_", "")] = float(value)
    return out


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000 if values else float("nan")


def bootstrap_p99_difference(
    miss: list[float], base: list[float], seed: int, rounds: int = 2000
) -> tuple[float, float]:
    """95% percentile-bootstrap interval of p99(miss) - p99(base), in ms.

    A p99 rests on the slowest 1% of a few hundred requests: the interval says how far the
    "added p99" figure could move on a rerun of the same load, which on a saturated 2-core
    machine is hundreds of milliseconds (measured), so a difference is read against it.
    """
    if not miss or not base:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    a, b = np.asarray(miss), np.asarray(base)
    diffs = np.percentile(rng.choice(a, (rounds, a.size)), 99, axis=1) - np.percentile(
        rng.choice(b, (rounds, b.size)), 99, axis=1
    )
    low, high = np.percentile(diffs, [2.5, 97.5]) * 1000
    return (float(low), float(high))


def run_level(
    clients: int,
    seconds: float,
    rounds: int,
    seed: int,
    cache_base: str,
    nocache_base: str,
    rate: float | None = None,
    stream: Any = None,
    sent: list[str] | None = None,
    trace: Trace | None = None,
    warmup: float = 0.0,
    paced: float | None = None,
    pids: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One level: interleaved slices of both proxies; ``sent`` and ``trace`` (when given)
    collect the cache proxy's questions in send order and its per-request rows.

    ``warmup`` seconds of the same load go to each proxy first, with questions of their own
    and not counted: a process's first burst (LiteLLM's first calls, its connection pools, the
    model's first batches) took 2.5 s for all 150 of the no-cache proxy's first requests in one
    run, 14% of its misses, so its p99 measured its start, not its load. ``paced``: offer
    both proxies ``paced`` x the no-cache proxy's closed-loop throughput in its warm-up.
    ``pids`` (base URL -> process id): also report each proxy's CPU seconds in the measured
    slices (its work between them included), per request it answered."""
    origins: Counter[str] = Counter()
    need = 40_000  # more than a run can send on this kind of machine
    make = workload if stream is None else stream

    def questions(run: int) -> list[tuple[str, str]]:
        # a tag per run, so no run finds another run's answers in the cache
        return [(kind, f"{q} (run {run})") for kind, q in make(need, run)]

    if warmup > 0:  # questions of their own (negative tags): nothing measured is warmed
        took, got = asyncio.run(
            closed_loop(nocache_base, iter(questions(-1 - 2 * seed)), clients, warmup)
        )
        asyncio.run(closed_loop(cache_base, iter(questions(-2 - 2 * seed)), clients, warmup))
        if paced is not None:
            rate = paced * len(got) / took
    before = cache_counters(cache_base)
    cpu_before = {b: bench_proxy.proxy_cpu_s(pid) for b, pid in (pids or {}).items()}
    load_before = load_average()
    # Interleaved slices (nocache, cache, cache, nocache, ...), so that both proxies see the
    # same background load on a shared machine; each proxy's questions continue across them.
    streams = {nocache_base: iter(questions(seed)), cache_base: iter(questions(seed + 1))}
    elapsed = {nocache_base: 0.0, cache_base: 0.0}
    outcomes: dict[str, list[tuple[str, str, float]]] = {nocache_base: [], cache_base: []}
    for i in range(rounds):
        order = (nocache_base, cache_base) if i % 2 == 0 else (cache_base, nocache_base)
        for base_url in order:
            log = sent if base_url == cache_base else None
            where = origins if base_url == cache_base else None
            rows = trace if base_url == cache_base else None
            took, got = asyncio.run(
                closed_loop(
                    base_url, streams[base_url], clients, seconds / rounds, rate, log, where, rows
                )
            )
            elapsed[base_url] += took
            outcomes[base_url] += got
    base_s, base = elapsed[nocache_base], outcomes[nocache_base]
    cache_s, cached = elapsed[cache_base], outcomes[cache_base]
    after = cache_counters(cache_base)
    cpu = {b: bench_proxy.proxy_cpu_s(pid) - cpu_before[b] for b, pid in (pids or {}).items()}
    base_lat = [lat for _, tier, lat in base if tier in ("miss", "bypass")]
    miss_lat = [lat for _, tier, lat in cached if tier == "miss"]
    tiers = Counter(tier for _, tier, _ in cached)
    served = {"miss", "bypass", "exact", "semantic", "coalesced", "merged"}
    errors = {t: n for t, n in Counter(t for _, t, _ in base + cached).items() if t not in served}
    return {
        "clients": clients,
        "offered_rps": rate,
        "load_avg_before": load_before,
        "load_avg_after": load_average(),
        "nocache_rps": len(base) / base_s,
        "cache_rps": len(cached) / cache_s,
        "throughput_ratio": (len(cached) / cache_s) / (len(base) / base_s),
        "nocache_p50_ms": pct(base_lat, 50),
        "nocache_p99_ms": pct(base_lat, 99),
        "miss_p50_ms": pct(miss_lat, 50),
        "miss_p99_ms": pct(miss_lat, 99),
        "added_p50_ms": pct(miss_lat, 50) - pct(base_lat, 50),
        "added_p99_ms": pct(miss_lat, 99) - pct(base_lat, 99),
        "added_p99_ci95_ms": bootstrap_p99_difference(miss_lat, base_lat, seed),
        "tiers": dict(tiers),
        "coalesced_origins": dict(origins),
        "tiers_by_kind": {
            f"{k}/{t}": n for (k, t), n in Counter((k, t) for k, t, _ in cached).items()
        },
        "errors": errors,
        "cache_counters": {k: after[k] - before.get(k, 0.0) for k in after},
        "cpu_s": {"cache": cpu.get(cache_base), "nocache": cpu.get(nocache_base)},
        "cpu_ms_per_request": {
            "cache": cpu[cache_base] * 1000 / max(len(cached), 1) if cpu else None,
            "nocache": cpu[nocache_base] * 1000 / max(len(base), 1) if cpu else None,
        },
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (
        f"{'clients':>7} {'nocache rps':>11} {'cache rps':>9} {'ratio':>6} "
        f"{'nocache p50/p99 ms':>19} {'miss p50/p99 ms':>16} {'added p50/p99 ms':>17}  hits"
    )
    print(head)
    for r in rows:
        hits = {t: n for t, n in r["tiers"].items() if t != "miss"}
        print(
            f"{r['clients']:>7} {r['nocache_rps']:>11.1f} {r['cache_rps']:>9.1f} "
            f"{r['throughput_ratio']:>6.3f} "
            f"{r['nocache_p50_ms']:>9.1f}/{r['nocache_p99_ms']:<9.1f}"
            f"{r['miss_p50_ms']:>7.1f}/{r['miss_p99_ms']:<8.1f}"
            f"{r['added_p50_ms']:>8.1f}/{r['added_p99_ms']:<8.1f} {hits}"
        )
        if r.get("offered_rps") is not None:
            print(f"        paced: both proxies offered {r['offered_rps']:.1f} requests/s")
        low, high = r["added_p99_ci95_ms"]
        print(f"        added p99 95% bootstrap interval: {low:+.1f} .. {high:+.1f} ms")
        print(
            f"        shed/failed: {r['cache_counters']}  errors: {r['errors']}  "
            f"load avg {r['load_avg_before']} -> {r['load_avg_after']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per run (two runs a level)")
    parser.add_argument("--levels", default="20,150,400")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved slices per proxy")
    parser.add_argument("--min-delay-ms", type=float, default=50)
    parser.add_argument("--max-delay-ms", type=float, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warmup",
        type=float,
        default=0.0,
        help="seconds of the same load to each proxy first, not counted (its own questions)",
    )
    parser.add_argument("--max-total-s", type=float, default=900, help="stop everything after")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--paced",
        type=float,
        metavar="SHARE",
        help="also run each level paced: both proxies offered SHARE x the no-cache proxy's "
        "closed-loop throughput at that level (e.g. 0.9), so the cache's faster hits do not "
        "bring more requests into the same seconds; 'added' is then per-miss overhead at "
        "equal load",
    )
    parser.add_argument(
        "--lookup-deadline-ms",
        type=float,
        help="the cache proxy's admission.lookup_deadline_ms (default: the cache's default)",
    )
    parser.add_argument(
        "--no-hedge",
        action="store_true",
        help="the cache proxy with admission.hedge = false: a lookup refused for the queue is "
        "shed, not raced beside the upstream call",
    )
    parser.add_argument(
        "--no-gc-freeze",
        action="store_true",
        help="both proxies with server.gc_freeze = false (the behaviour before it existed)",
    )
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, lambda *_: sys.exit("bench_overload: --max-total-s reached"))
    signal.alarm(int(args.max_total_s))
    processes: list[subprocess.Popen] = []
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="semcache-overload-") as tmp:
        workdir = Path(tmp)
        try:
            upstream, api_base = start_upstream(args.min_delay_ms, args.max_delay_ms)
            processes.append(upstream)
            server = "[server]\ngc_freeze = false\n" if args.no_gc_freeze else ""
            store = f'{server}[cache.store]\npath = "{workdir / "store"}"\n'
            admission = []
            if args.lookup_deadline_ms is not None:
                admission.append(f"lookup_deadline_ms = {args.lookup_deadline_ms}")
            if args.no_hedge:
                admission.append("hedge = false")
            if admission:
                store += "[cache.admission]\n" + "\n".join(admission) + "\n"
            cache_proc, cache_base = start_proxy("cache", api_base, workdir, store)
            processes.append(cache_proc)
            nocache_proc, nocache_base = start_proxy(
                "nocache", api_base, workdir, server + DISABLED
            )
            processes.append(nocache_proc)
            print(
                f"cpus {os.cpu_count()}, load avg {load_average()}, {args.seconds:g} s per run, "
                f"gc_freeze {not args.no_gc_freeze}, lookup_deadline_ms {args.lookup_deadline_ms}, "
                f"hedge {not args.no_hedge}"
            )
            for i, clients in enumerate(int(x) for x in args.levels.split(",")):
                rows.append(
                    run_level(
                        clients,
                        args.seconds,
                        args.rounds,
                        args.seed + 10 * i,
                        cache_base,
                        nocache_base,
                        warmup=args.warmup,
                    )
                )
                print_table(rows[-1:])
                if args.paced is not None:
                    rate = args.paced * rows[-1]["nocache_rps"]
                    rows.append(
                        run_level(
                            clients,
                            args.seconds,
                            args.rounds,
                            args.seed + 10 * i + 5,
                            cache_base,
                            nocache_base,
                            rate,
                        )
                    )
                    print_table(rows[-1:])
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
    print()
    print_table(rows)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    random.seed(0)
    main()
