"""Does a loaded proxy keep the semantic hits one client gets? The proxy with its cache
against the same proxy with the cache disabled, under a stream with paraphrases, loopback.

    python benchmarks/bench_hits_under_load.py [--clients 150] [--seconds 10] [--paced 0.9]

Processes as in ``bench_overload.py`` (whose helpers this uses): a fake upstream answering
after 1 s (``--min/--max-delay-ms``), proxy "cache" (defaults) and proxy "nocache" (every
tier off), ``--clients`` closed-loop clients on a stream of 40% new questions, 30% exact
repeats and 30% paraphrases (``bench_store_durability``'s hand-written light paraphrases,
which one client hits at the default threshold).

Printed, each against a baseline measured in the same run: the cache proxy's semantic (and
merged) hit share against one client's on the same stream (the questions the cache proxy
was sent, in send order, replayed sequentially through an in-process cache with an instant
upstream: one client sees every base question answered before its paraphrase); the p99 of a
miss against the no-cache p99 + 10% of the upstream latency; how long ``/readyz`` took to
report ``ok`` again once the load stopped; each proxy's requests per second and CPU ms per
request. Targets: share ratio >= 0.70, miss p99 <= that bound, readiness <= 5 s. Each proxy
first gets ``--warmup`` seconds of the same load with questions of its own, not counted (a
process's first burst measures its start, not its load). With ``--paced SHARE`` both
proxies are offered SHARE x the no-cache proxy's closed-loop throughput in its warm-up.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
from bench_overload import (
    DISABLED,
    Sent,
    Trace,
    load_average,
    run_level,
    start_proxy,
    start_upstream,
)
from bench_store_durability import PAIRS, generated

MODEL = "bench-model"


def hits_workload(n: int, seed: int) -> list[tuple[str, str]]:
    """(kind, question) in send order: 40% new, 30% exact repeats, 30% paraphrases of a
    question already sent (light rewordings that one client hits at the default threshold)."""
    rng = random.Random(seed)
    pairs = list(PAIRS)
    rng.shuffle(pairs)
    bases = [q for q, _ in pairs]
    para_of = dict(pairs)
    fillers = iter(generated(n))
    out: list[tuple[str, str]] = []
    sent: list[str] = []
    asked: list[str] = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.3 and asked:
            out.append(("paraphrase", rng.choice(asked)))
        elif roll < 0.6 and sent:
            out.append(("repeat", rng.choice(sent)))
        else:
            question = bases.pop() if bases and rng.random() < 0.5 else next(fillers)
            sent.append(question)
            if question in para_of:
                asked.append(para_of[question])
            out.append(("unique", question))
    return out


def served_line(tiers: Counter[str], reference: Counter[str], n: int) -> str:
    """Answers from the cache by any tier, and upstream calls, against one client's.

    The semantic share alone undercounts a loaded cache: a paraphrase whose first ask missed
    (its base still in flight, or its lookup shed) is stored under its own key, so its later
    asks are exact hits, where one client's are semantic hits on the base each time."""
    served = n - tiers["miss"] - tiers["bypass"]
    one = n - reference["miss"] - reference["bypass"]
    return (
        f"served from the cache (any tier): {served / max(n, 1):.3f} vs one client "
        f"{one / max(n, 1):.3f} -> ratio {served / one if one else float('nan'):.2f}; upstream "
        f"calls {tiers['miss'] + tiers['bypass']} vs {reference['miss'] + reference['bypass']}"
    )


def origin_line(tiers: Counter[str], origins: Counter[str], reference: Counter[str], n: int) -> str:
    """The semantic share again, with each ``coalesced`` answer counted by the tier its shared
    answer came from (``x-semcache-origin``). Printed beside the target's figure, not in its
    place: under load, identical asks of a paraphrase arrive together and share one semantic
    or merged answer, where one client's asks are one semantic hit each."""
    by_origin = origins["semantic"] + origins["merged"]
    share = (tiers["semantic"] + tiers["merged"] + by_origin) / max(n, 1)
    one = (reference["semantic"] + reference["merged"]) / max(n, 1)
    return (
        f"counting coalesced answers by their origin {dict(origins)}: semantic+merged share "
        f"{share:.3f} vs one client {one:.3f} -> ratio {share / one if one else float('nan'):.2f}"
    )


