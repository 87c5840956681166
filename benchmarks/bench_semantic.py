"""Semantic-tier benchmark (not a test): store lookups, end-to-end hits vs GPTCache, batching.

Four parts, all in one run on the same machine so that ratios compare like with like:

``stores``       filtered lookup latency (tenant AND namespace AND scope AND not expired) of
                 the edge store (after ``optimize()``) and qdrant-client local mode, on random
                 unit vectors at each ``--sizes`` point. Local mode evaluates filters in Python,
                 so its query count is capped at 100k (``--client-queries-large``).
``e2e``          a semantic hit end to end (embed the question, search, decode the stored
                 response JSON) against GPTCache 0.1.44 (sqlite + faiss) with the same
                 embedding function, at ``--e2e-entries`` entries. GPTCache is filled through
                 its data manager's ``import_data`` with the precomputed embeddings.
``concurrency``  lookups per second of 64 concurrent callers sharing a MicroBatcher vs one
                 caller at a time, beside the embedder's own gain from batching (a batch of
                 64 vs one text, per text; no batcher, no store): no batcher can beat that.

                 ``e2e`` and ``concurrency`` run once per MiniLM runtime (``--runtime``,
                 default ``auto``, what the cache runs by default): runtimes pull against each
                 other, since the faster one question embeds alone, the less batching has
                 left to add. The embedder gets the cache's default ``cpu_threads``.
``serving``      lookups answered while the edge store optimises (``--serving-size`` points):
                 semcache's out-of-process cycle vs calling ``EdgeShard.optimize()`` in a
                 thread of the serving process (the naive design it replaces).

Questions come from a paraphrase pair file read by path (``--pairs``, default the QQP sample
in ../shared/data/dev beside the repository); without it, templated synthetic questions are used.

    .venv/bin/python benchmarks/bench_semantic.py                       # everything
    .venv/bin/python benchmarks/bench_semantic.py --sizes 1000,10000 --parts stores
    .venv/bin/python benchmarks/bench_semantic.py --quick               # ~1 minute subset
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

from semcache.stores import NEVER_EXPIRES, Entry, Match, QdrantEdgeStore, QdrantStore, Where

DEFAULT_PAIRS = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "dev" / "en_qqp_gptcache_sample.jsonl"
)
NOW = 1_700_000_000.0
TENANTS, SCOPES = 10, 3
RESPONSE_TEMPLATE = {
    "id": "chatcmpl-bench",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": ""},
        }
    ],
    "usage": {"prompt_tokens": 14, "completion_tokens": 120, "total_tokens": 134},
}


# -- reporting ---------------------------------------------------------------------------


@dataclass
class Report:
    rows: list[tuple[str, str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, metric: str, ours: str, baseline: str = "", ratio: str = "") -> None:
        self.rows.append((metric, ours, baseline, ratio))
        print(f"  {metric}: {ours}" + (f" | baseline {baseline} | ratio {ratio}" if ratio else ""))

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}")

    def print(self) -> None:
        header = ("metric", "semcache", "baseline", "ratio")
        widths = [max(len(r[i]) for r in [header, *self.rows]) for i in range(4)]
        line = "  ".join(f"{{:<{w}}}" for w in widths)
        print("\n" + line.format(*header))
        print(line.format(*("-" * w for w in widths)))
        for row in self.rows:
            print(line.format(*row))
        for text in self.notes:
            print(f"* {text}")


def percentiles(seconds: Sequence[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    values = np.asarray(seconds) * 1000.0
    return float(np.percentile(values, 50)), float(np.percentile(values, 99))


def fmt(p50: float, p99: float) -> str:
    return f"p50 {p50:.3f} ms, p99 {p99:.3f} ms"


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


# -- data --------------------------------------------------------------------------------


def response_json(answer: str) -> str:
    body = json.loads(json.dumps(RESPONSE_TEMPLATE))
    body["choices"][0]["message"]["content"] = answer
    return json.dumps(body)


def load_questions(path: Path, entries: int, queries: int) -> tuple[list[str], list[str], str]:
    """Stored questions and paraphrased queries whose original is stored."""
    if path.exists():
        stored: dict[str, None] = {}
        paraphrases: list[tuple[str, str]] = []
        with path.open() as handle:
            for line in handle:
                pair = json.loads(line)
                if len(stored) < entries:
                    stored.setdefault(pair["text_a"])
                if pair["label"] == 1:
                    paraphrases.append((pair["text_a"], pair["text_b"]))
        questions = list(stored)
        asked = [b for a, b in paraphrases if a in stored and b not in stored][:queries]
        if len(questions) >= entries and asked:
            return questions, asked, f"{path.name} (read by path)"
    topics = [f"topic {i}" for i in range(entries)]
    questions = [f"What is the best way to learn about {t} as a beginner?" for t in topics]
    asked = [f"How should a beginner start learning {t}?" for t in topics[:queries]]
    return questions, asked, "synthetic templated questions (pair file not found)"


def random_units(count: int, dim: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def synthetic_entries(start: int, vectors: np.ndarray) -> list[Entry]:
    entries = []
    for offset, vector in enumerate(vectors):
        i = start + offset
        expired = i % 7 == 0
        entries.append(
            Entry(
                key=f"key-{i}",
                tenant=f"t{i % TENANTS}",
                namespace="default",
                model="gpt-4o-mini",
                scope=f"s{i % SCOPES}",
                response='{"choices": [{"message": {"content": "x"}}]}',
                created_at=NOW - i,
                expires_at=NOW - 1 if expired else NEVER_EXPIRES,
                embedder="random",
                question=None,
                vector=vector,
            )
        )
    return entries


def load_embedder(args: argparse.Namespace, report: Report, runtime: str) -> Any:
    from semcache.config.settings import SemanticSettings
    from semcache.embedders import load_embedder as by_name

    threads = SemanticSettings().cpu_threads  # what the cache gives its embedder by default
    embedder = by_name(
        "minilm", device="cpu", precision=args.precision, runtime=runtime, threads=threads
    )
    embedder.embed(["warm up"])
    report.note(
        f"embedder: MiniLM, runtime {runtime} ({type(embedder).__name__}), precision "
        f"{args.precision}, {threads} thread(s) (GPTCache is given the same embedder)"
    )
    return embedder


# -- part 1: store lookups ---------------------------------------------------------------


def lookup_latencies(store: Any, queries: np.ndarray) -> list[float]:
    seconds = []
    for i, vector in enumerate(queries):
        elapsed, _ = timed(
            lambda v=vector, i=i: store.nearest(  # the nearest, always: the full cost of a hit
                v, Where(f"t{i % TENANTS}", "default", f"s{i % SCOPES}", "random", NOW)
            )
        )
        seconds.append(elapsed)
    return seconds


def bench_stores(args: argparse.Namespace, report: Report) -> None:
    print(
        "\n== store lookups (filtered by tenant, namespace, scope, expiry; dim "
        f"{args.dim}, random unit vectors, {TENANTS} tenants x {SCOPES} scopes, 1/7 expired)"
    )
    sizes = sorted(args.sizes)
    edge = QdrantEdgeStore(":memory:", optimize_every=None)
    client = QdrantStore(location=":memory:")
    edge.setup("random", args.dim)
    client.setup("random", args.dim)
    queries = random_units(args.queries, args.dim, seed=99)
    stored = 0
    try:
        for size in sizes:
            vectors = random_units(size - stored, args.dim, seed=size)
            for begin in range(0, len(vectors), 2000):
                batch = synthetic_entries(stored + begin, vectors[begin : begin + 2000])
                edge.upsert(batch)
                client.upsert(batch)
            stored = size
            before = percentiles(lookup_latencies(edge, queries[: min(50, args.queries)]))
            optimise_s, changed = timed(edge.optimize)
            edge_lat = percentiles(lookup_latencies(edge, queries))
            cap = args.queries if size < 50_000 else min(args.queries, args.client_queries_large)
            client_lat = percentiles(lookup_latencies(client, queries[:cap]))
            report.add(
                f"lookup @{size:,} edge (after optimize)",
                fmt(*edge_lat),
                f"qdrant-client local: {fmt(*client_lat)} ({cap} q)",
                f"{edge_lat[0] / client_lat[0]:.4f}",
            )
            report.add(
                f"  edge @{size:,} before optimize / optimize()",
                f"p50 {before[0]:.3f} ms / {optimise_s:.1f} s "
                + ("(HNSW built, swapped)" if changed else "(nothing to index)"),
            )
    finally:
        edge.close()
        client.close()


def serve_during(
    work: Callable[[], Any], store: Any, queries: np.ndarray
) -> tuple[list[float], float, float]:
    """Lookups at a caller's pace (every 2 ms) while ``work`` runs in a thread.

    Returns the lookup latencies, how long ``work`` ran, and the longest stretch without
    an answer (a lookup that cannot even start, because the GIL is held, shows up there).
    """
    thread = threading.Thread(target=work)
    begun = time.perf_counter()
    thread.start()
    seconds: list[float] = []
    answered_at = [begun]
    while thread.is_alive():
        seconds += lookup_latencies(store, queries[len(seconds) % len(queries)][None, :])
        answered_at.append(time.perf_counter())
        time.sleep(0.002)
    thread.join()
    ended = time.perf_counter()
    return seconds, ended - begun, float(np.diff([*answered_at, ended]).max())


def bench_serving(args: argparse.Namespace, report: Report) -> None:
    n = args.serving_size
    print(f"\n== lookups while optimising {n:,} points (dim {args.dim})")
    vectors = random_units(n, args.dim, seed=7)
    queries = random_units(200, args.dim, seed=8)
    results = {}
    for design in ("semcache", "naive"):
        store = QdrantEdgeStore(":memory:", hnsw_threshold=n // 2, optimize_every=None)
        store.setup("random", args.dim)
        for begin in range(0, n, 2000):
            store.upsert(synthetic_entries(begin, vectors[begin : begin + 2000]))
        # naive: the engine's optimize() in a thread of this process (private handle on purpose)
        work = store.optimize if design == "semcache" else store._shard.optimize
        results[design] = serve_during(work, store, queries)
        store.close()
    for design, (seconds, took, stall) in results.items():
        p50, p99 = percentiles(seconds)
        report.add(
            f"lookups during optimize @{n:,}: {design}",
            f"{len(seconds)} answered in {took:.1f} s (p50 {p50:.2f} ms, p99 {p99:.1f} ms), "
            f"longest wait {stall * 1000:.0f} ms",
        )


@dataclass
class Corpus:
    """Stored questions with their vectors and response JSON, and paraphrased queries."""

    embedder: Any
    runtime: str
    questions: list[str]
    asked: list[str]
    vectors: np.ndarray
    responses: list[str]


def embed_corpus(args: argparse.Namespace, report: Report, runtime: str) -> Corpus:
    embedder = load_embedder(args, report, runtime)
    questions, asked, source = load_questions(args.pairs, args.e2e_entries, args.e2e_queries)
    report.note(f"questions: {source}")
    took, vectors = timed(lambda: embedder.embed(questions))
    report.note(
        f"embedding {len(questions):,} stored questions took {took:.1f} s "
        f"({len(questions) / took:.0f} texts/s, {runtime})"
    )
    responses = [response_json(f"Answer to: {q}") for q in questions]
    return Corpus(embedder, runtime, questions, asked, vectors, responses)


def filled_store(corpus: Corpus, count: int) -> QdrantEdgeStore:
    store = QdrantEdgeStore(":memory:", optimize_every=None)
    store.setup(corpus.embedder.name, corpus.vectors.shape[1])
    entries = [
        Entry(
            key=f"q{i}",
            tenant="t1",
            namespace="default",
            model="gpt-4o-mini",
            scope="s1",
            response=corpus.responses[i],
            created_at=NOW,
            expires_at=NEVER_EXPIRES,
            embedder=corpus.embedder.name,
            question=corpus.questions[i],
            vector=corpus.vectors[i],
        )
        for i in range(count)
    ]
    for begin in range(0, count, 2000):
        store.upsert(entries[begin : begin + 2000])
    store.optimize()
    return store


def corpus_where(corpus: Corpus) -> Where:
    """The partition ``filled_store`` puts every entry in."""
    return Where("t1", "default", "s1", corpus.embedder.name, NOW)


def hit_rule(threshold: float) -> Callable[[Match | None], bool]:
    """The semantic tier's rule: a hit when the nearest is at least ``threshold`` similar."""
    return lambda match: match is not None and match.similarity >= threshold


