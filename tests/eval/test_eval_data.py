"""Pair loading: the three file formats, custom columns, sampling and bad rows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from eval_fakes import write_jsonl

from semcache.errors import MissingDependency, SemcacheError
from semcache.eval.data import Columns, PairDataError, load_pairs


def test_jsonl(tmp_path: Path):
    path = write_jsonl(
        tmp_path / "set.jsonl",
        [
            {"id": "a", "text_a": "How old is Paris?", "text_b": "Age of Paris?", "label": 1},
            {"id": "b", "text_a": "Capital of France", "text_b": "Capital of Spain", "label": 0},
        ],
    )
    (tmp_path / "set.jsonl").write_text(path.read_text() + "\n\n")  # blank lines are skipped
    pairs = load_pairs(path)
    assert pairs.name == "set"
    assert pairs.text_a == ["How old is Paris?", "Capital of France"]
    assert pairs.text_b == ["Age of Paris?", "Capital of Spain"]
    assert pairs.labels.dtype == np.int8
    assert pairs.labels.tolist() == [1, 0]
    assert (len(pairs), pairs.positives, pairs.negatives) == (2, 1, 1)


def test_csv_with_quotes_and_custom_columns(tmp_path: Path):
    path = tmp_path / "q.csv"
    path.write_text('question1,question2,is_duplicate\n"Hi, you?",Hello,1\nA,B,false\n')
    pairs = load_pairs(path, columns=Columns("question1", "question2", "is_duplicate"))
    assert pairs.text_a == ["Hi, you?", "A"]
    assert pairs.labels.tolist() == [1, 0]


def test_tsv_keeps_stray_quotes(tmp_path: Path):
    path = tmp_path / "p.tsv"
    path.write_text('text_a\ttext_b\tlabel\nHe said "hi\tHe said hello\t1\n')
    pairs = load_pairs(path, name="quoted")
    assert pairs.name == "quoted"
    assert pairs.text_a == ['He said "hi']


@pytest.mark.parametrize(
    ("content", "line", "field", "problem"),
    [
        ('{"text_a": "x", "label": 1}\n', 1, "text_b", "missing"),
        (
            '{"text_a": "x", "text_b": "y", "label": 1}\n'
            '{"text_a": "x", "text_b": " ", "label": 0}\n',
            2,
            "text_b",
            "empty",
        ),
        ('{"text_a": "x", "text_b": "y", "label": 2}\n', 1, "label", "0 or 1"),
        ('{"text_a": "x", "text_b": "y", "label": "maybe"}\n', 1, "label", "0 or 1"),
        ('{"text_a": 3, "text_b": "y", "label": 1}\n', 1, "text_a", "must be text"),
        ('{"text_a": "x", "text_b": "y"}\n', 1, "label", "missing"),
        ('\n{"text_a": "x", \n', 2, None, "invalid JSON"),
        ('["x", "y", 1]\n', 1, None, "JSON object"),
    ],
)
def test_bad_jsonl_rows_name_file_line_and_field(
    tmp_path: Path, content: str, line: int, field: str | None, problem: str
):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(PairDataError) as caught:
        load_pairs(path)
    error = caught.value
    assert (error.line, error.field) == (line, field)
    assert str(path) in str(error)
    assert f"line {line}" in str(error)
    assert problem in str(error)
    assert isinstance(error, SemcacheError) and isinstance(error, ValueError)


def test_bad_csv_row_reports_its_physical_line(tmp_path: Path):
    path = tmp_path / "bad.csv"
    path.write_text("text_a,text_b,label\na,b,1\nc,d,yes\n")
    with pytest.raises(PairDataError, match=r"bad\.csv, line 3: field 'label'"):
        load_pairs(path)
    path.write_text("text_a,text_b,label\na,b,1,extra\n")
    with pytest.raises(PairDataError, match=r"line 2.*more fields"):
        load_pairs(path)


def test_unusable_sources(tmp_path: Path):
    with pytest.raises(PairDataError, match="no such file"):
        load_pairs(tmp_path / "absent.jsonl")
    (tmp_path / "x.parquet").write_text("")
    with pytest.raises(PairDataError, match="unknown format"):
        load_pairs(tmp_path / "x.parquet")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(PairDataError, match="no pairs"):
        load_pairs(tmp_path / "empty.jsonl")


def test_limit_is_a_seeded_sample_in_file_order(tmp_path: Path):
    rows = [{"text_a": f"q{i}", "text_b": f"p{i}", "label": i % 2} for i in range(100)]
    path = write_jsonl(tmp_path / "many.jsonl", rows)
    first = load_pairs(path, limit=10, seed=1)
    again = load_pairs(path, limit=10, seed=1)
    other = load_pairs(path, limit=10, seed=2)
    assert len(first) == 10
    assert first.text_a == again.text_a
    assert first.text_a != other.text_a
    numbers = [int(t[1:]) for t in first.text_a]
    assert numbers == sorted(numbers)
    assert all(f"p{n}" == b for n, b in zip(numbers, first.text_b, strict=True))
    assert first.labels.tolist() == [n % 2 for n in numbers]
    assert len(load_pairs(path, limit=1000)) == 100


@pytest.mark.skipif(importlib.util.find_spec("datasets") is not None, reason="datasets installed")
def test_hf_source_without_datasets_names_the_package():
    with pytest.raises(MissingDependency, match="pip install datasets"):
        load_pairs("hf:glue:test")
