"""Wrong answers in other scripts, and paraphrase hits with a multilingual embedder.

For each pair of ``benchmarks/data/multilingual_pairs.jsonl`` (7 languages: 65 unrelated
pairs each, 10 of them hard: same topic, different answer; 20 paraphrase pairs each; own
text): store question A's answer, ask B in the same tenant (a fresh tenant per pair); a wrong
answer is an unrelated B served A's answer, a hit is a paraphrase B served it. Runs, each
through ``SemanticCache`` with the default answer guard:

- ``minilm (baseline, no check)``: the default embedder with its readability declaration
  hidden (no readability check);
- ``defaults``: MiniLM, declared English: these questions are exact-only;
- ``defaults + fallback X``: ``semantic.fallback_embedder = X`` (routing);
- ``X as primary``: ``semantic.embedder = X``.

Thresholds: ``use-multilingual`` at 0.95 (docs/embedders.md: it "works near the usual
thresholds", the default 0.95), ``e5-small-4bit`` at 0.97 (docs: "near 0.97+"); routing is
also run at a looser threshold (``LOOSER``) to show what more paraphrase hits cost. Then, per
multilingual embedder, the raw cosine sweep over all pairs (no guard), the cost of loading
it (a fresh process each), and the per-call cost of the readability check.

    .venv/bin/python benchmarks/bench_multilingual.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import timeit
from collections import Counter
from pathlib import Path

import numpy as np

from semcache import CacheSettings, SemanticCache
from semcache.embedders import load_embedder
from semcache.embedders.readability import ENGLISH
from semcache.testing import FakeUpstream, InMemoryStore

ROWS = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "multilingual_pairs.jsonl")
    .read_text("utf-8")
    .splitlines()
]
LANGS = ("zh", "ja", "ko", "ar", "hi", "th", "ru")
THRESHOLD = {"use-multilingual": 0.95, "e5-small-4bit": 0.97}

LOOSER = {"use-multilingual": 0.85, "e5-small-4bit": 0.93}
"""Lower thresholds for the routing run, to show what serving more paraphrases costs."""

LOAD_COST = """
import sys, time
def rss():
    status = open("/proc/self/status").read().split("VmRSS:")[1]
    return int(status.split()[0]) / 1024
import numpy
from semcache.embedders import load_embedder
before, t = rss(), time.perf_counter()
e = load_embedder(sys.argv[1]); e.embed(["warm up"])
print(f"{time.perf_counter() - t:.2f} {rss() - before:.0f}")
"""


class Undeclared:
    def __init__(self, inner) -> None:
        self._inner = inner
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts):
        return self._inner.embed(texts)


def run(embedder, threshold=0.95, fallback=None, fallback_threshold=None):
    semantic = {"threshold": threshold}
    if fallback is not None:
        semantic["fallback_threshold"] = fallback_threshold
    cache = SemanticCache(
        CacheSettings(semantic=semantic, store={"backend": "edge"}),
        embedder=embedder,
        store=InMemoryStore(),
        upstream=FakeUpstream(),
        fallback_embedder=fallback,
        fallback_store=InMemoryStore() if fallback else None,
    )
    wrong, hard, hits = Counter(), Counter(), Counter()
    try:
        cache.ready()
        for i, row in enumerate(ROWS):
            ask = {"model": "gpt-4o-mini", "tenant": f"t{i}"}
            a = cache.completion(messages=[{"role": "user", "content": row["a"]}], **ask)
            cache.flush()
            b = cache.completion(messages=[{"role": "user", "content": row["b"]}], **ask)
            same = b.choices[0].message.content == a.choices[0].message.content
            if row["label"] == "unrelated":
                wrong[row["lang"]] += same
                hard[row["lang"]] += same and bool(row.get("hard"))
            else:
                hits[row["lang"]] += same
        counts = cache.stats().counts
    finally:
        cache.close()
    return wrong, hard, hits, counts


def table(title, result) -> None:
    wrong, hard, hits, counts = result
    n = Counter((r["lang"], r["label"]) for r in ROWS)
    print(
        f"{title}  (routed {counts.get('fallback_routed', 0)}, "
        f"unreadable {counts.get('unreadable', 0)})"
    )
    for lang in LANGS:
        p = n[(lang, "paraphrase")]
        print(
            f"  {lang}: wrong {wrong[lang]:>2}/{n[(lang, 'unrelated')]} (hard {hard[lang]}/10)"
            f"  paraphrase hits {hits[lang]:>2}/{p} = {hits[lang] / p:4.0%}"
        )
    total = sum(n[(lang, "paraphrase")] for lang in LANGS)
    print(
        f"  all: wrong {sum(wrong.values())}, hard {sum(hard.values())}, "
        f"hits {sum(hits.values())}/{total} = {sum(hits.values()) / total:.0%}"
    )


def sweep(name, embedder) -> None:
    a = embedder.embed([r["a"] for r in ROWS])
    b = embedder.embed([r["b"] for r in ROWS])
    sims = (a * b).sum(axis=1)
    unrelated = sims[[r["label"] == "unrelated" for r in ROWS]]
    para = sims[[r["label"] == "paraphrase" for r in ROWS]]
    print(f"{name} cosine sweep, all languages, no guard:")
    for th in (0.85, 0.9, 0.93, 0.95, 0.97, 0.98, round(float(unrelated.max()) + 0.001, 3)):
        print(
            f"  >= {th}: wrong {int((unrelated >= th).sum())}/{len(unrelated)}, "
            f"hits {int((para >= th).sum())}/{len(para)}"
        )


def main() -> None:
    minilm = load_embedder("minilm")
    table("minilm (baseline, no check)", run(Undeclared(minilm)))
    table("defaults (minilm, exact-only for these scripts)", run(minilm))
    multi = {name: load_embedder(name) for name in THRESHOLD}
    for name, embedder in multi.items():
        th = THRESHOLD[name]
        table(f"defaults + fallback {name} @ {th}", run(minilm, 0.95, embedder, th))
        table(f"{name} as primary @ {th}", run(embedder, th))
        looser = LOOSER[name]
        table(
            f"defaults + fallback {name} @ {looser} (looser)", run(minilm, 0.95, embedder, looser)
        )
    for name, embedder in multi.items():
        sweep(name, embedder)
    for name in ("minilm", *THRESHOLD):
        out = subprocess.run(
            [sys.executable, "-c", LOAD_COST, name], capture_output=True, text=True, check=True
        ).stdout.split()
        print(f"load {name} (fresh process, to first vector): {out[0]} s, +{out[1]} MiB RSS")
    texts = {"ascii": "How do I reset my password?", "zh": ROWS[0]["a"], "ru": ROWS[-1]["a"]}
    for label, text in texts.items():
        per = min(timeit.repeat(lambda t=text: ENGLISH.reads(t), number=20000, repeat=5)) / 20000
        print(f"readability check, {label} ({len(text)} chars): {per * 1e6:.2f} us per call")
    print(f"load average {os.getloadavg()} (shared, noisy 2-core machine); numpy {np.__version__}")


if __name__ == "__main__":
    main()
