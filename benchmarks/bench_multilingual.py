"""Wrong answers in other scripts, and paraphrase hits with a multilingual embedder.

For each pair of ``benchmarks/data/multilingual_pairs.jsonl`` (7 languages, 55 unrelated and
5 paraphrase pairs each, own text): store question A's answer, ask B in the same tenant; a
wrong answer is an unrelated B served A's answer, a hit is a paraphrase B served it. Runs:
the default embedder (MiniLM) with its readability declaration, the same embedder with the
declaration hidden (the baseline: the cache before this check), and each multilingual
embedder. Then the per-call cost of the readability check.

    .venv/bin/python benchmarks/bench_multilingual.py
"""

from __future__ import annotations

import json
import os
import timeit
from collections import Counter
from pathlib import Path

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


class Undeclared:
    def __init__(self, inner) -> None:
        self._inner = inner
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts):
        return self._inner.embed(texts)


def run(embedder) -> tuple[Counter, Counter]:
    cache = SemanticCache(
        CacheSettings(store={"backend": "edge"}), embedder=embedder, store=InMemoryStore(),
        upstream=FakeUpstream(),
    )  # fmt: skip
    wrong, hits = Counter(), Counter()
    try:
        for i, row in enumerate(ROWS):
            ask = {"model": "gpt-4o-mini", "tenant": f"t{i}"}
            a = cache.completion(messages=[{"role": "user", "content": row["a"]}], **ask)
            cache.flush()
            b = cache.completion(messages=[{"role": "user", "content": row["b"]}], **ask)
            same = b.choices[0].message.content == a.choices[0].message.content
            (wrong if row["label"] == "unrelated" else hits)[row["lang"]] += same
    finally:
        cache.close()
    return wrong, hits


def main() -> None:
    langs = sorted({r["lang"] for r in ROWS})
    n = Counter((r["lang"], r["label"]) for r in ROWS)
    minilm = load_embedder("minilm")
    runs = {"minilm (baseline, no check)": Undeclared(minilm), "minilm (default)": minilm}
    for name in ("use-multilingual", "e5-small-4bit"):
        runs[name] = load_embedder(name)
    for title, embedder in runs.items():
        wrong, hits = run(embedder)
        print(f"{title}:")
        for lang in langs:
            print(
                f"  {lang}: wrong {wrong[lang]}/{n[(lang, 'unrelated')]}, "
                f"paraphrase hits {hits[lang]}/{n[(lang, 'paraphrase')]}"
            )
        print(f"  total wrong {sum(wrong.values())}, hits {sum(hits.values())}")
    texts = {"ascii": "How do I reset my password?", "zh": ROWS[0]["a"], "ru": ROWS[-1]["a"]}
    for label, text in texts.items():
        per = min(timeit.repeat(lambda t=text: ENGLISH.reads(t), number=20000, repeat=5)) / 20000
        print(f"readability check, {label} ({len(text)} chars): {per * 1e6:.2f} us per call")
    print(f"load average {os.getloadavg()[0]:.2f} (shared, noisy machine)")


if __name__ == "__main__":
    main()
