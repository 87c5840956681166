"""The labeled pair sets semcache ships: its own questions, for calibration, tests and demos.

``semcache/data/pairs.jsonl`` (``scripts/build_pairs.py``, hand-written templates) has rows
``id``, ``text_a``, ``text_b``, ``label`` (1: one answer is right for both), ``lang``,
``domain``, ``kind`` (paraphrase, exact_variant, hard_negative, unrelated), ``group`` /
``group_b`` (the intents) and ``detail``. ``semcache/data/collisions.jsonl``
(``scripts/build_collisions.py``) holds inputs an embedder confuses, with ``kind`` in
:data:`COLLISION_KINDS`. Both load by name (:data:`SHIPPED_SETS`).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Literal, TypedDict

from semcache.errors import ConfigError

_RESOURCE = ("data", "pairs.jsonl")
LANGUAGES = ("en", "zh")

#: Shipped sets by name -> their file inside the package.
SHIPPED_SETS = {"pairs": "pairs.jsonl", "collisions": "collisions.jsonl"}

#: The shapes of the collision corpus's pairs; ``paraphrase`` pairs are all label 1, the
#: long-context and template kinds have both labels, the others are all label 0.
COLLISION_KINDS = (
    "long_context",
    "template",
    "antonym",
    "number",
    "entity",
    "code",
    "negation",
    "paraphrase",
)


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


class CollisionPair(TypedDict):
    """One line of the collision corpus."""

    id: str
    text_a: str
    text_b: str
    label: Literal[0, 1]
    lang: str
    kind: str
    detail: str


def shipped_set_path(name: str) -> Path:
    """Filesystem path of the shipped set called ``name`` (a key of :data:`SHIPPED_SETS`)."""
    if name not in SHIPPED_SETS:
        raise ConfigError(f"no shipped pair set {name!r}; shipped: {', '.join(SHIPPED_SETS)}")
    return Path(str(resources.files("semcache").joinpath("data", SHIPPED_SETS[name])))


def load_collisions(kind: str | None = None) -> list[CollisionPair]:
    """The collision corpus in file order, or the pairs of one ``kind``."""
    if kind is not None and kind not in COLLISION_KINDS:
        raise ConfigError(f"unknown kind {kind!r}; expected one of {COLLISION_KINDS} or None")
    text = shipped_set_path("collisions").read_text(encoding="utf-8")
    pairs: list[CollisionPair] = [json.loads(line) for line in text.splitlines() if line]
    return pairs if kind is None else [pair for pair in pairs if pair["kind"] == kind]
