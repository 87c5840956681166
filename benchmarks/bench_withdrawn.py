"""Withdrawn answers across real ``semcache serve`` processes: how many later asks served one.

    python benchmarks/bench_withdrawn.py [--pairs 48] [--rounds 2]
        [--deployments redis cluster own own-cluster redis-lru] [--fill 12000]

Three ``semcache serve`` processes A, B, C on one shared Redis, per deployment:

- ``redis``: the Redis 8 vector-set store (``store.backend = "redis"``) on one Redis 8;
- ``cluster``: the same store on a 3-master Redis Cluster (``redis.cluster = true``);
- ``own``: each process its own embedded edge store (+ the purge log), one Redis 8;
- ``own-cluster``: each its own edge store on the 3-master cluster.
- ``redis-lru``: the Redis 8 store on one Redis 8 that evicts any key
  (``maxmemory-policy allkeys-lru``, ``--maxmemory`` 24 MB), filled first with ``--fill``
  answers of about 1 KB (12,000: well past the limit) by a cache in this process
  (``store_many``, tenant ``team-fill``).

On ``redis-lru`` two more counts: ``drop``: 200 of the filler answers are dropped (``drop()``,
after the fill, while eviction churns), then each is asked exactly and as a paraphrase on the
dropping cache and on a fresh one (800 asks): a dropped text served is counted. ``no wipe``:
how many of 1,000 filler questions a fresh cache serves from Redis right after the fill and
again after every case (eviction lowers it; a wipe would make it 0), with Redis's
``evicted_keys``.

Three cases per deployment, each on its own tenant and its own ``--pairs`` English label-1
pairs of ``semcache/data/pairs.jsonl`` (first question, paraphrase):

1. ``verdict``: every first question is learned on A, then every process asks every first
   question and paraphrase (so each memory tier and store has served the answer), then a
   "wrong" verdict on A (``POST /v1/feedback`` with the exact hit's ``x-semcache-key``);
2. ``purge``: the same learning, then ``POST /admin/purge {"tenant": ...}`` on A;
3. ``purge, C down``: the same learning, then C is stopped (SIGTERM), the purge is made on A,
   C is started again on the same store path and config.

Right after the verdict or purge returns (no sleep) the fake upstream starts answering with
a new version tag, and every process asks every first question and paraphrase again
(``--rounds`` times: 48 pairs x 2 questions x 3 processes x 2 rounds = 576 later asks, 384
of them on B and C). A
later answer whose text is one of the withdrawn texts is a withdrawn answer served (the
upstream can no longer produce it). Prints, per deployment and case, that count of the
later asks, the later asks' tiers (to show they were served from the cache, not all misses),
the seconds each part took and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import httpx
from _procs import free_port, wait_ready
from bench_round_robin import PAIRS

from semcache.testing import FakeOpenAIServer, RedisCluster, RedisServer

ADMIN = "admin-bench"
TENANTS = {"verdict": "team-v", "purge": "team-p", "purge, C down": "team-d"}
CONFIG = """
[[model_list]]
model_name = "fast"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{api_base}"
litellm_params.api_key = "os.environ/UPSTREAM_KEY"
{clients}
[server]
admin_key = "os.environ/SEMCACHE_ADMIN_KEY"
[cache.semantic]
threshold = {threshold}
[cache.store]
{store}
[cache.redis]
url = "{redis_url}"
cluster = {cluster}
"""


def pairs() -> list[tuple[str, str]]:
    """English label-1 pairs with distinct first questions, in file order."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for line in PAIRS.read_text().splitlines():
        row = json.loads(line)
        a, b = row["text_a"], row["text_b"]
        if row["lang"] == "en" and row["label"] == 1 and a != b and a not in seen:
            seen.add(a)
            out.append((a, b))
    return out


class Upstream:
    """The fake upstream's answers carry a version: after a withdrawal it is bumped, so a
    withdrawn text can only come from a cache."""

    def __init__(self, server: FakeOpenAIServer) -> None:
        self.version = 1
        server.responder = self.answer

    def answer(self, body: dict[str, Any]) -> str:
        text = body["messages"][-1]["content"]
        return f"v{self.version} answer to: {text}"


