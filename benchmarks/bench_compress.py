"""Prompt compression on the shipped corpus: rules alone, then rules + a (fake) rewrite model.

    python benchmarks/bench_compress.py [--embedder minilm] [--drop-every 20]

Part 1, rules (deterministic, no network): input tokens before and after (LiteLLM's counter
for gpt-4o-mini), per language x verbose/plain, as a ratio against the same run's original
prompts; rewrites the preservation check refused; used compressions that lost a detail from
the corpus's own detail lists ("let through"); time per prompt.

Part 2, rules + model: the A/B harness of ``semcache compress-eval`` against the loopback
``FakeOpenAIServer`` playing rewrite model, answering model and judge
(``semcache.compress.testing``; the fake rewrite drops repeats and small words and, like a
careless model, one sentence in ``--drop-every``). It measures the machinery and the check,
not a real model's quality: run ``semcache compress-eval`` with a real ``--model`` for that.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections import defaultdict
from importlib import resources
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from semcache.compress import (
    ChainCompressor,
    CompressionLedger,
    RuleCompressor,
    lost_details,
)
from semcache.compress.ab import ABRunner, details_lost, load_prompts, summarise
from semcache.compress.testing import fake_llm_responder
from semcache.testing import FakeOpenAIServer

MODEL = "gpt-4o-mini"


def corpus_path() -> Path:
    return Path(str(resources.files("semcache").joinpath("data/compress_prompts.jsonl")))


async def rules_part(prompts, min_tokens: int) -> None:
    compressor = RuleCompressor(min_tokens=min_tokens)
    ledger = CompressionLedger()
    groups: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    started = time.perf_counter()
    for prompt in prompts:
        result = await compressor.compress(prompt.messages, model=MODEL)
        ledger.record(result, model=MODEL)
        lost = details_lost(prompt, result.messages) if result.used else ()
        recheck = result.used and any(
            lost_details(a["content"], b["content"])
            for a, b in zip(prompt.messages, result.messages, strict=True)
        )
        for label in (
            f"{prompt.lang} {'verbose' if prompt.verbose else 'plain'}",
            f"all {'verbose' if prompt.verbose else 'plain'}",
            "all",
        ):
            g = groups[label]
            g[0] += 1
            g[1] += result.tokens_before
            g[2] += result.tokens_after
            g[3] += any(r.reason == "lost_detail" for r in result.rejections)
            g[4] += bool(lost) or recheck
            g[5] += result.used
    elapsed = time.perf_counter() - started
    print(f"\nrules alone, min_tokens={min_tokens} (tokens: LiteLLM counter for {MODEL})")
    header = (
        "group",
        "prompts",
        "used",
        "tokens before",
        "after",
        "after/before",
        "saved",
        "check refused",
        "let through",
    )
    print(f"{header[0]:<12} " + " ".join(f"{h:>{max(len(h), 5)}}" for h in header[1:]))
    for label in sorted(groups):
        n, before, after, refused, through, used = groups[label]
        print(
            f"{label:<12} {n:>7} {used:>5} {before:>13} {after:>5} {after / before:>12.3f} "
            f"{1 - after / before:>5.1%} {refused:>13} {through:>11}"
        )
    totals = ledger.totals()
    print(
        f"{elapsed / len(prompts) * 1000:.1f} ms per prompt; money saved at {MODEL}'s input "
        f"price: ${totals.saved_usd:.6f} for {totals.tokens_saved} tokens"
    )


async def model_part(prompts, embedder_name: str, drop_every: int) -> None:
    embedder = None
    if embedder_name != "none":
        from semcache.embedders.registry import load_embedder

        embedder = load_embedder(embedder_name)
    with FakeOpenAIServer(responder=fake_llm_responder(drop_every=drop_every)) as server:
        kwargs = {"api_base": server.api_base, "api_key": "sk-fake"}
        chain = ChainCompressor(
            f"openai/{MODEL}", min_tokens=0, model_options={"completion_kwargs": kwargs}
        )
        runner = ABRunner(
            chain,
            model=f"openai/{MODEL}",
            embedder=embedder,
            judge=f"openai/{MODEL}",
            completion_kwargs=kwargs,
        )
        started = time.perf_counter()
        results = await runner.run(prompts)
        elapsed = time.perf_counter() - started
        calls = server.chat_calls
    print(f"\nrules + fake rewrite model (drop one sentence in {drop_every}), via compress-eval")
    print(
        f"{'group':<12} {'prompts':>7} {'used':>5} {'saved':>6} {'check refused':>13} "
        f"{'let through':>11} {'sim mean':>8} {'sim min':>7} {'judge same':>10}"
    )
    groups: dict[str, list] = defaultdict(list)
    for r in results:
        groups[f"{r.lang} {'verbose' if r.verbose else 'plain'}"].append(r)
        groups[f"all {'verbose' if r.verbose else 'plain'}"].append(r)
        groups["all"].append(r)
    for label in sorted(groups):
        s = summarise(groups[label])
        sim = "-" if s.mean_similarity is None else f"{s.mean_similarity:.3f}"
        low = "-" if s.min_similarity is None else f"{s.min_similarity:.3f}"
        print(
            f"{label:<12} {s.prompts:>7} {s.used:>5} {s.saved_ratio:>6.1%} "
            f"{s.rejection_rate:>13.1%} {s.let_through:>11} {sim:>8} {low:>7} "
            f"{s.judged_same:>5}/{s.judged:<4}"
        )
    through = sorted({d for r in results for d in r.details_lost})
    print(f"{calls} fake-model calls in {elapsed:.1f} s; details let through: {through or 'none'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="none", help="embed answers (e.g. minilm)")
    parser.add_argument("--drop-every", type=int, default=20)
    args = parser.parse_args(argv)
    prompts = load_prompts(corpus_path())
    print(f"{len(prompts)} prompts from {corpus_path().name}")
    asyncio.run(rules_part(prompts, min_tokens=0))
    asyncio.run(rules_part(prompts, min_tokens=200))
    asyncio.run(model_part(prompts, args.embedder, args.drop_every))
    return 0


if __name__ == "__main__":
    sys.exit(main())
