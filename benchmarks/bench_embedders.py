"""Embedder speed and a similarity sanity check, MiniLM as the baseline of every ratio.

    HF_HUB_OFFLINE=1 python benchmarks/bench_embedders.py [--embedders minilm use-multilingual ...]

Per embedder: load time, single-text latency (median and p95 of --singles calls), batch-256
throughput (median of --repeats), 64 concurrent ``MicroBatcher.embed_one`` lookups against
64 sequential ones, and cosine of one paraphrase pair and one unrelated pair in English and
in Chinese. Numbers on a shared machine move with its load; the load average is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from semcache.embedders import Embedder, MicroBatcher, load_embedder

SUBJECTS = ["France", "a Python list", "the moon", "my router", "sourdough bread", "tax returns"]
ASKS = [
    "What is {}?",
    "How do I fix {}?",
    "Explain {} to a child.",
    "Why does {} matter?",
    "Give me three facts about {}.",
    "Where can I learn about {} this week?",
]
PAIRS = {
    "en": (
        "What is the capital of France?",
        "Tell me France's capital city",
        "My bicycle tyre keeps going flat after a day.",
    ),
    "zh": ("法国的首都是哪里？", "法国首都是什么城市？", "我的自行车轮胎一天后就没气了。"),
}


def batch_texts(n: int) -> list[str]:
    texts = [ask.format(subject) for ask in ASKS for subject in SUBJECTS]
    return [f"{texts[i % len(texts)]} (#{i})" for i in range(n)]


def timed(fn, *args) -> float:
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def cpu_timed(fn, *args) -> float:
    """CPU seconds of the whole process (all threads): less sensitive to a busy machine."""
    started = time.process_time()
    fn(*args)
    return time.process_time() - started


def single_latency(embedder: Embedder, n: int) -> tuple[float, float, float]:
    """Median and p95 wall seconds of one-text calls, and the median CPU seconds they used."""
    texts = batch_texts(n)
    times = sorted(timed(embedder.embed, [text]) for text in texts)
    cpu = statistics.median(cpu_timed(embedder.embed, [text]) for text in texts)
    return statistics.median(times), times[int(0.95 * (len(times) - 1))], cpu


def batch_throughput(embedder: Embedder, size: int, repeats: int) -> float:
    texts = batch_texts(size)
    return size / statistics.median(timed(embedder.embed, texts) for _ in range(repeats))


async def concurrent_vs_sequential(embedder: Embedder, n: int) -> tuple[float, float, int]:
    """Seconds for n lookups one after another and all at once, and the embed calls used."""
    calls: list[int] = []

    class Counting:
        name, dim = embedder.name, embedder.dim

        def embed(self, texts):
            calls.append(len(texts))
            return embedder.embed(texts)

    batcher = MicroBatcher(Counting(), max_batch=64, max_wait_ms=2.0)
    texts = batch_texts(n)
    started = time.perf_counter()
    for text in texts:
        await batcher.embed_one(text)
    sequential = time.perf_counter() - started
    calls.clear()
    started = time.perf_counter()
    await asyncio.gather(*(batcher.embed_one(text) for text in texts))
    concurrent = time.perf_counter() - started
    batcher.close()
    return sequential, concurrent, len(calls)


def similarities(embedder: Embedder) -> dict[str, tuple[float, float]]:
    result = {}
    for language, triple in PAIRS.items():
        question, paraphrase, unrelated = embedder.embed(list(triple))
        result[language] = (float(question @ paraphrase), float(question @ unrelated))
    return result


def measure(name: str, args: argparse.Namespace) -> dict[str, float]:
    embedder = load_embedder(name, device="cpu")
    load_s = timed(embedder.embed, ["warm up"])
    median, p95, cpu = single_latency(embedder, args.singles)
    throughput = batch_throughput(embedder, args.batch, args.repeats)
    sequential, concurrent, calls = asyncio.run(concurrent_vs_sequential(embedder, 64))
    sims = similarities(embedder)
    print(
        f"{name:18} dim {embedder.dim:4}  load {load_s:5.2f} s  single {median * 1e3:6.1f} ms"
        f" (p95 {p95 * 1e3:6.1f}, cpu {cpu * 1e3:6.1f})"
        f"  batch-{args.batch} {throughput:6.0f} texts/s"
        f"  64 lookups: sequential {sequential:5.2f} s, concurrent {concurrent:5.2f} s"
        f" in {calls} call(s) = {sequential / concurrent:4.1f}x"
    )
    for language, (para, unrel) in sims.items():
        print(f"{'':18} {language}: paraphrase {para:.3f}  unrelated {unrel:.3f}")
    return {"single": median, "throughput": throughput}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--embedders", nargs="+", default=["minilm", "use-multilingual", "e5-small-4bit"]
    )
    parser.add_argument("--singles", type=int, default=50)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    results = {name: measure(name, args) for name in args.embedders}
    base_name = args.embedders[0]
    base = results[base_name]
    for name, result in results.items():
        print(
            f"{name:18} vs {base_name}: single latency x{result['single'] / base['single']:.2f}, "
            f"throughput x{result['throughput'] / base['throughput']:.2f}"
        )


if __name__ == "__main__":
    main()
