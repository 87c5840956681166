"""Scoring a detector on labeled prompts: per-kind recall, span coverage, false positives.

Shared by ``benchmarks/bench_privacy.py`` and ``tests/privacy/test_privacy_corpus.py``, so
both report the same figures. A labeled span is *recalled* when a finding of its kind
overlaps it and the findings together cover every character of it (what redaction needs:
nothing left to leak). A prompt without labels is a *false positive* when anything at all
is found in it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from semcache.privacy.corpus import PrivacyExample
from semcache.privacy.findings import Finding, PrivateDataDetector

CHECKSUM_KINDS = ("card", "iban", "national_id")


@dataclass
class CorpusScore:
    """Counts over one set of examples; rates are derived properties."""

    spans: Counter[str] = field(default_factory=Counter)
    recalled: Counter[str] = field(default_factory=Counter)
    negatives: int = 0
    false_positives: int = 0
    false_positive_kinds: Counter[str] = field(default_factory=Counter)
    missed: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)

    def recall(self, kinds: Iterable[str] | None = None) -> float:
        chosen = list(self.spans) if kinds is None else list(kinds)
        total = sum(self.spans[k] for k in chosen)
        return sum(self.recalled[k] for k in chosen) / total if total else 1.0

    @property
    def false_positive_rate(self) -> float:
        return self.false_positives / self.negatives if self.negatives else 0.0


def covered(span: tuple[int, int], kind: str, findings: Sequence[Finding]) -> bool:
    """Whether ``findings`` recall the labeled ``span`` of ``kind`` (see module docstring)."""
    start, end = span
    if not any(f.kind.value == kind and f.start < end and start < f.end for f in findings):
        return False
    hit = [False] * (end - start)
    for finding in findings:
        for position in range(max(start, finding.start), min(end, finding.end)):
            hit[position - start] = True
    return all(hit)


def score(detector: PrivateDataDetector, examples: Iterable[PrivacyExample]) -> CorpusScore:
    """Run ``detector`` over ``examples`` and count."""
    result = CorpusScore()
    for example in examples:
        findings = list(detector.detect(example["text"]))
        if not example["kinds"]:
            result.negatives += 1
            if findings:
                result.false_positives += 1
                result.false_positive_kinds.update({f.kind.value for f in findings})
                result.flagged.append(example["id"])
            continue
        for start, end, kind in example["spans"]:
            result.spans[kind] += 1
            if covered((start, end), kind, findings):
                result.recalled[kind] += 1
            else:
                result.missed.append(f"{example['id']}:{kind}")
    return result


def score_texts(detector: PrivateDataDetector, texts: Iterable[str]) -> CorpusScore:
    """False positives over texts known to hold no private data (e.g. the shipped pair set)."""
    result = CorpusScore()
    for index, text in enumerate(texts):
        result.negatives += 1
        findings = detector.detect(text)
        if findings:
            result.false_positives += 1
            result.false_positive_kinds.update({f.kind.value for f in findings})
            result.flagged.append(str(index))
    return result