# -- part 2: end-to-end semantic hit vs GPTCache -------------------------------------------


def build_gptcache(
    directory: Path,
    questions: list[str],
    responses: list[str],
    vectors: np.ndarray,
    embed_one: Callable[[str], np.ndarray],
    threshold: float,
) -> Any:
    from gptcache import Cache, Config
    from gptcache.manager import CacheBase, VectorBase, get_data_manager
    from gptcache.processor.pre import get_prompt
    from gptcache.similarity_evaluation.distance import SearchDistanceEvaluation

    manager = get_data_manager(
        CacheBase("sqlite", sql_url=f"sqlite:///{directory / 'cache.db'}"),
        VectorBase("faiss", dimension=vectors.shape[1], index_path=str(directory / "faiss.index")),
        max_size=len(questions) + 1,  # its default (1000) would silently evict most entries
    )
    for begin in range(0, len(questions), 1000):
        end = begin + 1000
        manager.import_data(
            questions[begin:end],
            responses[begin:end],
            list(vectors[begin:end]),
            [None] * len(questions[begin:end]),
        )
    cache = Cache()
    # faiss returns squared L2; on unit vectors that is 2 - 2cos, so with max_distance=2
    # GPTCache's score is 2cos and similarity_threshold t means cosine >= t, as in semcache.
    cache.init(
        pre_embedding_func=get_prompt,
        embedding_func=lambda text, **_: embed_one(text),
        data_manager=manager,
        similarity_evaluation=SearchDistanceEvaluation(max_distance=2.0),
        config=Config(similarity_threshold=threshold),
    )
    return cache


