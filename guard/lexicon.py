"""The answer guard's word lists, read once from ``lexicon.toml`` (beside this module) when the
guard first compares: tables become dicts, lists tuples or frozensets.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

Units = Mapping[str, tuple[str, tuple[str, ...]]]
"""canonical unit -> (dimension, spellings)."""
Poles = Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]
"""axis -> (words of one pole, words of the other)."""


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Every list in ``lexicon.toml``, by its name there (sections are flattened)."""

    # numbers
    en_weak_words: frozenset[str]
    zh_numeral_idioms: tuple[str, ...]  # regular expressions
    zh_classifiers: tuple[str, ...]
    en_number_words: Mapping[str, int]
    en_scales: Mapping[str, int]
    en_ordinals: Mapping[str, int]
    zh_digits: Mapping[str, int]
    zh_small_units: Mapping[str, int]
    zh_big_units: Mapping[str, int]
    zh_unit_synonyms: Mapping[str, str]
    # units
    en_attached_only: frozenset[str]
    en_units: Units
    currency_symbols: Mapping[str, str]
    zh_units: Units
    # dates and times
    en_periods: tuple[str, ...]
    zh_weekday_prefixes: tuple[str, ...]
    en_months: Mapping[str, int]
    en_weekdays: Mapping[str, str]
    en_day_words: Mapping[str, str]
    en_relative: Mapping[str, str]
    zh_weekdays: Mapping[str, str]
    zh_date_words: Mapping[str, str]
    # negation
    en_negations: tuple[str, ...]
    en_negation_idioms: tuple[str, ...]  # regular expressions
    zh_negations: tuple[str, ...]
    zh_question_tail: str  # a regular expression
    zh_negation_idioms: tuple[str, ...]
    # comparison and direction
    zh_comparison_idioms: tuple[str, ...]
    en_comparisons: Poles
    zh_comparisons: Poles
    # opposites (read only where two texts differ)
    en_negative_prefixes: tuple[str, ...]
    en_opposites: Poles
    zh_opposites: Poles
    # entities
    en_known_names: tuple[str, ...]
    en_common_words: frozenset[str]
    zh_gazetteer: tuple[str, ...]
    aliases: Mapping[str, str]


def _units(table: dict[str, list[Any]]) -> Units:
    return {unit: (dim, tuple(spellings)) for unit, (dim, spellings) in table.items()}


def _poles(table: dict[str, list[list[str]]]) -> Poles:
    return {axis: (tuple(one), tuple(other)) for axis, (one, other) in table.items()}


_SHAPES: dict[str, Callable[[Any], Any]] = {
    "en_weak_words": frozenset,
    "en_attached_only": frozenset,
    "en_common_words": frozenset,
    "en_units": _units,
    "zh_units": _units,
    "en_comparisons": _poles,
    "zh_comparisons": _poles,
    "en_opposites": _poles,
    "zh_opposites": _poles,
}


def _shape(name: str, value: Any) -> Any:
    if name in _SHAPES:
        return _SHAPES[name](value)
    return tuple(value) if isinstance(value, list) else value


@cache
def load() -> Lexicon:
    """The shipped lexicon (read and shaped on the first call only)."""
    text = resources.files(__package__).joinpath("lexicon.toml").read_text(encoding="utf-8")
    sections = tomllib.loads(text).values()
    lists = {name: value for section in sections for name, value in section.items()}
    return Lexicon(**{name: _shape(name, value) for name, value in lists.items()})