def paraphrase_first_asks(trace: Trace) -> str:
    """Where each paraphrase's first ask stood against its base question's first ask: the
    base answered before it was sent, in flight when it was sent, or sent after it (ms
    apart), by the paraphrase's tier and miss reason."""
    base_of = {para: base for base, para in PAIRS}
    first: dict[str, Sent] = {}
    for row in sorted(trace, key=lambda r: r.sent):
        first.setdefault(row.question, row)
    where: Counter[str] = Counter()
    for question, ask in first.items():
        if ask.kind != "paraphrase":
            continue
        text, _, run = question.rpartition(" (run ")
        base = first.get(f"{base_of.get(text, '')} (run {run}")
        if base is None:
            state = "base never sent"
        elif base.answered <= ask.sent:
            state = "base answered before"
        elif base.sent <= ask.sent:
            ahead = ask.sent - base.sent
            when = "<10 ms" if ahead < 0.01 else "10-100 ms" if ahead < 0.1 else ">100 ms"
            state = f"base in flight, sent {when} before"
        else:
            state = "base sent after"
        label = ask.tier if ask.tier != "miss" else f"miss:{ask.reason}"
        if base is not None and ask.tier == "miss":
            label += f" (base {base.tier}{':' + base.reason if base.reason else ''})"
        if ask.tier == "miss" or not state.startswith("base answered"):
            where[f"{label} / {state}"] += 1
    return "paraphrase first asks (not answered-before cases, and every miss): " + str(
        dict(sorted(where.items()))
    )


def one_client_reference(sent: list[str]) -> Counter[str]:
    """Tiers one sequential client gets on ``sent`` (default settings, instant upstream)."""
    from semcache import CacheSettings, SemanticCache, cache_info
    from semcache.testing import FakeUpstream

    tiers: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        settings = CacheSettings(store={"path": tmp})
        with SemanticCache(settings, upstream=FakeUpstream()) as cache:
            assert cache.ready()
            for question in sent:
                messages = [{"role": "user", "content": question}]
                tiers[str(cache_info(cache.completion(model=MODEL, messages=messages)).tier)] += 1
    return tiers


def readiness_after(base: str, limit_s: float = 120.0) -> tuple[float, float, str]:
    """Seconds until ``/readyz`` answers 200 (ready), and until its status is ``ok`` (no part
    degraded), polled every 100 ms; the last body."""
    started = time.perf_counter()
    body, ready_s = "", float("inf")
    while time.perf_counter() - started < limit_s:
        response = httpx.get(f"{base}/readyz", timeout=30)
        body = response.text
        if response.status_code == 200:
            ready_s = min(ready_s, time.perf_counter() - started)
            if response.json().get("status") == "ok":
                return ready_s, time.perf_counter() - started, body
        time.sleep(0.1)
    return ready_s, float("inf"), body


