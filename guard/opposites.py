"""Opposite words where two questions differ: "eat" against "avoid", 增加 against 减少.

One detail that turns a long shared question around moves a mean-pooled vector least of all,
so the guard looks at what differs: after the longest shared beginning and end are set aside
(:func:`differing`), a word of one side of an axis against a word of the other side in the
other question's differing part is a difference. Shared words never count, nor a word added
to one question only. The words are ``lexicon.toml``'s comparison and opposite lists (English
by word, Chinese by character, longest first); a match must touch the differing part.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from semcache.guard.lexicon import Poles, load
from semcache.guard.patterns import TOKEN

Side = tuple[str, int]  # (axis, pole)


def _key(phrase: str) -> tuple[str, ...]:
    tokens = TOKEN.findall(phrase.lower())
    if len(tokens) == 1 and not tokens[0].isascii():
        return tuple(tokens[0])  # Chinese: one token per character, as in Details.sequence
    return tuple(tokens)


def _index() -> dict[tuple[str, ...], frozenset[Side]]:
    lex = load()
    sides: dict[tuple[str, ...], set[Side]] = {}
    tables: tuple[Poles, ...] = (
        lex.en_comparisons,
        lex.zh_comparisons,
        lex.en_opposites,
        lex.zh_opposites,
    )
    for table in tables:
        for axis, poles in table.items():
            for pole, words in enumerate(poles):
                for word in words:
                    sides.setdefault(_key(word), set()).add((axis, pole))
    for idiom in lex.zh_comparison_idioms:
        sides[_key(idiom)] = set()  # read, so its characters are not, and counts nothing
    return {key: frozenset(value) for key, value in sides.items() if key}


INDEX = _index()
LONGEST = max(len(key) for key in INDEX)
PREFIXES = load().en_negative_prefixes
_PREFIX_WORDS = frozenset((prefix,) for prefix in PREFIXES if len(prefix) >= 3)


def differing(a: Sequence[str], b: Sequence[str]) -> tuple[range, range]:
    """The token ranges of ``a`` and ``b`` left after their longest shared beginning and end."""
    shortest = min(len(a), len(b))
    start = 0
    while start < shortest and a[start] == b[start]:
        start += 1
    end = 0
    while end < shortest - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return range(start, len(a) - end), range(start, len(b) - end)


def sides_in(tokens: Sequence[str], part: range) -> Mapping[str, frozenset[int]]:
    """Axis -> the poles taken by words that touch ``part`` of ``tokens``."""
    if not part:
        return {}
    found: dict[str, set[int]] = {}
    i, stop = max(0, part.start - LONGEST + 1), min(len(tokens), part.stop + LONGEST - 1)
    while i < stop:
        for n in range(min(LONGEST, stop - i), 0, -1):
            sides = INDEX.get(tuple(tokens[i : i + n]))
            if sides is None:
                continue
            if i < part.stop and i + n > part.start:
                for axis, pole in sides:
                    found.setdefault(axis, set()).add(pole)
            i += n
            break
        else:
            i += 1
    return {axis: frozenset(poles) for axis, poles in found.items()}


def opposites(a: Sequence[str], b: Sequence[str]) -> Iterator[tuple[str, str, str]]:
    """``(axis, a's words, b's words)`` for each axis on which the differing parts of the two
    token sequences take opposite sides only."""
    part_a, part_b = differing(a, b)
    negated = _negated(a[part_a.start : part_a.stop], b[part_b.start : part_b.stop])
    if negated is not None:
        yield "negative prefix", *negated
        return
    sides_a, sides_b = sides_in(a, part_a), sides_in(b, part_b)
    for axis in sorted(sides_a.keys() & sides_b.keys()):
        if sides_a[axis].isdisjoint(sides_b[axis]):
            yield axis, words(a[part_a.start : part_a.stop]), words(b[part_b.start : part_b.stop])


def _negated(a: Sequence[str], b: Sequence[str]) -> tuple[str, str] | None:
    """A word in one part and itself with a negative prefix in the other ("friendly" /
    "unfriendly"), or a prefix written apart ("non-toxic") that is all that differs, as
    ``(a's word, b's word)``; None when there is none."""
    if not (a and b) and tuple(a or b) in _PREFIX_WORDS:
        return words(a), words(b)  # "toxic" / "non-toxic": the prefix is all that differs
    words_a, words_b = set(a), set(b)
    for one, other, swap in ((words_a, words_b, False), (words_b, words_a, True)):
        for word in one:
            if len(word) < 5 or not word.isalpha():
                continue
            for prefix in PREFIXES:
                if prefix + word in other:
                    return (prefix + word, word) if swap else (word, prefix + word)
    return None


def words(tokens: Sequence[str]) -> str:
    """Tokens as words again: Chinese characters joined, other tokens spaced."""
    return "".join(t if not t.isascii() else f" {t} " for t in tokens).replace("  ", " ").strip()
