"""The shipped labeled pair set: loadable, well-formed, balanced, and current with its builder."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

from semcache.datasets import LANGUAGES, load_shipped_pairs, shipped_pairs_path
from semcache.errors import ConfigError

FIELDS = {"id", "text_a", "text_b", "label", "lang", "domain", "kind", "group", "group_b", "detail"}
KINDS = {"paraphrase", "exact_variant", "hard_negative", "unrelated"}
DETAILS = {"number", "date", "negation", "entity", "comparison", "order", "other"}
DOMAINS = {"support", "faq", "coding", "knowledge", "travel", "finance", "health"}


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    return [dict(p) for p in load_shipped_pairs()]


def test_path_is_the_packaged_file() -> None:
    path = shipped_pairs_path()
    assert path.is_file()
    assert path.name == "pairs.jsonl"
    assert path.parent.parent.name == "semcache"


def test_size_and_language_filter(pairs: list[dict]) -> None:
    assert len(pairs) >= 400
    by_lang = {lang: load_shipped_pairs(lang) for lang in LANGUAGES}
    assert sum(len(v) for v in by_lang.values()) == len(pairs)
    assert all(p["lang"] == lang for lang, rows in by_lang.items() for p in rows)
    assert 0.25 <= len(by_lang["zh"]) / len(pairs) <= 0.35


def test_unknown_language_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        load_shipped_pairs("fr")


def test_schema(pairs: list[dict]) -> None:
    for p in pairs:
        assert set(p) == FIELDS, p["id"]
        assert p["label"] in (0, 1)
        assert p["lang"] in LANGUAGES
        assert p["domain"] in DOMAINS
        assert p["kind"] in KINDS
        assert p["id"].startswith(f"{p['lang']}-{p['domain']}-")
        assert p["text_a"].strip() and p["text_b"].strip()
        assert (p["detail"] in DETAILS) == (p["kind"] == "hard_negative")
        assert p["label"] == (p["kind"] in ("paraphrase", "exact_variant"))


def test_ids_unique_and_pairs_distinct(pairs: list[dict]) -> None:
    assert len({p["id"] for p in pairs}) == len(pairs)
    assert len({frozenset((p["text_a"], p["text_b"])) for p in pairs}) == len(pairs)
    assert all(p["text_a"] != p["text_b"] for p in pairs)


def test_labels_agree_with_groups_and_groups_are_consistent(pairs: list[dict]) -> None:
    group_of: dict[str, str] = {}
    for p in pairs:
        assert p["label"] == int(p["group"] == p["group_b"]), p["id"]
        for text, group in ((p["text_a"], p["group"]), (p["text_b"], p["group_b"])):
            assert group_of.setdefault(text, group) == group, (p["id"], text)


def test_balance(pairs: list[dict]) -> None:
    kinds = Counter(p["kind"] for p in pairs)
    positives = sum(p["label"] for p in pairs)
    assert 0.4 <= positives / len(pairs) <= 0.6
    negatives = len(pairs) - positives
    assert kinds["hard_negative"] >= 0.7 * negatives
    assert kinds["unrelated"] > 0
    assert {p["domain"] for p in pairs} == DOMAINS
    hard_details = Counter(p["detail"] for p in pairs if p["kind"] == "hard_negative")
    assert set(hard_details) == DETAILS
    for lang in LANGUAGES:
        assert {p["detail"] for p in pairs if p["lang"] == lang and p["detail"]} == DETAILS


def test_builder_reproduces_the_shipped_file(monkeypatch: pytest.MonkeyPatch) -> None:
    script = Path(__file__).resolve().parents[1] / "scripts" / "build_pairs.py"
    spec = importlib.util.spec_from_file_location("build_pairs", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "build_pairs", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    rows = module.build()
    module.validate(rows)
    assert module.serialise(rows) == shipped_pairs_path().read_text(encoding="utf-8")
