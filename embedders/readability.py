"""What an embedder can read: the Unicode scripts its training text was written in.

An English-only model maps text in scripts it never saw to nearly one vector, so a semantic
match between two such texts means nothing, and unknown-token counts do not show it (MiniLM
has thousands of single CJK characters). A text is readable when at most ``tolerance`` of
its letters are in scripts outside ``scripts`` (None: reads everything).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=8192)
def script_of(char: str) -> str | None:
    """The script of a letter as the first word of its Unicode name (``LATIN``, ``CJK``,
    ``CYRILLIC``...; full- and half-width forms by their second word); None for a non-letter."""
    if not unicodedata.category(char).startswith("L"):
        return None
    words = unicodedata.name(char, "UNKNOWN").split()
    if words[0] in ("FULLWIDTH", "HALFWIDTH") and len(words) > 1:
        return words[1]
    return words[0]


@dataclass(frozen=True, slots=True)
class Readability:
    """The scripts (and, for people, the languages) an embedder reads.

    ``tolerance``: the share of letters in other scripts still read (a Greek β in an English
    question), in [0, 1]."""

    scripts: frozenset[str] | None
    languages: tuple[str, ...] = ()
    tolerance: float = 0.1

    def reads(self, text: str) -> bool:
        """True when the embedder can embed ``text`` meaningfully (see the module doc)."""
        scripts = self.scripts
        if scripts is None or (text.isascii() and "LATIN" in scripts):
            return True
        letters = foreign = 0
        for char in text:
            script = script_of(char)
            if script is None:
                continue
            letters += 1
            if script not in scripts:
                foreign += 1
        return foreign <= self.tolerance * letters


ANY = Readability(None)
"""Reads everything: for embedders that do not declare their languages."""

ENGLISH = Readability(frozenset({"LATIN"}), ("en",))
"""all-MiniLM-L6-v2 and other English sentence-transformers models."""

USE_MULTILINGUAL = Readability(
    frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "ARABIC", "THAI", "CYRILLIC"}),
    ("ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh"),
)
"""Universal Sentence Encoder multilingual v3: its 16 languages (zh in two scripts); no Hindi."""

E5_MULTILINGUAL = Readability(
    frozenset(
        {
            "LATIN",
            "CYRILLIC",
            "GREEK",
            "ARMENIAN",
            "GEORGIAN",
            "HEBREW",
            "ARABIC",
            "DEVANAGARI",
            "BENGALI",
            "GURMUKHI",
            "GUJARATI",
            "ORIYA",
            "TAMIL",
            "TELUGU",
            "KANNADA",
            "MALAYALAM",
            "SINHALA",
            "THAI",
            "LAO",
            "KHMER",
            "MYANMAR",
            "ETHIOPIC",
            "MONGOLIAN",
            "CJK",
            "HIRAGANA",
            "KATAKANA",
            "HANGUL",
        }
    ),
    ("about 100 languages of XLM-R's training set",),
)
"""multilingual-e5-small: the scripts of XLM-RoBERTa's ~100 training languages."""


def readability_of(embedder: Any) -> Readability:
    """What ``embedder`` declares (its ``readability`` attribute), else :data:`ANY`."""
    declared = getattr(embedder, "readability", None)
    return declared if isinstance(declared, Readability) else ANY
