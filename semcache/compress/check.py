"""The detail-preservation check: a compressed text is used only if it keeps every detail.

Details (numbers with units, dates, entities, comparisons) come from the answer guard's
extractor (``semcache.compress._features``); code, URLs, quotes and digit strings are also
checked verbatim. One-sided and by sets: everything the original states must still be
stated, once is enough. Negation is checked as the set of (cue, next word) pairs, since
dropping a repeated "Do not X." flips the guard's parity reading; a false refusal costs
tokens, a false pass costs a wrong answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._features import extract

if TYPE_CHECKING:
    from semcache.guard.features import Details

KINDS = (
    "number",
    "unit",
    "date",
    "negation",
    "entity",
    "comparison",
    "code",
    "url",
    "quote",
)

_DIGITS = re.compile(r"\d+(?:[.,:]\d+)*")
_CODE = re.compile(r"(?ms)^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$|`[^`\n]+`")
_URL = re.compile(r"(?i)\b(?:https?|ftp)://[^\s<>\"'`，。；）]+|\bwww\.[^\s<>\"'`，。；）]+")
_QUOTE = re.compile(
    r"\"[^\"\n]{1,400}\"|“[^”\n]{1,400}”|「[^」\n]{1,400}」|『[^』\n]{1,400}』|《[^》\n]{1,100}》"
)
_EN_NEGATION = re.compile(
    r"\b(not|no|never|nor|none|nothing|neither|without|cannot|can't|don't|doesn't|didn't|"
    r"won't|isn't|aren't|wasn't|shouldn't|mustn't|must not|do not|does not)\s+(\w+)",
    re.IGNORECASE,
)
_ZH_NEGATION = re.compile(
    r"(不要|不得|不能|不可|不许|不准|禁止|切勿|请勿|不|没有|没|别|勿|无|未|非)([\u3400-\u9fff]{1,2})"
)
_ZH_NOT_NEGATION = re.compile(
    r"非常|无论|不仅|不但|不管|不过|差不多|要不要|能不能|是不是|好不好|可不可以|会不会|有没有"
)
_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_CONTRACTIONS = {"can't": "cannot", "won't": "will not"}
_CUE = re.compile(
    r"(?i)\b(?:not|no|never|nor|none|nothing|neither|without|cannot)\b|n't|[不没别勿无未非禁]"
)


@dataclass(frozen=True, slots=True)
class LostDetail:
    """A detail of the original missing from the rewrite: its kind and what it was."""

    kind: str
    detail: str


def _negations(text: str) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for cue, word in _EN_NEGATION.findall(text):
        cue = _CONTRACTIONS.get(cue.lower(), cue.lower())
        found.add(("not" if cue.endswith(("n't", " not")) else cue, word.lower()))
    found.update(_ZH_NEGATION.findall(_ZH_NOT_NEGATION.sub(" ", text)))
    return found


def holds_detail(span: str) -> bool:
    """Does ``span`` (text a rule is about to remove) state a detail on its own ("As mentioned
    before," holds a comparison word)? Protected-span placeholders count as details.
    """
    if "\ue000" in span or _CUE.search(_ZH_NOT_NEGATION.sub(" ", span)):
        return True
    if _CJK.search(span) and _LATIN.search(span):
        return True  # a Latin word inside Chinese is a name or a term ("AI", "Python")
    d = extract(span)
    return bool(d.strong or d.dates or d.entities or d.comparisons or d.units or d.conversions)


def _mentioned(entity: str, details: Details) -> bool:
    if not entity.isascii():
        return entity in details.haystack
    return all(f" {word} " in details.haystack for word in entity.split())


def _verbatim(pattern: re.Pattern[str], original: str, rewrite: str) -> Iterator[str]:
    for match in pattern.finditer(original):
        span = match.group().rstrip(".,;:!?)]") if pattern is _URL else match.group()
        if span not in rewrite:
            yield span


def _digit_strings(text: str) -> set[str]:
    """Digit strings outside URLs and code (those are checked whole)."""
    spans = [(m.start(), m.end()) for p in (_CODE, _URL) for m in p.finditer(text)]
    return {
        m.group() for m in _DIGITS.finditer(text) if not any(s <= m.start() < e for s, e in spans)
    }


def lost_details(original: str, rewrite: str) -> list[LostDetail]:
    """Every detail of ``original`` that ``rewrite`` no longer states (empty: safe to use)."""
    if original == rewrite:
        return []
    lost: list[LostDetail] = []
    a, b = extract(original), extract(rewrite)
    lost += [LostDetail("number", v) for v in sorted(a.strong - b.values)]
    rewrite_digits = _digit_strings(rewrite)
    lost += [LostDetail("number", d) for d in sorted(_digit_strings(original) - rewrite_digits)]
    for value, units in sorted(a.value_units.items()):
        missing = units - b.value_units.get(value, frozenset())
        lost += [LostDetail("unit", f"{value} {u}") for u in sorted(missing)]
    for dim, units in sorted(a.units.items()):
        lost += [LostDetail("unit", u) for u in sorted(units - b.units.get(dim, frozenset()))]
    lost += [LostDetail("unit", f"{s}->{t}") for s, t in sorted(a.conversions - b.conversions)]
    lost += [LostDetail("date", d) for d in sorted(a.dates - b.dates)]
    lost += [LostDetail("entity", e) for e in sorted(a.entities) if not _mentioned(e, b)]
    for axis, poles in sorted(a.comparisons.items()):
        missing_poles = poles - b.comparisons.get(axis, frozenset())
        lost += [LostDetail("comparison", f"{axis}:{p}") for p in sorted(missing_poles)]
    missing_negations = _negations(original) - _negations(rewrite)
    lost += [LostDetail("negation", " ".join(n)) for n in sorted(missing_negations)]
    lost += [LostDetail("code", c) for c in _verbatim(_CODE, original, rewrite)]
    lost += [LostDetail("url", u) for u in _verbatim(_URL, original, rewrite)]
    lost += [LostDetail("quote", q) for q in _verbatim(_QUOTE, original, rewrite)]
    return _unique(lost)


def _unique(lost: list[LostDetail]) -> list[LostDetail]:
    return list(dict.fromkeys(lost))