def run(args: argparse.Namespace) -> None:
    signal.signal(signal.SIGALRM, lambda *_: sys.exit("bench_hits_under_load: --max-total-s"))
    signal.alarm(int(args.max_total_s))
    clients, min_ms, max_ms = args.clients, args.min_delay_ms, args.max_delay_ms
    processes: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory(prefix="semcache-hits-under-load-") as tmp:
        workdir = Path(tmp)
        try:
            upstream, api_base = start_upstream(min_ms, max_ms)
            processes.append(upstream)
            store = f'[cache.store]\npath = "{workdir / "store"}"\n'
            admission = []
            if args.wait_fraction is not None:
                admission.append(f"wait_fraction = {args.wait_fraction}")
            if args.no_hedge:
                admission.append("hedge = false")
            if admission:
                store += "[cache.admission]\n" + "\n".join(admission) + "\n"
            cache_proc, cache_base = start_proxy("cache", api_base, workdir, store)
            nocache_proc, nocache_base = start_proxy("nocache", api_base, workdir, DISABLED)
            processes += [cache_proc, nocache_proc]
            print(
                f"hits under load: {clients} clients, upstream {min_ms:g}-{max_ms:g} ms, "
                f"{args.seconds:g} s per proxy, wait_fraction {args.wait_fraction or 'default'}, "
                f"load avg {load_average()} "
                "(a shared machine: figures are noisy)"
            )
            sent: list[str] = []
            trace: Trace = []
            pids = {cache_base: cache_proc.pid, nocache_base: nocache_proc.pid}
            row = run_level(
                clients,
                args.seconds,
                args.rounds,
                args.seed,
                cache_base,
                nocache_base,
                stream=hits_workload,
                sent=sent,
                trace=trace,
                warmup=args.warmup,
                paced=args.paced,
                pids=pids,
            )
            ready_s, ok_s, body = readiness_after(cache_base)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
    load_after = load_average()
    reference = one_client_reference(sent)
    tiers, n = Counter(row["tiers"]), len(sent)
    share = (tiers["semantic"] + tiers["merged"]) / max(n, 1)
    one = (reference["semantic"] + reference["merged"]) / max(n, 1)
    bound = row["nocache_p99_ms"] + 0.1 * (min_ms + max_ms) / 2
    print(
        f"requests {n}; cache proxy tiers {dict(tiers)}; shed/failed/events {row['cache_counters']}"
    )
    print(f"one client on the same stream: {dict(reference)}")
    print(f"cache proxy by kind: {dict(sorted(row['tiers_by_kind'].items()))}")
    print(
        f"semantic+merged share: {share:.3f} vs one client {one:.3f} -> ratio "
        f"{share / one if one else float('nan'):.2f} (target >= 0.70); semantic alone "
        f"{tiers['semantic'] / max(n, 1):.3f} vs "
        f"{reference['semantic'] / max(n, 1):.3f}"
    )
    noted = Counter(row["coalesced_origins"])
    misses = {k: v for k, v in sorted(noted.items()) if " miss: " in k}
    origins = Counter({k: v for k, v in noted.items() if " miss: " not in k})
    print(f"cache proxy misses by kind and x-semcache-miss-reason: {misses}")
    print(origin_line(tiers, origins, reference, n))
    print(paraphrase_first_asks(trace))
    print(served_line(tiers, reference, n))
    print(
        f"miss p50/p99 {row['miss_p50_ms']:.0f}/{row['miss_p99_ms']:.0f} ms; no-cache p50/p99 "
        f"{row['nocache_p50_ms']:.0f}/{row['nocache_p99_ms']:.0f} ms; bound (no-cache p99 + 10% "
        f"of upstream) {bound:.0f} ms -> "
        f"{'holds' if row['miss_p99_ms'] <= bound else 'fails'}"
    )
    low, high = row["added_p99_ci95_ms"]
    print(
        f"miss p99 - no-cache p99, 95% bootstrap interval: {low:+.0f} .. {high:+.0f} ms "
        f"(the bound allows +{bound - row['nocache_p99_ms']:.0f})"
    )
    print(
        f"/readyz 200 (ready) {ready_s:.1f} s and status ok {ok_s:.1f} s after the load "
        f"stopped (target <= 5 s); last body {body}"
    )
    cpu, per = row["cpu_s"], row["cpu_ms_per_request"]
    print(
        f"requests answered: cache proxy {row['cache_rps']:.1f}/s, no-cache proxy "
        f"{row['nocache_rps']:.1f}/s; proxy CPU {cpu['cache']:.1f} s vs {cpu['nocache']:.1f} s, "
        f"{per['cache']:.1f} vs {per['nocache']:.1f} ms a request"
    )
    if row["offered_rps"] is not None:
        print(
            f"paced: both proxies offered {row['offered_rps']:.1f} requests/s ({args.paced:g} "
            "x the no-cache proxy's closed-loop throughput in the warm-up)"
        )
    print(f"load avg {row['load_avg_before']} -> {row['load_avg_after']} -> {load_after}")
    asyncio.set_event_loop(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=150)
    parser.add_argument("--seconds", type=float, default=10.0, help="measured, per proxy")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved slices per proxy")
    parser.add_argument("--min-delay-ms", type=float, default=1000)
    parser.add_argument("--max-delay-ms", type=float, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warmup",
        type=float,
        default=5.0,
        help="seconds of the same load to each proxy first, not counted (its own questions)",
    )
    parser.add_argument("--max-total-s", type=float, default=900, help="stop everything after")
    parser.add_argument(
        "--paced",
        type=float,
        metavar="SHARE",
        help="offer both proxies SHARE x the no-cache proxy's closed-loop throughput in its "
        "warm-up (e.g. 0.9) instead of closed-loop clients",
    )
    parser.add_argument(
        "--wait-fraction",
        type=float,
        help="the cache proxy's admission.wait_fraction (default: the cache's default, 0.1)",
    )
    parser.add_argument(
        "--no-hedge",
        action="store_true",
        help="the cache proxy with admission.hedge = false",
    )
    args = parser.parse_args()
    if args.paced is not None and args.warmup <= 0:
        parser.error("--paced needs --warmup > 0 (it sets the rate)")
    run(args)


if __name__ == "__main__":
    random.seed(0)
    main()
