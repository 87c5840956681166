"""Wrong answers and paraphrases served on semcache's collision corpus, through the public cache.

    .venv/bin/python benchmarks/bench_collisions.py [--redis] [--lang en|zh] [--limit N]
        [--seed S] [--fallback NAME --fallback-threshold T]

For every pair of ``semcache/data/collisions.jsonl`` an answer for ``text_a`` is stored with
``SemanticCache.store`` in a tenant of the pair's own (no pair ever sees another's entry), then
``text_b`` is asked with ``SemanticCache.completion`` (upstream: ``FakeUpstream``). The hit rule
is the default one (threshold, embedder, guard, readability routing); only admission control is
relaxed, so that a busy machine cannot turn a lookup into a shed miss (any shed, failed or
warming miss is printed, and should be 0).

A served label-0 pair is a wrong answer, a served label-1 pair a paraphrase served. The baseline,
from the same lookups: the cosine rule alone, which would also have served every pair the guard
vetoed (miss reason ``rejected``). Printed per kind and language, and in total, for the embedded
store (default) or the Redis vector-set store (``--redis``, a loopback Redis 8 from
``semcache.testing.RedisServer``). ``--fallback`` sets ``semantic.fallback_embedder`` (and
``--fallback-threshold`` its threshold), which the default leaves unset: then questions MiniLM
cannot read (the Chinese pairs) are looked up by meaning too, instead of exact-only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.datasets import CollisionPair, load_collisions
from semcache.stats import MissReason, Tier
from semcache.testing import FakeUpstream, RedisServer

MODEL = "gpt-4o-mini"
#: Misses that mean no lookup decided anything: printed, never counted as a correct miss.
NOT_LOOKED_UP = (MissReason.SHED, MissReason.FAILED, MissReason.WARMING)


@dataclass(frozen=True)
class Outcome:
    """What the cache did with one pair's ``text_b``."""

    pair: CollisionPair
    served: bool
    reason: MissReason | None  # why text_b missed (None: served)

    @property
    def vetoed(self) -> bool:
        """Over the threshold, but the guard (or a scorer) said no."""
        return self.reason == MissReason.REJECTED

    @property
    def unreadable(self) -> bool:
        """Exact-only: the embedder cannot read the question's script."""
        return self.reason == MissReason.UNREADABLE


#: Every pair's stored answer. No digits or names: the private-data gate keeps an answer that
#: looks private out of the semantic tier. The pair's own tenant says whose answer it is.
ANSWER = "The answer stored for the first text of this pair."


@contextlib.contextmanager
def _cache(redis: bool, semantic: dict[str, object] | None = None) -> Iterator[SemanticCache]:
    # the hit rule stays default; admission is relaxed so a busy host cannot shed a lookup
    admission = {"wait_ms": 600_000.0, "max_loop_lag_ms": None}
    with contextlib.ExitStack() as stack:
        if redis:
            server = stack.enter_context(RedisServer())
            store: dict[str, object] = {"backend": "redis"}
            extra: dict[str, object] = {"redis": {"url": server.url}}
        else:
            path = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-collisions-"))
            store, extra = {"backend": "edge", "path": path}, {}
        settings = CacheSettings(store=store, admission=admission, semantic=semantic or {}, **extra)
        cache = stack.enter_context(SemanticCache(settings, upstream=FakeUpstream()))
        if not cache.ready():
            raise SystemExit("the cache did not become ready")
        if semantic:
            _wait_for_fallback(cache)
        yield cache


def _wait_for_fallback(cache: SemanticCache, timeout_s: float = 300.0) -> None:
    """The fallback embedder loads in the background: ask a Chinese question until its
    lookup no longer misses for warming."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        response = cache.completion(
            model=MODEL, messages=[{"role": "user", "content": "预热问题"}], tenant="warm-up"
        )
        info = cache_info(response)
        if info is not None and info.miss_reason != MissReason.WARMING:
            return
        time.sleep(1.0)
    raise SystemExit("the fallback embedder did not load")


#: Pairs stored between two flushes: a short write-behind queue. With all 441 writes queued
#: at once behind long documents, a busy machine lost writes (``FlushReport.failed``).
STORE_CHUNK = 16


def store_all(cache: SemanticCache, pairs: list[CollisionPair]) -> None:
    """Store every ``text_a``'s answer in its pair's tenant; a chunk whose writes failed is
    written again once, and a second failure stops the run (a lost write would count as a
    correct miss)."""
    for start in range(0, len(pairs), STORE_CHUNK):
        chunk = pairs[start : start + STORE_CHUNK]
        for attempt in (1, 2):
            for pair in chunk:
                cache.store(pair["text_a"], ANSWER, model=MODEL, tenant=pair["id"])
            flushed = cache.flush()
            if not (flushed.failed or flushed.dropped):
                break
            print(f"pairs {start}..{start + len(chunk) - 1}, write {attempt}: {flushed}")
        else:
            raise SystemExit("store writes failed twice; no figures")


def run(cache: SemanticCache, pairs: list[CollisionPair]) -> list[Outcome]:
    """Store every ``text_a``'s answer, then ask every ``text_b``, each pair in its tenant."""
    store_all(cache, pairs)
    outcomes = []
    for pair in pairs:
        response = cache.completion(
            model=MODEL, messages=[{"role": "user", "content": pair["text_b"]}], tenant=pair["id"]
        )
        info = cache_info(response)
        if info is None:
            raise SystemExit(f"{pair['id']}: the response carries no cache_info")
        served = info.tier in (Tier.SEMANTIC, Tier.MERGED, Tier.COALESCED, Tier.EXACT)
        content = response.choices[0].message.content  # type: ignore[union-attr]
        if served and content != ANSWER:
            raise SystemExit(f"{pair['id']}: served {content!r}, not the stored answer")
        outcomes.append(Outcome(pair=pair, served=served, reason=info.miss_reason))
    return outcomes


