"""What a learned hit scorer sees of a (query, candidate) pair: a fixed, versioned feature row.

The pair's cosine under each embedder, lexical overlap, length and structure, and one flag
per answer-guard rule: mismatches are features, not vetoes, so the model learns from the
user's labels what each is worth on their traffic. Every feature has :data:`BOUNDS` (for
:mod:`semcache.scoring.band`); the layout is pinned by :data:`FEATURE_VERSION`.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

from ._guard import RULES, DetailGuard

FEATURE_VERSION = 1

LEXICAL = (
    "ratio",
    "token_sort_ratio",
    "token_set_ratio",
    "partial_ratio",
    "word_jaccard",
    "char2_jaccard",
    "char3_jaccard",
    "length_ratio",
    "word_count_ratio",
    "digits_equal",
    "cjk",
)
GUARD = tuple(f"guard_{rule}" for rule in RULES)

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"\w+", re.UNICODE)
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def cosine_name(embedder: str) -> str:
    """The feature name of ``embedder``'s cosine similarity."""
    return f"cos:{embedder}"


def feature_names(embedders: Sequence[str]) -> tuple[str, ...]:
    """The row layout for a model fit with ``embedders`` (their cosines come first, in order)."""
    return (*(cosine_name(e) for e in embedders), *LEXICAL, *GUARD)


def bounds(names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest value each named feature can take (cosines: [-1, 1], others [0, 1])."""
    low = np.array([-1.0 if n.startswith("cos:") else 0.0 for n in names])
    return low, np.ones(len(names))


@lru_cache(maxsize=1)
def _jieba():  # type: ignore[no-untyped-def]
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


@lru_cache(maxsize=4096)
def _normal(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    if _CJK.search(text):
        cut = _jieba().lcut(text)
        return frozenset(w for w in cut if _WORD.fullmatch(w))
    return frozenset(_WORD.findall(text))


def _grams(text: str, n: int) -> frozenset[str]:
    compact = text.replace(" ", "")
    if len(compact) < n:
        return frozenset([compact]) if compact else frozenset()
    return frozenset(compact[i : i + n] for i in range(len(compact) - n + 1))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def lexical_features(query: str, candidate: str) -> list[float]:
    """The :data:`LEXICAL` features of one pair, each in [0, 1]; symmetric in the two texts."""
    from rapidfuzz import fuzz

    a, b = _normal(query), _normal(candidate)
    words_a, words_b = _words(a), _words(b)
    longest = max(len(a), len(b), 1)
    most_words = max(len(words_a), len(words_b), 1)
    return [
        fuzz.ratio(a, b) / 100.0,
        fuzz.token_sort_ratio(a, b) / 100.0,
        fuzz.token_set_ratio(a, b) / 100.0,
        fuzz.partial_ratio(a, b) / 100.0,
        _jaccard(words_a, words_b),
        _jaccard(_grams(a, 2), _grams(b, 2)),
        _jaccard(_grams(a, 3), _grams(b, 3)),
        min(len(a), len(b)) / longest,
        min(len(words_a), len(words_b)) / most_words,
        float(sorted(_DIGITS.findall(a)) == sorted(_DIGITS.findall(b))),
        float(bool(_CJK.search(a) or _CJK.search(b))),
    ]


class FeatureExtractor:
    """Builds rows in the :func:`feature_names` layout; holds the guard (its per-text cache)."""

    def __init__(self) -> None:
        self._guard = DetailGuard()

    def guard_flags(self, query: str, candidate: str) -> list[float]:
        """1.0 for each guard rule under which the two texts differ, in ``RULES`` order."""
        fired = {d.rule for d in self._guard.differences(query, candidate)}
        return [float(rule in fired) for rule in RULES]

    def row(self, query: str, candidate: str, cosines: Iterable[float]) -> np.ndarray:
        """One row: ``cosines`` (one per embedder, in the model's order), lexical, guard."""
        return np.array(
            [*cosines, *lexical_features(query, candidate), *self.guard_flags(query, candidate)],
            dtype=np.float64,
        )

    def rows(
        self, queries: Sequence[str], candidates: Sequence[str], cosines: np.ndarray
    ) -> np.ndarray:
        """Rows for many pairs; ``cosines`` has shape (pairs, embedders)."""
        cosines = np.asarray(cosines, dtype=np.float64).reshape(len(queries), -1)
        return (
            np.stack(
                [
                    self.row(q, c, cos)
                    for q, c, cos in zip(queries, candidates, cosines, strict=True)
                ]
            )
            if len(queries)
            else np.empty((0, cosines.shape[1] + len(LEXICAL) + len(GUARD)))
        )