def bench_end_to_end(args: argparse.Namespace, report: Report, corpus: Corpus) -> None:
    from gptcache.adapter.api import get as gptcache_get

    embedder, questions, asked = corpus.embedder, corpus.questions, corpus.asked
    vectors, responses, n = corpus.vectors, corpus.responses, len(corpus.questions)
    print(
        f"\n== end-to-end semantic hit at {n:,} entries ({len(asked)} paraphrased queries, "
        f"threshold {args.threshold})"
    )
    store = filled_store(corpus, n)
    where = corpus_where(corpus)
    is_hit = hit_rule(args.threshold)
    query_vectors = embedder.embed(asked)
    precomputed = {text: vector for text, vector in zip(asked, query_vectors, strict=True)}

    def embed_one(text: str) -> np.ndarray:
        return embedder.embed([text])[0]

    def semcache_lookup(vector: np.ndarray) -> dict | None:
        match = store.nearest(vector, where)
        return json.loads(match.entry.response) if is_hit(match) else None

    live_dir, pre_dir = tempfile.mkdtemp(), tempfile.mkdtemp()
    for directory in (live_dir, pre_dir):  # after GPTCache's own exit hook flushes into it
        atexit.register(shutil.rmtree, directory, True)
    build_s, live = timed(
        lambda: build_gptcache(
            Path(live_dir), questions, responses, vectors, embed_one, args.threshold
        )
    )
    report.note(f"GPTCache filled with {n:,} entries via import_data in {build_s:.1f} s")
    pre = build_gptcache(
        Path(pre_dir), questions, responses, vectors, precomputed.__getitem__, args.threshold
    )
    timings: dict[str, list[float]] = {
        k: [] for k in ("ours", "theirs", "ours_pre", "theirs_pre", "embed")
    }
    hits = {"ours": 0, "theirs": 0}
    for text in asked[:3]:  # warm-up
        semcache_lookup(embed_one(text))
        gptcache_get(text, cache_obj=live)
        gptcache_get(text, cache_obj=pre)
    for text in asked:
        t, found = timed(lambda t=text: semcache_lookup(embed_one(t)))
        timings["ours"].append(t)
        hits["ours"] += found is not None
        t, answer = timed(lambda t=text: gptcache_get(t, cache_obj=live))
        timings["theirs"].append(t)
        if answer is not None:
            json.loads(answer)  # decode, as semcache does
            hits["theirs"] += 1
        timings["embed"].append(timed(lambda t=text: embed_one(t))[0])
        timings["ours_pre"].append(timed(lambda t=text: semcache_lookup(precomputed[t]))[0])
        timings["theirs_pre"].append(timed(lambda t=text: gptcache_get(t, cache_obj=pre))[0])
    store.close()
    ours, theirs = percentiles(timings["ours"]), percentiles(timings["theirs"])
    report.add(
        f"e2e semantic hit @{n:,} (embed+search+decode) [{corpus.runtime}]",
        fmt(*ours),
        f"GPTCache get: {fmt(*theirs)}",
        f"{ours[0] / theirs[0]:.2f}",
    )
    ours_pre, theirs_pre = percentiles(timings["ours_pre"]), percentiles(timings["theirs_pre"])
    report.add(
        f"  same, embedding excluded @{n:,}",
        fmt(*ours_pre),
        f"GPTCache get: {fmt(*theirs_pre)}",
        f"{ours_pre[0] / theirs_pre[0]:.3f}",
    )
    report.add("  embedding one question alone", fmt(*percentiles(timings["embed"])))
    report.add(
        "  hits (same threshold)",
        f"{hits['ours']}/{len(asked)}",
        f"GPTCache: {hits['theirs']}/{len(asked)}",
    )