@dataclass
class Process:
    config: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, "-m", "semcache", "serve", "--port", str(self.port)]
        env = {**os.environ, "UPSTREAM_KEY": "sk-bench", "SEMCACHE_ADMIN_KEY": ADMIN}
        self.proc = subprocess.Popen(
            [*command, "--config", str(self.config)], env=env, stderr=subprocess.DEVNULL
        )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


Answer = tuple[str, str, str, str]
"""(tier, answer text, x-semcache-key, process name) of one ask."""


async def ask_many(asks: list[tuple[Process, str, str]], name_of: dict[int, str]) -> list[Answer]:
    """``(process, client key, question)`` asks, 8 at a time."""
    gate = asyncio.Semaphore(8)
    async with httpx.AsyncClient(timeout=120) as http:

        async def ask(process: Process, key: str, question: str) -> Answer:
            body = {"model": "fast", "messages": [{"role": "user", "content": question}]}
            async with gate:
                r = await http.post(
                    f"{process.url}/v1/chat/completions",
                    json=body,
                    headers={"authorization": f"Bearer {key}"},
                )
            r.raise_for_status()
            text = r.json()["choices"][0]["message"]["content"]
            tier = r.headers.get("x-semcache-tier", "miss")
            return tier, text, r.headers.get("x-semcache-key", ""), name_of[process.port]

        return list(await asyncio.gather(*(ask(p, k, q) for p, k, q in asks)))


def every_ask(processes: list[Process], key: str, chunk: list[tuple[str, str]]) -> list[Any]:
    """Each process asks each first question and each paraphrase."""
    return [(p, key, q) for p in processes for pair in chunk for q in pair]


@dataclass
class Outcome:
    case: str
    withdrawn: int
    reported: int  # feedback calls answered withdrawn=true (-1: a purge)
    served_withdrawn: Counter[str]
    later: Counter[str]
    asks: int
    seconds: float


def run_case(
    case: str,
    processes: dict[str, Process],
    chunk: list[tuple[str, str]],
    upstream: Upstream,
    rounds: int,
) -> Outcome:
    started = time.monotonic()
    a, c = processes["A"], processes["C"]
    name_of = {p.port: n for n, p in processes.items()}
    tenant = TENANTS[case]
    key = f"key-{tenant}"
    upstream.version = 1
    firsts = [(a, key, first) for first, _ in chunk]
    learned = asyncio.run(ask_many(firsts, name_of))
    time.sleep(3.0)  # write-behind: the store writes land before the other processes ask
    before = asyncio.run(ask_many(every_ask(list(processes.values()), key, chunk), name_of))
    if case == "verdict":
        again = asyncio.run(ask_many(firsts, name_of))  # exact hits on A: their keys
        withdrawn = set()
        reported = 0
        with httpx.Client(timeout=60) as http:
            for _tier, text, entry_key, _ in again:
                r = http.post(
                    f"{a.url}/v1/feedback",
                    json={"id": entry_key, "correct": False},
                    headers={"authorization": f"Bearer {key}"},
                )
                r.raise_for_status()
                withdrawn.add(text)  # counted whether or not it reports an entry removed
                reported += bool(r.json()["withdrawn"])
    else:
        withdrawn = {text for _, text, _, _ in learned + before}
        reported = -1
        if case == "purge, C down":
            c.stop()
        r = httpx.post(
            f"{a.url}/admin/purge",
            json={"tenant": tenant},
            headers={"authorization": f"Bearer {ADMIN}"},
            timeout=120,
        )
        r.raise_for_status()
    upstream.version = 2  # from now on the upstream cannot produce a withdrawn text
    if case == "purge, C down":
        c.port = free_port()
        c.start()
        wait_ready([c.port], [c.proc])  # type: ignore[list-item]
        name_of = {p.port: n for n, p in processes.items()}
    later = asyncio.run(ask_many(every_ask(list(processes.values()), key, chunk) * rounds, name_of))
    served = Counter(name for _, text, _, name in later if text in withdrawn)
    tiers = Counter(tier for tier, _, _, _ in later)
    elapsed = time.monotonic() - started
    return Outcome(case, len(withdrawn), reported, served, tiers, len(later), elapsed)


