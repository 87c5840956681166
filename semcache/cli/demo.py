"""``semcache demo``: a realistic request stream replayed through the full cache.

Built from the shipped labeled set: first questions, exact repeats, paraphrases, hard
negatives, other tenants and bursts of identical concurrent requests. The simulated upstream
answers with the question's intent group, so a served answer is *wrong* exactly when its
group differs. Everything is real except the LLM.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

MODEL = "openai/gpt-4o-mini"

if TYPE_CHECKING:
    from semcache.datasets import LabeledPair


@dataclass(frozen=True, slots=True)
class Step:
    """One request of the stream; ``concurrency`` > 1 sends that many identical copies at once."""

    kind: str  # first | repeat | paraphrase | hard_negative | other_tenant | burst
    tenant: str
    text: str
    group: str
    concurrency: int = 1


@dataclass
class DemoReport:
    threshold: float
    requests: int = 0
    tiers: Counter[str] = field(default_factory=Counter)
    wrong_by_tier: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    hits_by_kind: Counter[str] = field(default_factory=Counter)
    latency_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    cross_tenant: int = 0
    upstream_calls: int = 0
    saved_cost_usd: float = 0.0
    spent_cost_usd: float = 0.0
    wall_s: float = 0.0

    @property
    def hits(self) -> int:
        return sum(self.tiers[t] for t in ("exact", "semantic", "coalesced", "merged"))

    @property
    def wrong(self) -> int:
        return sum(self.wrong_by_tier.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "requests": self.requests,
            "hit_rate": self.hits / self.requests if self.requests else 0.0,
            "tiers": dict(self.tiers),
            "wrong_answers": self.wrong,
            "cross_tenant_answers": self.cross_tenant,
            "wrong_rate_of_hits": self.wrong / self.hits if self.hits else 0.0,
            "upstream_calls": self.upstream_calls,
            "saved_cost_usd": self.saved_cost_usd,
            "spent_cost_usd": self.spent_cost_usd,
        }


def build_stream(
    pairs: Sequence[LabeledPair],
    *,
    tenants: Sequence[str] = ("acme", "globex", "initech"),
    pairs_per_tenant: int = 40,
    repeats: int = 40,
    bursts: int = 4,
    burst_size: int = 16,
    seed: int = 7,
) -> list[Step]:
    """A deterministic stream: every pair's first text is asked before its second."""
    rng = random.Random(seed)
    usable = [p for p in pairs if p.get("group") and p.get("group_b")]
    rng.shuffle(usable)
    first: list[Step] = []
    later: list[Step] = []
    for t, tenant in enumerate(tenants):
        chosen = usable[t * pairs_per_tenant : (t + 1) * pairs_per_tenant]
        for pair in chosen:
            first.append(Step("first", tenant, pair["text_a"], pair["group"]))
            kind = "paraphrase" if pair["label"] == 1 else "hard_negative"
            later.append(Step(kind, tenant, pair["text_b"], pair["group_b"]))
    rng.shuffle(first)
    asked = list(first)
    extra = [Step("repeat", s.tenant, s.text, s.group) for s in rng.sample(asked, repeats)]
    moved = rng.sample(asked, min(len(asked), repeats // 2))
    for step in moved:  # the same question in another tenant must not be served across
        others = [t for t in tenants if t != step.tenant]
        extra.append(Step("other_tenant", rng.choice(others), step.text, step.group))
    leftover = usable[len(tenants) * pairs_per_tenant :]
    for pair in leftover[:bursts]:
        extra.append(Step("burst", rng.choice(tenants), pair["text_a"], pair["group"], burst_size))
    tail = later + extra
    rng.shuffle(tail)
    return first + tail


class GroupResponder:
    """Upstream answers: the intent group of the question, so wrong hits are detectable."""

    def __init__(self, stream: Sequence[Step]) -> None:
        self.groups = {s.text: s.group for s in stream}

    def __call__(self, body: dict[str, Any]) -> str:
        text = body["messages"][-1]["content"]
        group = self.groups.get(text.strip(), "unknown")
        return f"group={group} :: tenant={body.get('user')} :: answer to: {text}"


def _answer_labels(text: str) -> tuple[str, str]:
    """(group, tenant) an upstream answer was made for."""
    group, tenant, _ = text.split(" :: ", 2)
    return group.removeprefix("group="), tenant.removeprefix("tenant=")


async def replay(cache: Any, stream: Sequence[Step], api_base: str, report: DemoReport) -> None:
    from semcache import cache_info

    async def one(step: Step) -> None:
        started = time.perf_counter()
        response = await cache.acompletion(
            model=MODEL,
            api_base=api_base,
            api_key="sk-demo",
            messages=[{"role": "user", "content": step.text}],
            tenant=step.tenant,
            user=step.tenant,  # not part of the key; lets the upstream sign its answers
            max_retries=0,
        )
        elapsed = (time.perf_counter() - started) * 1000
        info = cache_info(response)
        tier = info.tier if info is not None else "miss"
        report.requests += 1
        report.tiers[tier] += 1
        report.kinds[step.kind] += 1
        report.latency_ms[tier].append(elapsed)
        if info is not None and info.hit:
            report.hits_by_kind[step.kind] += 1
            report.saved_cost_usd += info.saved_cost_usd
        else:
            report.spent_cost_usd += float(response._hidden_params.get("response_cost") or 0.0)
        group, tenant = _answer_labels(response.choices[0].message.content)
        if group != step.group:
            report.wrong_by_tier[tier] += 1
        if tenant != step.tenant:
            report.cross_tenant += 1

    for step in stream:
        await asyncio.gather(*(one(step) for _ in range(step.concurrency)))


def run_demo(
    *,
    threshold: float = 0.95,
    verifier: str = "auto",
    embedder: Any = None,
    store_path: str | None = None,
    upstream_delay_s: float = 0.03,
    stream: Sequence[Step] | None = None,
    seed: int = 7,
    progress: Callable[[str], None] | None = None,
) -> DemoReport:
    """Replay the demo stream once and return what happened (also used by the notebooks).

    ``progress`` receives a line before each long step (model load, replay), so a terminal
    user is never left without output for the minute a first model load can take.
    """
    say = progress if progress is not None else (lambda line: None)
    from semcache import CacheSettings, SemanticCache
    from semcache.datasets import load_shipped_pairs
    from semcache.testing import FakeOpenAIServer

    steps = list(stream) if stream is not None else build_stream(load_shipped_pairs(), seed=seed)
    report = DemoReport(threshold=threshold)
    with tempfile.TemporaryDirectory(prefix="semcache-demo-") as tmp:
        settings = CacheSettings(
            semantic={"threshold": threshold, "verifier": verifier},
            store={"backend": "edge", "path": store_path or f"{tmp}/store"},
        )
        with FakeOpenAIServer(responder=GroupResponder(steps), delay_s=upstream_delay_s) as up:
            cache = SemanticCache(settings, embedder=embedder)
            try:
                say("loading the embedding model and opening the store ...")
                cache.ready()  # load the model and open the store before timing anything
                total = sum(step.concurrency for step in steps)
                say(f"replaying {total} requests against a simulated LLM ...")
                started = time.perf_counter()
                _run(replay(cache, steps, up.api_base, report))
                report.wall_s = time.perf_counter() - started
            finally:
                cache.close()
            report.upstream_calls = up.chat_calls
    return report


def _run(coro: Any) -> None:
    """``asyncio.run``, also from inside a running loop (a notebook): then on a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coro)
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, coro).result()


def print_report(report: DemoReport) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"semcache demo: {report.requests} requests, threshold {report.threshold}")
    for column in ("tier", "served", "share", "wrong answers", "p50 ms", "p99 ms"):
        table.add_column(column, justify="right" if column != "tier" else "left")
    for tier in ("exact", "semantic", "coalesced", "merged", "miss", "bypass"):
        n = report.tiers[tier]
        if not n:
            continue
        latencies = np.asarray(report.latency_ms[tier])
        table.add_row(
            tier,
            str(n),
            f"{n / report.requests:.1%}",
            str(report.wrong_by_tier[tier]),
            f"{np.percentile(latencies, 50):.1f}",
            f"{np.percentile(latencies, 99):.1f}",
        )
    console.print(table)
    kinds = Table(title="hits by kind of request (hard negatives and other tenants should miss)")
    for column in ("kind", "requests", "served from cache"):
        kinds.add_column(column)
    for kind, n in sorted(report.kinds.items()):
        kinds.add_row(
            kind, str(n), f"{report.hits_by_kind[kind]} ({report.hits_by_kind[kind] / n:.0%})"
        )
    console.print(kinds)
    saved_calls = report.requests - report.upstream_calls
    console.print(
        f"hit rate {report.hits / report.requests:.1%} · wrong answers served {report.wrong} "
        f"({report.wrong / max(report.hits, 1):.1%} of hits) · answers from another tenant "
        f"{report.cross_tenant} · upstream calls "
        f"{report.upstream_calls} for {report.requests} requests ({saved_calls} saved) · "
        f"cost saved ${report.saved_cost_usd:.5f} of "
        f"${report.saved_cost_usd + report.spent_cost_usd:.5f} "
        f"· replay {report.wall_s:.1f} s"
    )


def _parser() -> argparse.ArgumentParser:
    from semcache.cli import OneLineParser

    parser = OneLineParser(prog="semcache demo", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``semcache demo``'s options."""
    from semcache.cli import cosine_threshold

    parser.description = __doc__.split("\n\n")[0]
    parser.add_argument(
        "--threshold",
        type=cosine_threshold,
        default=None,
        help="cosine similarity in [-1, 1] for a semantic hit (default: the settings')",
    )
    parser.add_argument(
        "--verifier",
        choices=("auto", "none", "details"),
        default="auto",
        help="answer guard on semantic candidates (default: %(default)s)",
    )
    parser.add_argument(
        "--store-path", default=None, help="embedded store directory (default: a temporary one)"
    )
    parser.add_argument(
        "--delay",
        type=_seconds,
        default=0.03,
        help="simulated upstream latency, seconds (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, default=7, help="seed of the request stream (default: %(default)s)"
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds >= 0")
    return value


def run(args: argparse.Namespace) -> int:
    """Run the demo; the exit status."""
    threshold = args.threshold
    if threshold is None:
        from semcache import CacheSettings

        threshold = CacheSettings().semantic.threshold
    from rich.console import Console

    status = Console(stderr=True)
    report = run_demo(
        threshold=threshold,
        verifier=args.verifier,
        store_path=args.store_path,
        upstream_delay_s=args.delay,
        seed=args.seed,
        progress=lambda line: status.print(f"semcache demo: {line}", highlight=False),
    )
    print_report(report)
    return 0