# -- part 3: concurrency with micro-batching -----------------------------------------------


def bench_concurrency(args: argparse.Namespace, report: Report, corpus: Corpus) -> None:
    """Rounds alternate the two modes, so that load from other processes hits both alike."""
    try:
        from semcache.embedders import MicroBatcher
    except ImportError:
        report.note("MicroBatcher not available: concurrency part skipped")
        return
    embedder, asked, total = corpus.embedder, corpus.asked, args.concurrent_lookups
    texts = [asked[i % len(asked)] for i in range(total)]
    one_by_one = texts[: args.sequential_lookups]
    print(
        f"\n== lookups/s, {args.rounds} rounds of: {total} lookups by {args.callers} concurrent "
        f"callers (micro-batched), then {len(one_by_one)} lookups one at a time"
    )
    store = filled_store(corpus, min(len(corpus.questions), 2000))
    where = corpus_where(corpus)
    is_hit = hit_rule(args.threshold)

    def finish(vector: np.ndarray) -> None:
        match = store.nearest(vector, where)
        if is_hit(match):
            json.loads(match.entry.response)

    def sequential() -> float:
        started = time.perf_counter()
        for text in one_by_one:
            finish(embedder.embed([text])[0])
        return len(one_by_one) / (time.perf_counter() - started)

    async def concurrent() -> float:
        batcher = MicroBatcher(embedder, max_batch=64, max_wait_ms=2.0)
        queue: asyncio.Queue[str] = asyncio.Queue()
        for text in texts:
            queue.put_nowait(text)

        async def caller() -> None:
            while not queue.empty():
                finish(await batcher.embed_one(queue.get_nowait()))

        begun = time.perf_counter()
        await asyncio.gather(*(caller() for _ in range(args.callers)))
        elapsed = time.perf_counter() - begun
        batcher.close()
        return total / elapsed

    def embedder_alone() -> float:
        """The embedder's own gain from batching, no batcher or store: the ratio's ceiling."""
        sample = texts[: args.callers * 4]
        started = time.perf_counter()
        for text in sample[: len(one_by_one)]:
            embedder.embed([text])
        single = (time.perf_counter() - started) / min(len(sample), len(one_by_one))
        started = time.perf_counter()
        for start in range(0, len(sample), args.callers):
            embedder.embed(sample[start : start + args.callers])
        return single / ((time.perf_counter() - started) / len(sample))

    rounds, ceilings = [], []
    for _ in range(args.rounds):
        batched = asyncio.run(concurrent())
        rounds.append((batched, sequential()))
        ceilings.append(embedder_alone())
        print(
            f"  round: {batched:.0f}/s batched, {rounds[-1][1]:.0f}/s one at a time; "
            f"embedder alone: batches of {args.callers} {ceilings[-1]:.1f}x faster per text"
        )
    store.close()
    batched = statistics.median(r[0] for r in rounds)
    single = statistics.median(r[1] for r in rounds)
    ratio = statistics.median(r[0] / r[1] for r in rounds)
    report.add(
        f"lookups/s, {args.callers} callers + MicroBatcher, median of {args.rounds} "
        f"[{corpus.runtime}]",
        f"{batched:.0f}/s",
        f"one at a time: {single:.0f}/s",
        f"{ratio:.1f}x",
    )
    report.add(
        f"embedder alone: per text in batches of {args.callers} vs one at a time, median of "
        f"{args.rounds} [{corpus.runtime}] (the ceiling of the ratio above)",
        "",
        "",
        f"{statistics.median(ceilings):.1f}x",
    )


