"""The labeled pair set semcache ships: its own questions, for calibration, tests and demos.

``semcache/data/pairs.jsonl`` is written by ``scripts/build_pairs.py`` from hand-written templates
(no third-party text). One pair per line::

    {"id": "en-support-001", "text_a": "...", "text_b": "...", "label": 1, "lang": "en",
     "domain": "support", "kind": "paraphrase", "group": "...", "group_b": "...",
     "detail": null}

``label`` 1: one answer is correct for both texts; 0: serving one's answer for the other is a
false hit. ``group`` is the intent of ``text_a`` and ``group_b`` that of ``text_b`` (equal iff
``label`` is 1); a text always has the same group. ``kind`` is ``paraphrase``,
``exact_variant`` (casing, punctuation, typos), ``hard_negative`` (one answer-determining detail
differs, named by ``detail``: number, date, negation, entity, comparison, order or other) or
``unrelated``.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Literal, TypedDict

from semcache.errors import ConfigError

_RESOURCE = ("data", "pairs.jsonl")
LANGUAGES = ("en", "zh")


class LabeledPair(TypedDict):
    """One line of the shipped pair set."""

    id: str
    text_a: str
    text_b: str
    label: Literal[0, 1]
    lang: str
    domain: str
    kind: str
    group: str
    group_b: str
    detail: str | None


def shipped_pairs_path() -> Path:
    """Filesystem path of the shipped set (semcache is installed as files, never zipped)."""
    return Path(str(resources.files("semcache").joinpath(*_RESOURCE)))


def load_shipped_pairs(lang: str | None = None) -> list[LabeledPair]:
    """All shipped pairs in file order, or those of one language (``"en"`` or ``"zh"``)."""
    if lang is not None and lang not in LANGUAGES:
        raise ConfigError(f"unknown language {lang!r}; expected one of {LANGUAGES} or None")
    text = resources.files("semcache").joinpath(*_RESOURCE).read_text(encoding="utf-8")
    pairs: list[LabeledPair] = [json.loads(line) for line in text.splitlines() if line]
    return pairs if lang is None else [pair for pair in pairs if pair["lang"] == lang]
