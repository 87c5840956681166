"""The answer-determining details of one question, which the guard's ``rules`` compare.

``extract(text)`` is pure and cached. It normalises the text (NFKC, letters split from
digits) and reads, stage by stage, each stage blanking what it consumed so the next cannot
read it again: quoted titles and Chinese names; dates and times; quantities; bare units and
conversions; comparison words as (axis, pole); negation parity; entities. Each stage checks
a cheap trigger first, so most texts skip most regexes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import TypeVar

from semcache.guard import patterns as pat
from semcache.guard.lexicon import load

lex = load()

T = TypeVar("T")


@dataclass(frozen=True, slots=True, eq=False)
class Details:
    """What a question pins down, shaped for ``semcache.guard.rules`` to compare cheaply."""

    values: frozenset[str]  # every number stated, canonical ("1000", "3.12", "25")
    strong: frozenset[str]  # those not only written as a lone "one"/"一"
    value_units: Mapping[str, frozenset[str]]  # number -> units attached to it
    units: Mapping[str, frozenset[str]]  # dimension -> every unit of it named
    conversions: frozenset[tuple[str, str]]  # (from unit, to unit)
    dates: frozenset[str]
    negation: int  # parity of negation cues: 0 or 1
    entities: frozenset[str]
    comparisons: Mapping[str, frozenset[int]]  # axis -> poles taken
    haystack: str  # " token token 中文 " for mention checks
    sequence: tuple[str, ...]  # tokens in order, Chinese split into characters, for swaps


class _Reader:
    """One text's details, collected while the stages blank what they consume."""

    def __init__(self, text: str) -> None:
        self.text, self.low = pat.normalise(text)
        self.cjk = bool(pat.CJK.search(self.low))
        self.words = frozenset(pat.WORD.findall(self.low))
        self.token_list = pat.TOKEN.findall(self.low)
        self.tokens = frozenset(self.token_list)
        self.quantities: set[tuple[str, str]] = set()
        self.strong: set[str] = set()
        self.units: set[tuple[str, str]] = set()
        self.conversions: set[tuple[str, str]] = set()
        self.dates: set[str] = set()
        self.entities: set[str] = set()
        self.comparisons: set[tuple[str, int]] = set()
        self.negation_parity = 0

    def read(self) -> None:
        """Run the stages in order (see the module docstring)."""
        masked, words = self.low, self.words
        if pat.QUOTE_TRIGGER.search(masked):
            pat.consume(masked, pat.QUOTED, self.quoted)
        if self.cjk:
            masked = pat.consume(masked, pat.ZH_GAZETTEER, self.gazetteer)
        self.negation_parity = self.negation(masked)
        if self.cjk:
            masked = pat.ZH_UNIT_SYNONYM.sub(lambda m: lex.zh_unit_synonyms[m.group()], masked)
            masked = pat.consume(masked, pat.ZH_DATE, self.zh_date)
            for source, target in pat.ZH_CONVERSION.findall(masked):
                self.conversions.add((pat.ZH_UNIT[source][0], pat.ZH_UNIT[target][0]))
            masked = pat.ZH_NUMERAL_IDIOM.sub(lambda m: " " * len(m.group()), masked)
            masked = pat.consume(masked, pat.ZH_QUANTITY, self.zh_quantity)
        if words & pat.GATE_DATE:
            masked = pat.consume(masked, pat.EN_DATE, self.en_date)
        unit_words = words & pat.GATE_UNIT
        if len(unit_words) >= 2:
            for source, target in pat.EN_CONVERSION.findall(masked):
                self.conversions.add((pat.EN_UNIT[source][0], pat.EN_UNIT[target][0]))
        if pat.QUANTITY_TRIGGER.search(masked) or words & pat.GATE_QUANTITY:
            masked = pat.consume(masked, pat.EN_QUANTITY, self.en_quantity)
        if words.intersection(lex.en_ordinals):
            masked = pat.consume(masked, pat.EN_ORDINAL, self.en_ordinal)
        if unit_words:
            masked = pat.EN_BARE_UNIT.consume(masked, self.unit)
        if self.cjk:
            masked = pat.consume(masked, pat.ZH_BARE_UNIT, self.zh_unit)
            masked = pat.consume(masked, pat.ZH_COMPARISON, self.zh_comparison)
        if words & pat.EN_COMPARISON.first:
            masked = pat.EN_COMPARISON.consume(masked, self.comparison)
        self.latin_entities(masked)

    def quantity(self, value: str, unit: str, dim: str, *, weak: bool = False) -> bool:
        self.quantities.add((value, unit))
        if unit:
            self.units.add((dim, unit))
        if not weak:
            self.strong.add(value)
        return True

    def quoted(self, match: re.Match[str]) -> bool:
        inner = next(group for group in match.groups() if group is not None)
        tokens = pat.norm_phrase(inner).split()
        if any(t not in lex.en_common_words for t in tokens):  # not scare quotes: "the one"
            self.entities.add(pat.canonical(inner))
        return False

    def gazetteer(self, match: re.Match[str]) -> bool:
        self.entities.add(pat.ALIAS.get(match.group(), match.group()))
        return True

    def en_date(self, match: re.Match[str]) -> bool:
        rel, word = match["rel"], match["word"]
        prefix = f"{lex.en_relative[rel]}_" if rel else ""
        if word in lex.en_periods:
            if not rel:
                return False  # "week" alone is a unit, read later
            self.dates.add(prefix + word)
        elif word in lex.en_months:
            if word in ("may", "march") and not rel and not self._is_month(match, word):
                return False
            self.dates.add(f"{prefix}month{lex.en_months[word]}")
        elif word in lex.en_weekdays:
            self.dates.add(prefix + lex.en_weekdays[word])
        elif re.search(r"\d\s*$", self.low[: match.start("word")]):
            return False  # "3 nights" is a quantity
        else:
            self.dates.add(prefix + lex.en_day_words[word])
        return True

    def _is_month(self, match: re.Match[str], word: str) -> bool:
        """Is "may"/"march" the month? Next to a number, or capitalised mid-sentence."""
        start, end = match.start("word"), match.end("word")
        if re.match(r"\s*\d", self.low[end:]) or re.search(r"\d\s*$", self.low[:start]):
            return True
        surface = self.text[start:end]
        if not (surface[0].isupper() and surface[1:].islower()):
            return False
        return word == "march" or start not in self._sentence_starts()

    def zh_date(self, match: re.Match[str]) -> bool:
        wd = match["wd"]
        self.dates.add(lex.zh_weekdays[wd] if wd else lex.zh_date_words[match.group()])
        return True

    def zh_quantity(self, match: re.Match[str]) -> bool:
        if match["pct"] is not None:
            return self.quantity(pat.zh_value(match["pct"]), "%", "ratio")
        num, unit, ordinal = match["num"], match["unit"], match["ord"]
        if num[0].isdigit() and not (unit or ordinal or num[-1] in "万亿千百"):
            return False  # plain digits: the English stage reads them, with Latin units
        if not num[0].isdigit() and len(num) == 1 and not (unit or ordinal):
            return False  # a lone numeral character is rarely a number ("三星", "一样")
        canonical, dim = ("ord", "ordinal") if ordinal else pat.ZH_UNIT.get(unit or "", ("", ""))
        return self.quantity(pat.zh_value(num), canonical, dim, weak=num == "一")

    def en_quantity(self, match: re.Match[str]) -> bool:
        num, unit = match["num"], match["unit"]
        scale = lex.en_scales[match["scale"]] if match["scale"] else 1
        canonical, dim = pat.EN_UNIT[re.sub(r"\s+", " ", unit)] if unit else ("", "")
        if match["cur"]:
            canonical, dim = lex.currency_symbols[match["cur"]], "money"
        if num[0].isdigit() or num[0] == "-":
            return self.quantity(pat.digits_value(num, scale), canonical, dim)
        value = str(pat.en_words_value(num) * scale)
        return self.quantity(value, canonical, dim, weak=num in lex.en_weak_words)

    def en_ordinal(self, match: re.Match[str]) -> bool:
        word = match.group()
        if word == "second" and re.search(r"\b(?:a|per|one)\s+$", self.low[: match.start()]):
            self.units.add(("time", "s"))
            return True
        return self.quantity(str(lex.en_ordinals[word]), "ord", "ordinal")

    def unit(self, found: tuple[str, str]) -> None:
        self.units.add(found)  # (dimension, unit)

    def zh_unit(self, match: re.Match[str]) -> bool:
        canonical, dim = pat.ZH_UNIT[match.group()]
        self.units.add((dim, canonical))
        return True

    def comparison(self, found: tuple[str, int] | None) -> None:
        if found is not None:  # None: an idiom that only looks like a comparison
            self.comparisons.add(found)  # (axis, pole)

    def zh_comparison(self, match: re.Match[str]) -> bool:
        self.comparison(pat.ZH_COMPARISON_WORDS[match.group()])
        return True

    def negation(self, text: str) -> int:
        """Parity of negation cues in ``text`` (place names already blanked: 无锡, 南非)."""
        count = 0
        if self.words & pat.EN_NEGATION_WORDS or "n't" in text:
            text = pat.EN_NEGATION_IDIOM.sub(" ", text)
            count += text.count("n't") + sum(
                w in pat.EN_NEGATION_WORDS for w in pat.WORD.findall(text)
            )
        if self.cjk:
            count += len(pat.ZH_NEGATION.findall(pat.ZH_NEGATION_IDIOM.sub(" ", text)))
        return count % 2

    def _sentence_starts(self) -> set[int]:
        return {m.end() for m in pat.SENTENCE_START.finditer(self.text)}

    def latin_entities(self, masked: str) -> None:
        for spelling in self.tokens & pat.KNOWN_SPELLINGS:
            self.entities.add(pat.ALIAS.get(spelling, spelling))  # python, js, csv
        if self.text == self.low or self.text.isupper():
            return  # no capitals, or ALL CAPS: case says nothing about names
        candidates: list[tuple[int, str, str]] = []
        content = capitalised = 0
        for match in pat.LATIN_WORD.finditer(self.text):
            surface = match.group()
            if surface.islower():
                content += len(surface) >= 3 and surface not in lex.en_common_words
                continue
            lower = surface.lower().lstrip(".")
            if lower in lex.en_common_words or surface == "I":
                continue
            content += len(surface) >= 3
            capitalised += len(surface) >= 3
            if masked[match.start()] != " ":  # not consumed as a date, quantity or unit
                candidates.append((match.start(), surface, pat.ALIAS.get(lower, lower)))
        title_case = content >= 3 and capitalised >= 0.8 * content
        starts = set() if self.cjk or not candidates else self._sentence_starts()
        for start, surface, name in candidates:
            if name in pat.EN_KNOWN:
                continue  # already added
            if any(c.isupper() for c in surface[1:]) and any(c.islower() for c in surface):
                self.entities.add(name)  # iPhone, PayPal, macOS
            elif len(surface) >= 2 and surface.isupper():
                self.entities.add(name)  # CSV, FIFA, US
            elif not title_case and start not in starts:
                self.entities.add(name)  # a capitalised word mid-sentence

    def sequence(self) -> tuple[str, ...]:
        if not self.cjk:
            return tuple(self.token_list)
        return tuple(
            part
            for token in self.token_list
            for part in (token if pat.CJK.match(token) else (token,))
        )

    def haystack(self) -> str:
        tokens = list(self.token_list)
        tokens += [pat.ALIAS[t] for t in tokens if t in pat.ALIAS]
        if "." in self.low or " " in self.low:
            tokens += [pat.ALIAS[pat.norm_phrase(p)] for p in pat.ALIAS_PHRASE.findall(self.low)]
        if self.cjk:
            tokens += [pat.ALIAS[g] for g in pat.CJK_ALIAS.findall(self.low)]
        return f" {' '.join(tokens)} "


@lru_cache(maxsize=8192)
def extract(text: str) -> Details:
    """Details of one question (pure; cached because stored candidates recur)."""
    reader = _Reader(text)
    reader.read()
    return Details(
        values=frozenset(value for value, _ in reader.quantities),
        strong=frozenset(reader.strong),
        value_units=_group((v, u) for v, u in reader.quantities if u),
        units=_group(reader.units),
        conversions=frozenset(reader.conversions),
        dates=frozenset(reader.dates),
        negation=reader.negation_parity,
        entities=frozenset(reader.entities),
        comparisons=_group(reader.comparisons),
        haystack=reader.haystack(),
        sequence=reader.sequence(),
    )


def _group(pairs: Iterable[tuple[str, T]]) -> Mapping[str, frozenset[T]]:
    grouped: dict[str, set[T]] = {}
    for key, value in pairs:
        grouped.setdefault(key, set()).add(value)
    return MappingProxyType({key: frozenset(values) for key, values in grouped.items()})