@contextlib.contextmanager
def redis_for(kind: str, maxmemory: str) -> Iterator[str]:
    if kind == "cluster":
        with RedisCluster(masters=3) as cluster:
            yield cluster.url
    elif kind == "lru":
        with RedisServer(maxmemory=maxmemory, maxmemory_policy="allkeys-lru") as server:
            yield server.url
    else:
        with RedisServer() as server:
            yield server.url


FILL_MODEL = "bench-fill"


def fill_question(i: int) -> str:
    return f"How do I configure widget {i} for the warehouse in region {i % 97}?"


def fill_paraphrase(i: int) -> str:
    return f"How can I configure widget {i} for the warehouse in region {i % 97}?"


def fill_answer(i: int) -> str:
    return f"fill answer {i}: " + f"step {i} of the widget guide. " * 30  # about 1 KB


def fill_cache(url: str) -> Any:
    """A cache in this process on the shared Redis store (another writer of the same store)."""
    from semcache import CacheSettings, SemanticCache

    settings = CacheSettings(store={"backend": "redis"}, redis={"url": url})
    cache = SemanticCache(settings)
    cache.ready()
    return cache


def fill(url: str, n: int) -> tuple[Any, Any]:
    """Store ``n`` filler answers from this process; the cache (kept open) and
    ``store_many``'s report."""
    cache = fill_cache(url)
    items = [{"prompt": fill_question(i), "response": fill_answer(i)} for i in range(n)]
    return cache, cache.store_many(items, model=FILL_MODEL, tenant="team-fill")


