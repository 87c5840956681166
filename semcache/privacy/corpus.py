"""The labeled private-data corpus semcache ships, for tests and the benchmark.

``semcache/data/privacy_prompts.jsonl`` is written by ``scripts/build_privacy_corpus.py`` from
templates and hand-written cases, with synthetic values only (generated cards, IBANs and IDs
with valid checksums; no real person's data). One prompt per line::

    {"id": "dev-en-email-003", "split": "dev", "lang": "en", "text": "...",
     "kinds": ["email"], "spans": [[12, 31, "email"]], "hard": null}

``split`` is ``dev`` (the part the detector rules were tuned on), ``heldout`` (templates and
hard cases written separately; its first measurement led to three generic rule fixes) or
``fresh`` (a third batch written after those fixes and never tuned on). ``kinds`` lists the
kinds present (empty: no private data); ``spans`` gives each private value's offsets; ``hard``
names the hard case a prompt is (``luhn_fail``, ``order_number``, ``version_string``,
``phone_in_code``, ``uuid``, ``hash``, ``timestamp``…) or is null.
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
