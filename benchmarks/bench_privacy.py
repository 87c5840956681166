"""The private-data detector on the shipped corpus: per-kind recall, false positives, cost.

    python benchmarks/bench_privacy.py [--reseed 5] [--show-misses]

For each split of ``semcache/data/privacy_prompts.jsonl`` (``dev``: the rules were developed
on it; ``heldout``: a second batch, whose first run led to three rule fixes; ``fresh``: a third
batch never tuned on) it prints, per kind, the labeled spans and the share recalled (a finding
of that kind overlaps the span and the findings cover all of it), the recall over the
checksum-bearing kinds (card, IBAN, national ID) and over all kinds, and the false-positive rate
on the prompts without private data. Then the false-positive rate on every distinct text of the
shipped pair set ``semcache/data/pairs.jsonl``, and the same corpus templates refilled with
``--reseed`` other seeds (new generated values, same phrasings). The baseline for cost is a
plain ``str.lower()`` pass over the same texts in the same run (a floor, not a competitor).
Asserts nothing; the thresholds live in tests/privacy/test_privacy_corpus.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from semcache.datasets import load_shipped_pairs
from semcache.privacy import default_detector, load_privacy_corpus
from semcache.privacy.corpus import SPLITS, PrivacyExample
from semcache.privacy.findings import Kind, PrivateDataDetector

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from privacy_measure import CHECKSUM_KINDS, CorpusScore, score, score_texts  # noqa: E402

KINDS = [kind.value for kind in Kind if kind is not Kind.CUSTOM]


def table(name: str, result: CorpusScore) -> None:
    cells = [f"{result.recalled[k]}/{result.spans[k]}" for k in KINDS]
    print(
        f"{name:<14}"
        + "".join(f"{c:>12}" for c in cells)
        + f"{result.recall(CHECKSUM_KINDS):>11.1%}{result.recall():>9.1%}"
        + f"{result.false_positives:>6}/{result.negatives:<4}{result.false_positive_rate:>7.1%}"
    )


def header() -> None:
    print(
        f"{'set':<14}"
        + "".join(f"{k:>12}" for k in KINDS)
        + f"{'checksum':>11}{'overall':>9}{'FP':>11}{'FPR':>7}"
    )


def reseeded(detector: PrivateDataDetector, rounds: int) -> CorpusScore:
    import build_privacy_corpus as builder  # a script, not a package: imported by path

    base = dict(builder.SEEDS)
    total = CorpusScore()
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(1, rounds + 1):
            builder.SEEDS.update({split: seed + 7919 * round_ for split, seed in base.items()})
            out = Path(tmp) / f"round{round_}.jsonl"
            builder.main(["--out", str(out)])
            rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
            result = score(detector, rows)
            texts = {row["id"]: row["text"] for row in rows}
            result.missed = [f"{m}  {texts[m.split(':')[0]]!r}" for m in result.missed]
            result.flagged = [f"{i}  {texts[i]!r}" for i in result.flagged]
            total.spans.update(result.spans)
            total.recalled.update(result.recalled)
            total.negatives += result.negatives
            total.false_positives += result.false_positives
            total.missed.extend(result.missed)
            total.flagged.extend(result.flagged)
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reseed", type=int, default=5, help="extra seeds to refill templates")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    detector = default_detector()
    detector.detect("warm up: +1 415-555-2671 a@b.io 4111111111111111 8.8.8.8")

    header()
    everything: list[PrivacyExample] = []
    for split in SPLITS:
        rows = load_privacy_corpus(split)
        everything.extend(rows)
        result = score(detector, rows)
        table(split, result)
        if args.show_misses:
            for item in result.missed + [f"FP {i}" for i in result.flagged]:
                print("    ", item)
    table("all", score(detector, everything))

    texts = sorted({t for p in load_shipped_pairs() for t in (p["text_a"], p["text_b"])})
    pairs = score_texts(detector, texts)
    print(
        f"\npairs.jsonl: {pairs.false_positives}/{pairs.negatives} distinct texts flagged "
        f"(FPR {pairs.false_positive_rate:.2%})"
    )

    if args.reseed:
        result = reseeded(detector, args.reseed)
        print(f"\ntemplates refilled with {args.reseed} other seed sets:")
        header()
        table("reseeded", result)
        if args.show_misses:
            for item in result.missed + [f"FP {i}" for i in result.flagged]:
                print("    ", item)

    corpus_texts = [row["text"] for row in everything] + texts
    start = time.perf_counter()
    for text in corpus_texts:
        text.lower()
    floor = time.perf_counter() - start
    start = time.perf_counter()
    for text in corpus_texts:
        detector.detect(text)
    elapsed = time.perf_counter() - start
    per_text = elapsed / len(corpus_texts) * 1e3
    print(
        f"\ncost: {per_text:.3f} ms per text over {len(corpus_texts)} texts "
        f"({elapsed / max(floor, 1e-9):.0f}x a str.lower() pass)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
