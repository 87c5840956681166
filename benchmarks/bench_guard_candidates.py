"""``semantic.guard_candidates``: more hits when the guard vetoes the nearest; more wrong ones?

For each labeled pair set (semcache's shipped English pairs, and the dev sets under
``--dev-dir`` read by path, at most ``--max-pairs`` pairs each, a seeded sample), through the
real cache (default embedder all-MiniLM-L6-v2, default answer guard, ``--threshold``):

1. every distinct first question (``text_a``) is stored with ``store_many``, its answer naming it;
2. every distinct second question (``text_b``) not stored is looked up (``cache.lookup``).

A hit serves the answer of some stored question. It is **correct** when the pair (asked,
served) is labeled 1, or both are in one group (the shipped set's ``group`` fields; for the
other sets, questions joined by label-1 pairs), **wrong** when that pair is labeled 0 or the
shipped set's groups differ, and **unknown** otherwise (no label links them). Printed for
``guard_candidates = 0`` (nearest only, the rule before) and the default 3, same run, with the
load average. Asserts nothing.

    HF_HUB_OFFLINE=1 python benchmarks/bench_guard_candidates.py [--max-pairs 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from semcache import CacheHit, CacheSettings, SemanticCache

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "semcache" / "data" / "pairs.jsonl"
DEV = ROOT.parent / "shared" / "data" / "dev"
ENGLISH = (
    "en_banking77_intent_pairs_DERIVED",
    "en_redis_langcache_chatgpt_queries",
    "en_qqp_gptcache_sample",
    "en_mrpc_test",
)


class Groups:
    """Which texts one answer serves: explicit groups, else label-1 pairs joined (union-find)."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.labels: dict[frozenset[str], int] = {}
        self.explicit: dict[str, str] = {}

    def find(self, text: str) -> str:
        self.parent.setdefault(text, text)
        while self.parent[text] != text:
            self.parent[text] = self.parent[self.parent[text]]
            text = self.parent[text]
        return text

    def add(self, row: dict) -> None:
        a, b, label = row["text_a"], row["text_b"], int(row["label"])
        self.labels[frozenset((a, b))] = label
        if "group" in row and "group_b" in row:
            self.explicit[a], self.explicit[b] = row["group"], row["group_b"]
        if label == 1:
            self.parent[self.find(a)] = self.find(b)

    def verdict(self, asked: str, served: str) -> str:
        if asked == served:
            return "correct"
        label = self.labels.get(frozenset((asked, served)))
        if label is not None:
            return "correct" if label == 1 else "wrong"
        if asked in self.explicit and served in self.explicit:
            return "correct" if self.explicit[asked] == self.explicit[served] else "wrong"
        return "correct" if self.find(asked) == self.find(served) else "unknown"


def load(path: Path, max_pairs: int, seed: int) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("lang", "en") == "en"]
    random.Random(seed).shuffle(rows)
    return rows[:max_pairs]


def run(rows: list[dict], guard_candidates: int, threshold: float) -> Counter[str]:
    groups = Groups()
    for row in rows:
        groups.add(row)
    firsts = list(dict.fromkeys(r["text_a"] for r in rows))
    stored = set(firsts)
    asks = [t for t in dict.fromkeys(r["text_b"] for r in rows) if t not in stored]
    out: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        settings = CacheSettings(
            semantic={"threshold": threshold, "guard_candidates": guard_candidates},
            store={"path": tmp},
        )
        with SemanticCache(settings) as cache:
            assert cache.ready()
            items = [{"prompt": q, "response": f"#{i}"} for i, q in enumerate(firsts)]
            report = cache.store_many(items, model="gpt-4o-mini")
            assert report.ok, report.failed
            for question in asks:
                found = cache.lookup(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
                )
                out["asked"] += 1
                if isinstance(found, CacheHit):
                    served = firsts[int(found.response.choices[0].message.content[1:])]
                    out["hits"] += 1
                    out[groups.verdict(question, served)] += 1
            out["next_hits"] = cache.stats().counts.get("verifier_next_hits", 0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dev-dir", type=Path, default=DEV)
    parser.add_argument("--max-pairs", type=int, default=2000)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sets = {"shipped (en)": SHIPPED}
    sets |= {
        n: args.dev_dir / f"{n}.jsonl" for n in ENGLISH if (args.dev_dir / f"{n}.jsonl").exists()
    }
    started = time.perf_counter()
    print(f"threshold {args.threshold}, default guard, MiniLM; load avg {os.getloadavg()}")
    header = ("set", "k", "asked", "hits", "correct", "wrong", "unknown", "via next")
    print(f"{header[0]:40} " + " ".join(f"{h:>7}" for h in header[1:]))
    for name, path in sets.items():
        rows = load(path, args.max_pairs, args.seed)
        for k in (0, 3):
            c = run(rows, k, args.threshold)
            cells = (
                k,
                c["asked"],
                c["hits"],
                c["correct"],
                c["wrong"],
                c["unknown"],
                c["next_hits"],
            )
            print(f"{name:40} " + " ".join(f"{v:>7}" for v in cells), flush=True)
    print(f"{time.perf_counter() - started:.0f} s; load avg {os.getloadavg()}")


if __name__ == "__main__":
    main()
