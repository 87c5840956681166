"""The lexicon as data: lexicon.toml loads into the shapes the extractor expects, once."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import get_origin, get_type_hints

from semcache.guard import lexicon


def test_every_list_loads_with_its_declared_shape() -> None:
    lex = lexicon.load()
    hints = get_type_hints(lexicon.Lexicon)
    for field in fields(lexicon.Lexicon):
        value = getattr(lex, field.name)
        hint = hints[field.name]
        assert isinstance(value, get_origin(hint) or hint), (field.name, type(value))
        assert value, f"{field.name} is empty"


def test_shaped_entries() -> None:
    lex = lexicon.load()
    assert lex.en_units["km"] == (
        "length",
        ("km", "kms", "kilometer", "kilometers", "kilometre", "kilometres"),
    )
    assert lex.en_comparisons["side"] == (("left",), ("right",))
    assert lex.en_scales["million"] == 1_000_000
    assert "one" in lex.en_weak_words
    assert lex.aliases["js"] == "javascript"
    # keys are lower case: the guard compares lower-cased text
    for field in fields(lexicon.Lexicon):
        value = getattr(lex, field.name)
        if isinstance(value, dict):
            assert all(key == key.lower() for key in value), field.name


def test_loaded_once_and_shared() -> None:
    assert lexicon.load() is lexicon.load()


def test_the_file_ships_as_package_data() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert "lexicon.toml" in project["tool"]["setuptools"]["package-data"]["semcache.guard"]
    assert (root / "guard" / "lexicon.toml").is_file()