def _row(name: str, outcomes: list[Outcome]) -> str:
    negatives = [o for o in outcomes if o.pair["label"] == 0]
    positives = [o for o in outcomes if o.pair["label"] == 1]
    wrong = sum(o.served for o in negatives)
    wrong_cosine = sum(o.served or o.vetoed for o in negatives)
    served = sum(o.served for o in positives)
    share = f"({served / len(positives):.0%})" if positives else ""
    unreadable = sum(o.unreadable for o in outcomes)
    return (
        f"{name:<22} {len(outcomes):>5} {f'{wrong} of {len(negatives)}':>14} "
        f"{f'{wrong_cosine} of {len(negatives)}':>14} "
        f"{f'{served} of {len(positives)} {share}':>20} {unreadable:>10}"
    )


def report(outcomes: list[Outcome], store: str, seconds: float) -> None:
    print(f"collision corpus through SemanticCache, default hit rule, {store}")
    print(
        f"{'kind · language':<22} {'pairs':>5} {'wrong served':>14} {'cosine alone':>14} "
        f"{'paraphrases served':>20} {'unreadable':>10}"
    )
    groups: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        groups.setdefault(f"{outcome.pair['kind']} · {outcome.pair['lang']}", []).append(outcome)
    for name, group in groups.items():
        print(_row(name, group))
    for lang in sorted({o.pair["lang"] for o in outcomes}):
        print(_row(f"all · {lang}", [o for o in outcomes if o.pair["lang"] == lang]))
    print(_row("total", outcomes))
    negatives = [o for o in outcomes if o.pair["label"] == 0]
    wrong = sum(o.served for o in negatives)
    baseline = sum(o.served or o.vetoed for o in negatives)
    ratio = f"{wrong / baseline:.2f}x" if baseline else "–"
    print(
        f"wrong answers served: {wrong} of {len(negatives)} with the guard, {baseline} by the "
        f"cosine rule alone (same lookups): {ratio} of the baseline"
    )
    reasons = Counter(str(o.reason) for o in outcomes if o.reason is not None)
    print(f"miss reasons: {dict(sorted(reasons.items()))}")
    undecided = sum(o.reason in NOT_LOOKED_UP for o in outcomes)
    print(f"lookups that decided nothing (shed, failed, warming): {undecided}")
    print(f"{len(outcomes)} pairs in {seconds:.1f} s; load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", action="store_true", help="the Redis vector-set store")
    parser.add_argument("--limit", type=int, help="a seeded random N pairs (quick runs)")
    parser.add_argument("--seed", type=int, default=0, help="seed of --limit")
    parser.add_argument("--lang", choices=["en", "zh"], help="only this language's pairs")
    parser.add_argument("--fallback", help="semantic.fallback_embedder (default: none)")
    parser.add_argument("--fallback-threshold", type=float, help="its threshold (cosine)")
    args = parser.parse_args()
    if (args.fallback is None) != (args.fallback_threshold is None):
        parser.error("--fallback and --fallback-threshold go together")
    semantic = None
    if args.fallback is not None:
        semantic = {
            "fallback_embedder": args.fallback,
            "fallback_threshold": args.fallback_threshold,
        }
    pairs = [p for p in load_collisions() if args.lang is None or p["lang"] == args.lang]
    if args.limit is not None and args.limit < len(pairs):
        pairs = sorted(random.Random(args.seed).sample(pairs, args.limit), key=pairs.index)
    started = time.perf_counter()
    with _cache(args.redis, semantic) as cache:
        outcomes = run(cache, pairs)
    store = "Redis store" if args.redis else "embedded store"
    if semantic is not None:
        store += f", fallback {args.fallback} at {args.fallback_threshold}"
    report(outcomes, store, time.perf_counter() - started)


if __name__ == "__main__":
    main()
