"""Per-kind counts: wrong answers and paraphrases served, from the arrays and through
``semcache eval --data collisions`` and ``semcache calibrate --add-collisions``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from eval_fakes import write_jsonl

from semcache.datasets import load_collisions
from semcache.eval import cli, resolve
from semcache.eval.calibrate_cmd import with_collision_negatives
from semcache.eval.data import PairDataError, load_pairs
from semcache.eval.kinds import TOTAL, KindCounts, served_by_kind
from semcache.guard import get_verifier
from semcache.testing import FakeEmbedder


def test_served_by_kind_counts_wrong_answers_and_paraphrases() -> None:
    scores = np.array([0.99, 0.96, 0.94, -np.inf, 0.97, 0.95, 0.5])
    labels = np.array([0, 0, 0, 0, 1, 1, 1])
    kinds = ["antonym", "number", "antonym", "number", "paraphrase", "paraphrase", "paraphrase"]
    rows = {row.kind: row for row in served_by_kind(scores, labels, kinds, 0.95)}
    assert list(rows) == ["antonym", "number", "paraphrase", TOTAL]
    assert rows["antonym"] == KindCounts("antonym", 2, 1, 0, 0)
    assert rows["number"] == KindCounts("number", 2, 1, 0, 0)  # the vetoed one is not served
    assert rows["paraphrase"] == KindCounts("paraphrase", 0, 0, 3, 2)  # 0.95 is served
    assert rows[TOTAL] == KindCounts(TOTAL, 4, 2, 3, 2)
    assert rows["paraphrase"].paraphrase_share == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="lengths differ"):
        served_by_kind(scores, labels, kinds[:-1], 0.95)


def test_the_float32_score_just_under_the_threshold_is_not_served() -> None:
    rows = served_by_kind(np.array([np.float32(0.95)]), np.array([0]), ["number"], 0.95)
    assert rows[-1].wrong_served == 0  # float32 0.95 is 0.9499999; the cache compares alike


def test_shipped_sets_load_by_name_with_their_kinds(tmp_path: Path, monkeypatch) -> None:
    pairs = load_pairs("collisions")
    assert pairs.name == "collisions" and len(pairs) == len(load_collisions())
    assert pairs.kinds == [p["kind"] for p in load_collisions()]
    sample = pairs.sample(20, seed=3)
    assert sample.kinds is not None and len(sample.kinds) == 20
    assert load_pairs("pairs").kinds is not None
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "local.jsonl", [{"text_a": "a", "text_b": "b", "label": 0}])
    assert load_pairs("local.jsonl").kinds is None  # no kind column: no kinds


def test_a_kind_column_must_be_on_every_row(tmp_path: Path) -> None:
    rows = [
        {"text_a": "a", "text_b": "b", "label": 0, "kind": "antonym"},
        {"text_a": "c", "text_b": "d", "label": 1},
    ]
    with pytest.raises(PairDataError, match="line 2: field 'kind' is missing"):
        load_pairs(write_jsonl(tmp_path / "mixed.jsonl", rows))
    rows[1]["kind"] = 3
    with pytest.raises(PairDataError, match="field 'kind' must be non-empty text"):
        load_pairs(write_jsonl(tmp_path / "bad.jsonl", rows))
    blank = tmp_path / "blank.csv"
    blank.write_text("text_a,text_b,label,kind\na,b,0,\nc,d,1,\n")
    assert load_pairs(blank).kinds is None  # empty cells: no kinds
    with pytest.raises(PairDataError, match="no such file \\(shipped sets: pairs, collisions\\)"):
        load_pairs("colisions")


@pytest.fixture
def bag_of_words(monkeypatch) -> FakeEmbedder:
    """Every embedder name resolves to semcache's bag-of-words test double: texts that share
    most of their words (a long document, a template) get cosines near 1."""
    embedder = FakeEmbedder(dim=256)

    def resolve_embedder(name: str, batch_size: int, runtime: str = "auto", **_: object):
        return embedder

    monkeypatch.setattr(resolve, "resolve_embedder", resolve_embedder)
    return embedder


def _expected(embedder: FakeEmbedder, verifier_name: str, threshold: float) -> dict[str, tuple]:
    """Per kind (wrong served, paraphrases served), computed here pair by pair."""
    verifier = get_verifier(verifier_name)
    expected: dict[str, list[int]] = {}
    for pair in load_collisions():
        a, b = embedder.embed([pair["text_a"], pair["text_b"]])
        cosine = np.float32(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
        served = float(cosine) >= threshold and verifier.verify(pair["text_a"], pair["text_b"])
        counts = expected.setdefault(pair["kind"], [0, 0])
        counts[pair["label"]] += int(served)
    return {kind: tuple(counts) for kind, counts in expected.items()}


def test_eval_on_the_collision_corpus_counts_wrong_answers_per_kind(
    tmp_path: Path, bag_of_words: FakeEmbedder, capsys
) -> None:
    out = tmp_path / "out"
    argv = ["--data", "collisions", "--embedder", "bow", "--verifier", "details"]
    status = cli.eval_main([*argv, "--served-at", "0.9", "--out", str(out), "--no-plots"])
    assert status == 0
    summary = {s["verifier"]: s for s in json.loads((out / "summary.json").read_text())}
    assert set(summary) == {"none", "details"}
    for verifier, record in summary.items():
        by_kind = record["by_kind"]
        assert by_kind["threshold"] == 0.9
        got = {r["kind"]: (r["wrong_served"], r["paraphrases_served"]) for r in by_kind["kinds"]}
        expected = _expected(bag_of_words, verifier, 0.9)
        assert {k: v for k, v in got.items() if k != TOTAL} == expected
        wrong = sum(w for w, _ in expected.values())
        assert got[TOTAL] == (wrong, sum(p for _, p in expected.values()))
        negatives = sum(p["label"] == 0 for p in load_collisions())
        assert next(r for r in by_kind["kinds"] if r["kind"] == TOTAL)["negatives"] == negatives
    # the double confuses long shared documents, so there are wrong answers to count
    assert summary["none"]["by_kind"]["kinds"][0]["kind"] == "long_context"
    assert summary["none"]["by_kind"]["kinds"][0]["wrong_served"] > 0
    printed = capsys.readouterr().out
    assert "served at threshold 0.9" in printed and "wrong answers served" in printed
    assert "## Served per kind" in (out / "report.md").read_text()


def test_add_collisions_adds_the_negatives_the_embedder_reads(capsys) -> None:
    from rich.console import Console

    empty = load_pairs("collisions").take([0, 1])
    err = Console(stderr=True)
    collisions = load_collisions()
    english = with_collision_negatives(empty, ["minilm"], err)
    en_negatives = sum(p["label"] == 0 and p["lang"] == "en" for p in collisions)
    assert len(english) == 2 + en_negatives and english.labels[2:].sum() == 0
    everything = with_collision_negatives(empty, ["use-multilingual"], err)
    assert len(everything) == 2 + sum(p["label"] == 0 for p in collisions)
    assert "collision negatives" in capsys.readouterr().err


def test_calibrate_add_collisions(tmp_path: Path, bag_of_words: FakeEmbedder, capsys) -> None:
    rows = [
        {"text_a": f"question number {i}", "text_b": f"question number {i} please", "label": 1}
        for i in range(60)
    ] + [{"text_a": f"topic {i}", "text_b": f"other {i}", "label": 0} for i in range(60)]
    data = write_jsonl(tmp_path / "mine.jsonl", rows)
    argv = ["--data", str(data), "--target", "0.2", "--embedder", "bow", "--verifier", "none"]
    assert cli.calibrate_main([*argv, "--scorer", "cosine", "--add-collisions"]) in (0, 1)
    negatives = sum(p["label"] == 0 for p in load_collisions())  # 'bow' reads every script
    assert f"added {negatives} collision negatives to the 120 pairs" in capsys.readouterr().err
    labels = ["--labels", str(data), "--target", "0.2", "--add-collisions"]
    assert cli.calibrate_main(labels) == 2
    assert "--add-collisions calibrates on --data pairs" in capsys.readouterr().err
