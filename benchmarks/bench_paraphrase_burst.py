"""Paraphrase bursts: upstream calls and wrong answers with and without the in-flight merge.

    python benchmarks/bench_paraphrase_burst.py [--bursts 3] [--intents 4] [--per-intent 6]
        [--latency 1.0] [--spread 1.0] [--window-ms 150] [--threshold 0.9] [--verifier auto]

Synthetic traffic, generated here (no third-party text): a few support intents, each asked in
many templated paraphrases, plus for every intent a near-identical *sibling* intent (same
wording, a different object: "reset my password" / "reset my username") whose answer is a
wrong answer for the first. A burst asks ``--per-intent`` paraphrases of each of ``--intents``
intents and their siblings concurrently, arrivals spread uniformly over ``--spread`` seconds,
against a ``FakeUpstream`` answering after ``--latency`` seconds (its answer names the question
it answered, so every served answer can be traced to its intent). Each burst runs in a fresh
tenant, so every configuration starts from an empty partition; the same seeded bursts are
replayed under each configuration, all in one process with the bundled MiniLM embedder and
the embedded Qdrant (edge) store:

- ``no merge``: exact coalescing and the semantic tier only (the baseline);
- ``merge``: in-flight merge on, no gathering window;
- ``merge + window``: a fixed ``--window-ms`` window; ``merge + adaptive``: the adaptive one;
- ``sequential``: the same requests one at a time, in arrival order (the semantic tier's own
  wrong answers on this traffic: the merge must make no more);
- ``no merge (again)``: the baseline once more, last, for the run-to-run noise.

A wrong answer is one traced to a different intent than the request's. Prints one row per
configuration and the load average; asserts nothing (this machine is shared and noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

MODEL = "openai/gpt-4o-mini"

#: (action, object, sibling object): the sibling intent differs in one word.
INTENTS = [
    ("reset", "my password", "my username"),
    ("cancel", "my subscription", "my order"),
    ("change", "the email address on my account", "the phone number on my account"),
    ("download", "my invoice", "my contract"),
    ("update", "my billing address", "my shipping address"),
    ("delete", "my account", "my payment method"),
    ("export", "my contacts", "my calendar"),
    ("enable", "two-factor authentication", "single sign-on"),
]

TEMPLATES = [
    "How do I {a} {o}?",
    "How can I {a} {o}?",
    "What is the way to {a} {o}?",
    "I want to {a} {o}, how do I do that?",
    "Can you tell me how to {a} {o}?",
    "Please explain how to {a} {o}.",
    "What are the steps to {a} {o}?",
    "Quick question: how do I {a} {o}?",
    "I need to {a} {o}. How?",
    "Help me {a} {o}, please.",
    "Is there a way to {a} {o}?",
    "Where do I go to {a} {o}?",
]

_ANSWERED = re.compile(r"answer to: (.*)$", re.S)


@dataclass(frozen=True)
class Ask:
    at_s: float
    question: str
    intent: str


@dataclass
class Row:
    name: str
    requests: int = 0
    upstream: int = 0
    wrong: int = 0
    errors: int = 0
    tiers: Counter[str] = field(default_factory=Counter)
    shed: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)


def burst(rng: random.Random, intents: int, per_intent: int, spread_s: float) -> list[Ask]:
    asks = []
    for action, obj, sibling in INTENTS[:intents]:
        for target in (obj, sibling):
            intent = f"{action} {target}"
            for template in rng.sample(TEMPLATES, min(per_intent, len(TEMPLATES))):
                question = template.format(a=action, o=target)
                asks.append(Ask(rng.uniform(0, spread_s), question, intent))
    return sorted(asks, key=lambda a: a.at_s)


def intent_of(answer: str, intents: dict[str, str]) -> str | None:
    match = _ANSWERED.search(answer)
    return intents.get(match.group(1).strip()) if match else None


async def run_burst(cache: Any, asks: list[Ask], tenant: str, row: Row, concurrent: bool) -> None:
    from semcache import cache_info

    intents = {a.question: a.intent for a in asks}
    start = time.perf_counter()

    async def one(ask: Ask) -> None:
        if concurrent:
            await asyncio.sleep(max(0.0, start + ask.at_s - time.perf_counter()))
        t0 = time.perf_counter()
        try:
            response = await cache.acompletion(
                model=MODEL, messages=[{"role": "user", "content": ask.question}], tenant=tenant
            )
        except Exception:  # a benchmark counts failures instead of stopping
            row.errors += 1
            return
        row.latencies.append(time.perf_counter() - t0)
        row.requests += 1
        row.tiers[str(cache_info(response).tier)] += 1
        if intent_of(response.choices[0].message.content, intents) != ask.intent:
            row.wrong += 1

    if concurrent:
        await asyncio.gather(*(one(a) for a in asks))
    else:
        for ask in asks:
            await one(ask)


def run_config(
    name: str, bursts: list[list[Ask]], args: Any, embedder: Any, **coalesce: Any
) -> Row:
    from semcache import CacheSettings, SemanticCache
    from semcache.testing import FakeUpstream

    sequential = coalesce.pop("sequential", False)
    row = Row(name)
    upstream = FakeUpstream(delay_s=args.latency)
    with tempfile.TemporaryDirectory() as tmp:
        settings = CacheSettings(
            semantic={"threshold": args.threshold, "verifier": args.verifier},
            store={"backend": "edge", "path": tmp, "timeout_s": args.timeout_s},
            coalesce=coalesce,
            admission={"wait_ms": args.wait_ms, "max_loop_lag_ms": args.max_lag_ms},
        )
        with SemanticCache(settings, embedder=embedder, upstream=upstream) as cache:
            cache.ready()
            for i in range(10):  # first inferences are slow, and admission learns the cost
                warm = {"model": MODEL, "messages": [{"role": "user", "content": f"warm up {i}"}]}
                cache.completion(**warm, tenant="warm-up")
            cache.flush()
            calls0 = upstream.call_count
            shed0 = Counter(cache.stats().shed)
            for i, asks in enumerate(bursts):
                asyncio.run(run_burst(cache, asks, f"{name}-{i}", row, not sequential))
                cache.flush()
            row.shed = Counter(cache.stats().shed) - shed0
    row.upstream = upstream.call_count - calls0
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--bursts", type=int, default=3)
    parser.add_argument("--intents", type=int, default=4)
    parser.add_argument("--per-intent", type=int, default=6)
    parser.add_argument("--latency", type=float, default=1.0, help="upstream seconds")
    parser.add_argument("--spread", type=float, default=1.0, help="arrival spread, seconds")
    parser.add_argument("--window-ms", type=float, default=150.0)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--verifier", default="auto")
    parser.add_argument(
        "--wait-ms",
        type=float,
        default=60000.0,
        help="admission wait budget (the cache's default, 20 ms, sheds most lookups of a burst "
        "on a loaded 2-core machine, which hides semantic hits and merges alike)",
    )
    parser.add_argument(
        "--timeout-s",
        type=float,
        default=30.0,
        help="store/embedder timeout (the cache's 2 s turns lookups queued behind a burst's "
        "embeddings into misses on a loaded 2-core machine)",
    )
    parser.add_argument(
        "--max-lag-ms",
        type=float,
        default=None,
        help="admission loop-lag limit (default: off; the cache's 50 ms sheds nearly every "
        "lookup when other jobs load the machine)",
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    from semcache.embedders import load_embedder

    load0 = os.getloadavg()
    embedder = load_embedder("minilm")
    rng = random.Random(args.seed)
    bursts = [burst(rng, args.intents, args.per_intent, args.spread) for _ in range(args.bursts)]
    configs: list[tuple[str, dict[str, Any]]] = [
        ("no merge", {"merge": False}),
        ("merge", {"merge": True}),
        (f"merge + window {args.window_ms:g} ms", {"merge": True, "window_ms": args.window_ms}),
        ("merge + adaptive", {"merge": True, "window_ms": "adaptive", "window_fraction": 0.25}),
        ("sequential", {"merge": True, "sequential": True}),
        ("no merge (again)", {"merge": False}),  # the run-to-run noise of the baseline
    ]
    rows = [run_config(name, bursts, args, embedder, **kw) for name, kw in configs]
    load1 = os.getloadavg()

    n = sum(len(b) for b in bursts)
    print(
        f"{args.bursts} bursts x {n // args.bursts} requests ({args.intents} intents + siblings"
        f" x {args.per_intent} paraphrases), upstream {args.latency * 1000:.0f} ms, arrivals over"
        f" {args.spread * 1000:.0f} ms; MiniLM, threshold {args.threshold}, verifier"
        f" {args.verifier}, admission wait {args.wait_ms:g} ms,"
        f" loop-lag limit {args.max_lag_ms}; {os.cpu_count()} CPUs,"
        f" load average {load0[0]:.1f} -> {load1[0]:.1f}"
    )
    base = rows[0].upstream or 1
    head = f"{'configuration':<26}{'upstream':>9}{'vs base':>8}{'wrong':>6}{'err':>5}{'shed':>6}"
    print(head + f"{'p50 ms':>8}{'p95 ms':>8}  tiers")
    for r in rows:
        lat = np.asarray(r.latencies) * 1000 if r.latencies else np.asarray([float("nan")])
        tiers = " ".join(f"{t}={c}" for t, c in sorted(r.tiers.items()))
        if r.shed:
            tiers += "; shed " + " ".join(f"{k}={c}" for k, c in sorted(r.shed.items()))
        print(
            f"{r.name:<26}{r.upstream:>9}{r.upstream / base:>8.2f}{r.wrong:>6}{r.errors:>5}"
            f"{r.shed.total():>6}"
            f"{np.percentile(lat, 50):>8.0f}{np.percentile(lat, 95):>8.0f}  {tiers}"
        )


if __name__ == "__main__":
    main()
