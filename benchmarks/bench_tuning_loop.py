"""The tuning loop on a simulated, labeled stream with drift: is the live estimate honest, and
does one loop iteration raise the hit rate without serving more wrong answers than δ?

    python benchmarks/bench_tuning_loop.py [--seeds 5] [--per-phase 1500] [--window 300]

Traffic (:mod:`semcache.tuning.simulate`, all text generated): phase ``plain`` (one topic,
short phrasings), then ``drift`` (a new topic and chattier phrasings) in two halves. The cache
runs on the simulation's keyword embedder, the in-memory store and a fake upstream that
answers each intent with its own text, with shadow verification on
(``verify.sample_rate``, near-threshold boost 4) and miss recording on.

1. Coverage: for every window of ``--window`` requests, the weighted estimate of the
   false-hit rate (from that window's shadow verdicts) and its 95% interval are compared
   with the true rate of that window's semantic hits. Also at fixed thresholds 0.75 / 0.80
   / 0.85 (no recalibration), so coverage is measured where false hits are common too.
2. One loop iteration, after the first drift half: the near misses are exported, labeled by
   the oracle, combined with the shadow labels, ``semcache calibrate --labels ... --apply``
   certifies a threshold at δ and writes it to a .env file, and the running cache applies it
   (``apply_thresholds``, what the proxy's /admin/reload does). The second drift half is
   compared with the same seed's run without the iteration (the same-run baseline).
Asserts nothing; prints the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from semcache import CacheSettings, SemanticCache
from semcache.eval.cli import calibrate_main
from semcache.testing import FakeUpstream, InMemoryStore
from semcache.tuning.simulate import (
    KeywordEmbedder,
    Traffic,
    Window,
    label_rows,
    replay,
)

MODEL = "gpt-4o-mini"


def make_cache(traffic: Traffic, threshold: float, args: argparse.Namespace, seed: int):
    settings = CacheSettings(
        semantic={"threshold": threshold, "verifier": "none"},
        store={"backend": "none"},
        verify={"sample_rate": args.sample_rate, "seed": seed},
        tuning={"delta": args.delta, "miss_margin": 0.15},
        admission={"wait_ms": 5000.0, "max_loop_lag_ms": None},  # a busy machine sheds nothing
    )
    return SemanticCache(
        settings,
        embedder=KeywordEmbedder(),
        store=InMemoryStore(),
        upstream=FakeUpstream(traffic.answer_for),
    )


def recalibrate(cache: SemanticCache, traffic: Traffic, t0: float, args, folder: Path) -> float:
    """misses -> oracle labels -> calibrate --labels --apply -> apply to the running cache."""
    misses = folder / "misses.jsonl"
    misses.write_text("".join(json.dumps(r) + "\n" for r in label_rows(traffic, cache.miss_rows())))
    shadow = folder / "labels.jsonl"
    shadow.write_text("".join(json.dumps(p.row()) + "\n" for p in cache.labeled_pairs()))
    env = folder / "semcache.env"
    argv = [
        "--labels",
        str(shadow),
        "--labels",
        str(misses),
        "--target",
        str(args.delta),
        "--current",
        str(t0),
        "--apply",
        "--save",
        str(env),
    ]
    if calibrate_main(argv) != 0:
        return t0
    change = cache.apply_thresholds(CacheSettings(_env_file=env))
    return change.threshold_after


def run(seed: int, t0: float, loop: bool, args: argparse.Namespace) -> list[Window]:
    traffic = Traffic(seed)
    n = args.per_phase
    plain = list(traffic.stream(n, devices=0.0, chatty=0.0, phase="plain"))
    drift1 = list(traffic.stream(n, devices=0.4, chatty=0.5, phase="drift"))
    drift2 = list(traffic.stream(n, devices=0.4, chatty=0.5, phase="after"))
    cache = make_cache(traffic, t0, args, seed)
    with cache, tempfile.TemporaryDirectory() as tmp:
        windows = replay(cache, traffic, plain + drift1, window=args.window, model=MODEL)
        if loop:
            recalibrate(cache, traffic, t0, args, Path(tmp))
        windows += replay(cache, traffic, drift2, window=args.window, model=MODEL)
    return windows


def summary(windows: list[Window], phase: str) -> tuple[float, float, float]:
    chosen = [w for w in windows if w.phase == phase]
    requests = sum(w.requests for w in chosen)
    hits = sum(w.hits for w in chosen)
    semantic = sum(w.semantic_hits for w in chosen)
    wrong = sum(w.wrong for w in chosen)
    return hits / requests, wrong / max(semantic, 1), chosen[-1].threshold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--per-phase", type=int, default=1500)
    parser.add_argument("--window", type=int, default=300)
    parser.add_argument("--t0", type=float, default=0.85, help="threshold before the loop")
    parser.add_argument("--delta", type=float, default=0.05)
    parser.add_argument("--sample-rate", type=float, default=0.2)
    parser.add_argument(
        "--part", choices=["all", "coverage", "loop"], default="all", help="what to run"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"seeds {args.seeds}, {args.per_phase} requests per phase, windows of {args.window}, "
        f"sample rate {args.sample_rate}, delta {args.delta}"
    )
    coverage: dict[str, list[bool]] = {}
    print("\n1. coverage of the live estimate's 95% interval (windows covered / windows)")
    for t in (0.75, 0.80, 0.85) if args.part != "loop" else ():
        windows = [w for s in range(args.seeds) for w in run(s, t, False, args)]
        cov = [w.covered for w in windows]
        coverage[f"fixed {t:.2f}"] = cov
        rates = [w.true_rate for w in windows]
        widths = [w.estimate.high - w.estimate.low for w in windows]
        verdicts = [w.estimate.verdicts for w in windows]
        print(
            f"  threshold {t:.2f}: {sum(cov)}/{len(cov)} = {sum(cov) / len(cov):.1%}; true "
            f"rate median {statistics.median(rates):.2%} (max {max(rates):.2%}); interval "
            f"width median {statistics.median(widths):.2%}; verdicts/window median "
            f"{statistics.median(verdicts):.0f}"
        )
    print(f"\n2. one loop iteration at t0 = {args.t0} (second drift half, loop vs no loop)")
    looped_cov: list[bool] = []
    rows = []
    for seed in range(args.seeds) if args.part != "coverage" else ():
        base = run(seed, args.t0, False, args)
        loop = run(seed, args.t0, True, args)
        looped_cov += [w.covered for w in loop]
        b_hit, b_wrong, _ = summary(base, "after")
        l_hit, l_wrong, l_t = summary(loop, "after")
        rows.append((seed, b_hit, l_hit, b_wrong, l_wrong, l_t))
        print(
            f"  seed {seed}: threshold {args.t0:.3f} -> {l_t:.3f}; hit rate {b_hit:.1%} -> "
            f"{l_hit:.1%} (x{l_hit / b_hit:.3f}); true wrong-answer rate {b_wrong:.2%} -> "
            f"{l_wrong:.2%} (delta {args.delta:.0%})"
        )
    coverage["loop runs"] = looped_cov
    raised = sum(1 for r in rows if r[2] > r[1])
    under = sum(1 for r in rows if r[4] <= args.delta)
    if rows:
        print(
            f"  hit rate raised in {raised}/{len(rows)} seeds; wrong-answer rate <= delta in "
            f"{under}/{len(rows)}; mean hit-rate ratio "
            f"{statistics.mean(r[2] / r[1] for r in rows):.3f}"
        )
    every = [c for cov in coverage.values() for c in cov] or [True]
    print(f"\nall windows: covered {sum(every)}/{len(every)} = {sum(every) / len(every):.1%}")
    print(f"ran in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
