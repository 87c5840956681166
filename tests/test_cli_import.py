"""``semcache import FILE.jsonl``: bulk load with progress, one-line errors, a summary."""

from __future__ import annotations

import json

import pytest

from semcache import cli


def _exit_status(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exc:  # argparse exits for usage errors
        return int(exc.code)


@pytest.fixture
def deployment(monkeypatch, tmp_path):
    from semcache.embedders import registry
    from semcache.testing import FakeEmbedder

    monkeypatch.setitem(registry._NAMED, "minilm", lambda *args: FakeEmbedder())
    monkeypatch.setenv("SEMCACHE_STORE__PATH", str(tmp_path / "store"))
    return tmp_path


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_import_stores_every_line_and_reports(deployment, capsys):
    rows = [json.dumps({"prompt": f"question {i}?", "response": f"answer {i}"}) for i in range(30)]
    rows.append(json.dumps({"prompt": "kept out?", "response": "x", "cache": {"no-store": True}}))
    path = _write(deployment / "pairs.jsonl", [*rows, ""])
    assert _exit_status(["import", str(path), "--model", "m", "--chunk", "10"]) == 0
    out = capsys.readouterr()
    assert "semcache import: 30 written, 1 skipped by the policy, 0 failed, of 31" in out.out
    assert "semcache import: 10/31" in out.err and "semcache import: 31/31" in out.err
    from semcache import CacheSettings, SemanticCache

    with SemanticCache(CacheSettings()) as cache:  # a restart: the store has them
        assert cache.ready()
        hit = cache.check("question 7?", model="m")
    assert hit is not None and hit.text == "answer 7"


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "pairs.jsonl:2: not JSON"),
        ("[1, 2]", "pairs.jsonl:2: expected a JSON object"),
        ('{"prompt": "no answer?"}', "items[1].response: missing"),
    ],
)
def test_a_bad_line_is_one_error_and_stores_nothing(deployment, capsys, line, needle):
    good = json.dumps({"prompt": "fine?", "response": "yes"})
    path = _write(deployment / "pairs.jsonl", [good, line])
    assert _exit_status(["import", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("semcache import: error:") and needle in err
    from semcache import CacheSettings, SemanticCache

    with SemanticCache(CacheSettings()) as cache:
        assert cache.ready()
        assert cache.check("fine?") is None  # the good line was not stored either


def test_a_missing_file_is_one_line(deployment, capsys):
    assert _exit_status(["import", str(deployment / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