# -- main --------------------------------------------------------------------------------


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--parts",
        default="stores,serving,e2e,concurrency",
        help="comma list of: stores, serving, e2e, concurrency",
    )
    parser.add_argument(
        "--sizes", default="1000,10000,100000", type=lambda s: [int(x) for x in s.split(",")]
    )
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--serving-size", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=300, help="lookups per size and store")
    parser.add_argument(
        "--client-queries-large",
        type=int,
        default=10,
        help="lookup cap for qdrant-client local mode at >= 50k entries",
    )
    parser.add_argument("--e2e-entries", type=int, default=10_000)
    parser.add_argument("--e2e-queries", type=int, default=200)
    parser.add_argument("--threshold", type=float, default=0.8, help="cosine, hit when >=")
    parser.add_argument("--callers", type=int, default=64)
    parser.add_argument("--concurrent-lookups", type=int, default=640)
    parser.add_argument("--rounds", type=int, default=3, help="concurrency rounds")
    parser.add_argument(
        "--sequential-lookups", type=int, default=100, help="lookups timed one at a time"
    )
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    parser.add_argument(
        "--precision",
        default="auto",
        choices=["auto", "float32", "bfloat16", "int8"],
        help="MiniLM precision for e2e and concurrency (auto: float32 on the CPU)",
    )
    parser.add_argument(
        "--runtime",
        default="auto",
        type=lambda text: text.split(","),
        help="comma list of MiniLM runtimes for e2e and concurrency, each measured in turn "
        "(auto: the cache's default, ONNX Runtime when installed; torch; onnx)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="sizes 1000,10000; 2,000 e2e entries; 100 queries"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.e2e_entries, args.e2e_queries, args.queries = [1000, 10000], 2000, 100, 100
        args.concurrent_lookups, args.serving_size, args.sequential_lookups = 320, 10_000, 64
    args.parts = set(args.parts.split(","))
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    report = Report()
    report.note(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    if "stores" in args.parts:
        bench_stores(args, report)
    if "serving" in args.parts:
        bench_serving(args, report)
    for runtime in args.runtime if args.parts & {"e2e", "concurrency"} else ():
        print(f"\n#### MiniLM runtime: {runtime}")
        corpus = embed_corpus(args, report, runtime)
        if "e2e" in args.parts:
            bench_end_to_end(args, report, corpus)
        if "concurrency" in args.parts:
            bench_concurrency(args, report, corpus)
    report.note(f"load average {os.getloadavg()[0]:.1f} at end")
    report.print()


if __name__ == "__main__":
    main()