def fill_served(url: str, n: int, sample: int = 1000) -> int:
    """How many of ``sample`` filler questions (spread over all ``n``) a fresh cache serves
    with their own answer: what eviction (or a wipe) left."""
    cache = fill_cache(url)
    try:
        picks = range(0, n, max(1, n // sample))
        return sum(
            (hit := cache.check(fill_question(i), model=FILL_MODEL, tenant="team-fill")) is not None
            and hit.text == fill_answer(i)
            for i in picks
        )
    finally:
        cache.close()


def drop_case(url: str, cache: Any, n: int, count: int = 200) -> tuple[int, int, int]:
    """Drop ``count`` filler answers through ``cache``, then ask each exactly and as a
    paraphrase on ``cache`` and on a fresh cache: (dropped texts served, asks, copies the
    drops reported removed)."""
    picks = range(0, n, max(1, n // count))
    removed = sum(cache.drop(fill_question(i), model=FILL_MODEL, tenant="team-fill") for i in picks)
    fresh = fill_cache(url)
    served = asks = 0
    try:
        for asker in (cache, fresh):
            for i in picks:
                for text in (fill_question(i), fill_paraphrase(i)):
                    asks += 1
                    hit = asker.check(text, model=FILL_MODEL, tenant="team-fill")
                    served += hit is not None and hit.text == fill_answer(i)
    finally:
        fresh.close()
    return served, asks, removed


def evicted_keys(url: str) -> int:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return int(client.info("stats")["evicted_keys"])
    finally:
        client.close()


def deployment(
    name: str, args: argparse.Namespace, all_pairs: list[tuple[str, str]]
) -> list[Outcome]:
    cluster = name.endswith("cluster")
    own = name.startswith("own")
    lru = name.endswith("lru")
    clients = "".join(f'[[clients]]\nkey = "key-{t}"\ntenant = "{t}"\n' for t in TENANTS.values())
    kind = "cluster" if cluster else "lru" if lru else "one"
    with (
        redis_for(kind, args.maxmemory) as url,
        FakeOpenAIServer(delay_s=args.upstream_s) as server,
        tempfile.TemporaryDirectory() as d,
    ):
        upstream = Upstream(server)
        processes: dict[str, Process] = {}
        for p in "ABC":
            store = f'backend = "edge"\npath = "{Path(d) / p}"' if own else 'backend = "redis"'
            config = Path(d) / f"{p}.toml"
            config.write_text(
                CONFIG.format(
                    api_base=server.api_base,
                    clients=clients,
                    threshold=args.threshold,
                    store=store,
                    redis_url=url,
                    cluster=str(cluster).lower(),
                )
            )
            processes[p] = Process(config)
        filler = None
        try:
            if lru and args.fill:
                started = time.monotonic()
                filler, report = fill(url, args.fill)
                left = fill_served(url, args.fill)
                reasons = Counter(f.reason for f in report.failed)
                print(
                    f"  filled {report.written} of {args.fill} in "
                    f"{time.monotonic() - started:.0f} s (failed: {dict(reasons) or 0}; "
                    f"skipped by the policy: {report.skipped}; refused writes by tier and "
                    f"reason: {dict(filler.stats().write_refused) or 0}); "
                    f"a fresh cache serves {left} of 1000 filler questions; "
                    f"evicted_keys {evicted_keys(url)}"
                )
            for p in processes.values():
                p.start()
            wait_ready([p.port for p in processes.values()], [p.proc for p in processes.values()])  # type: ignore[misc]
            outcomes = []
            for i, case in enumerate(TENANTS):
                chunk = all_pairs[i * args.pairs : (i + 1) * args.pairs]
                outcomes.append(run_case(case, processes, chunk, upstream, args.rounds))
                if filler is not None:
                    left = fill_served(url, args.fill)
                    print(
                        f"  after {case}: a fresh cache serves {left} of 1000 filler questions; "
                        f"evicted_keys {evicted_keys(url)}"
                    )
            if filler is not None:
                served, asks, removed = drop_case(url, filler, args.fill)
                print(
                    f"  drop: {served} of {asks} asks served a dropped answer "
                    f"({removed} copies reported removed by 200 drops)"
                )
        finally:
            if filler is not None:
                filler.close()
            for p in processes.values():
                p.stop()
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--pairs", type=int, default=48, help="pairs per case (4 asks each per process)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="times the later asks are made")
    parser.add_argument("--deployments", nargs="+", default=["redis", "cluster", "own"])
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--upstream-s", type=float, default=0.2)
    parser.add_argument("--fill", type=int, default=12_000, help="filler answers (redis-lru)")
    parser.add_argument("--maxmemory", default="24mb", help="Redis maxmemory (redis-lru)")
    args = parser.parse_args()
    all_pairs = pairs()
    if len(all_pairs) < 3 * args.pairs:
        raise SystemExit(f"only {len(all_pairs)} pairs; ask for --pairs {len(all_pairs) // 3}")
    labels = {
        "redis": "Redis 8 store, one Redis 8",
        "cluster": "Redis 8 store, 3-master Redis Cluster",
        "own": "each process its own edge store + purge log, one Redis 8",
        "own-cluster": "each process its own edge store + purge log, 3-master Redis Cluster",
        "redis-lru": f"Redis 8 store, one Redis 8, allkeys-lru, maxmemory {args.maxmemory}",
    }
    print(
        f"3 semcache serve processes A, B, C; {args.pairs} pairs per case; later asks = every "
        f"process asks every first question and paraphrase right after the withdrawal"
    )
    for name in args.deployments:
        started = time.monotonic()
        print(f"\n{labels[name]}:")
        outcomes = deployment(name, args, all_pairs)
        print(f"  ({time.monotonic() - started:.0f} s)")
        for o in outcomes:
            verdicts = f", {o.reported} verdicts reported withdrawn" if o.reported >= 0 else ""
            print(
                f"  {o.case}: {sum(o.served_withdrawn.values())} of {o.asks} later asks served a "
                f"withdrawn answer ({o.withdrawn} withdrawn texts{verdicts}; by process "
                f"{dict(o.served_withdrawn) or '-'}); later tiers {dict(o.later)}; "
                f"{o.seconds:.0f} s"
            )
        print(f"  load average: {os.getloadavg()}")
    print(f"{os.cpu_count()} cores, shared")


if __name__ == "__main__":
    main()
