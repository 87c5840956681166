"""The shipped corpus: its shape, that the builder reproduces it, and the detector's thresholds.

Thresholds (issue 12): recall >= 99% on checksum-bearing kinds (card, IBAN, national ID) and
>= 95% overall; false-positive rate <= 1% on prompts without private data and on every distinct
text of the shipped pair set. Checked on each split separately, including the ones the rules
were not developed on.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from semcache.datasets import load_shipped_pairs
from semcache.errors import ConfigError
from semcache.privacy import default_detector, load_privacy_corpus
from semcache.privacy.corpus import SPLITS

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location(
    "privacy_measure", ROOT / "scripts" / "privacy_measure.py"
)
assert _SPEC is not None and _SPEC.loader is not None
_measure = sys.modules["privacy_measure"] = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_measure)
CHECKSUM_KINDS, covered, score, score_texts = (
    _measure.CHECKSUM_KINDS,
    _measure.covered,
    _measure.score,
    _measure.score_texts,
)
KINDS = {"email", "phone", "card", "iban", "national_id", "ip", "secret"}


@pytest.fixture(scope="module")
def detector():
    return default_detector()


def test_corpus_shape():
    rows = load_privacy_corpus()
    assert len(rows) >= 400
    assert len({row["id"] for row in rows}) == len(rows)
    assert {row["lang"] for row in rows} == {"en", "zh"}
    assert {row["split"] for row in rows} == set(SPLITS)
    positives = [row for row in rows if row["kinds"]]
    assert 0.4 <= len(positives) / len(rows) <= 0.6
    for lang in ("en", "zh"):
        present = {k for row in positives if row["lang"] == lang for k in row["kinds"]}
        assert present == KINDS, lang
    hard = {row["hard"] for row in rows if row["hard"]}
    assert {
        "luhn_fail",
        "order_number",
        "version_string",
        "phone_in_code",
        "uuid",
        "hash",
        "timestamp",
    } <= hard
    for row in rows:
        assert sorted({kind for _, _, kind in row["spans"]}) == row["kinds"], row["id"]
        for start, end, _ in row["spans"]:
            assert 0 <= start < end <= len(row["text"]), row["id"]


def test_load_rejects_unknown_split():
    with pytest.raises(ConfigError, match="split"):
        load_privacy_corpus("train")


def test_builder_reproduces_the_shipped_file(tmp_path):
    out = tmp_path / "corpus.jsonl"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_privacy_corpus.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    shipped = ROOT / "semcache" / "data" / "privacy_prompts.jsonl"
    assert out.read_text(encoding="utf-8") == shipped.read_text(encoding="utf-8")


@pytest.mark.parametrize("split", [*SPLITS, None])
def test_thresholds(detector, split):
    result = score(detector, load_privacy_corpus(split))
    assert result.recall(CHECKSUM_KINDS) >= 0.99, result.missed
    assert result.recall() >= 0.95, result.missed
    assert result.false_positive_rate <= 0.01, result.flagged


def test_false_positives_on_the_shipped_pair_set(detector):
    texts = sorted({t for pair in load_shipped_pairs() for t in (pair["text_a"], pair["text_b"])})
    result = score_texts(detector, texts)
    assert result.negatives > 400
    assert result.false_positive_rate <= 0.01, [texts[int(i)] for i in result.flagged]


def test_covered_needs_the_kind_and_every_character():
    from semcache.privacy import Finding, Kind

    findings = [Finding(Kind.EMAIL, 2, 6), Finding(Kind.PHONE, 6, 9)]
    assert covered((2, 9), "email", findings)
    assert not covered((2, 10), "email", findings)
    assert not covered((2, 6), "card", findings)
