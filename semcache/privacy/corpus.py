"""The labeled private-data corpus semcache ships, for tests and the benchmark.

``semcache/data/privacy_prompts.jsonl`` (``scripts/build_privacy_corpus.py``, synthetic values
only) has one prompt per line: ``id``, ``split`` (``dev``: tuned on; ``heldout`` and
``fresh``: never tuned on), ``lang``, ``text``, ``kinds`` (empty: no private data),
``spans`` (offsets and kind of each private value) and ``hard`` (the hard case it is, or null).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TypedDict

from semcache.errors import ConfigError

_RESOURCE = ("data", "privacy_prompts.jsonl")
SPLITS = ("dev", "heldout", "fresh")


class PrivacyExample(TypedDict):
    """One line of the shipped privacy corpus."""

    id: str
    split: str
    lang: str
    text: str
    kinds: list[str]
    spans: list[tuple[int, int, str]]
    hard: str | None


def load_privacy_corpus(split: str | None = None) -> list[PrivacyExample]:
    """All examples in file order, or those of one split (one of :data:`SPLITS`)."""
    if split is not None and split not in SPLITS:
        raise ConfigError(f"unknown split {split!r}; expected one of {SPLITS} or None")
    text = resources.files("semcache").joinpath(*_RESOURCE).read_text(encoding="utf-8")
    rows: list[PrivacyExample] = [json.loads(line) for line in text.splitlines() if line]
    return rows if split is None else [row for row in rows if row["split"] == split]
