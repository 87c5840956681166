"""Compiled patterns, phrase tables and number parsers of the answer guard's extractor.

Built once from ``lexicon.toml`` when first imported (on the guard's first comparison).
Alternations are ordered longest first; whole-word lists use ``Phrases`` (a dictionary walk,
faster than a regex alternation of hundreds of words).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from typing import Generic, TypeVar

from semcache.guard.lexicon import Poles, Units, load

lex = load()


def alternation(words: Iterable[str], *, latin: bool) -> str:
    """Regex alternation, longest first so "more expensive" wins over "more"."""
    ordered = sorted(set(words), key=len, reverse=True)
    body = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)
    return rf"(?<![a-z0-9])(?:{body})(?![a-z0-9])" if latin else f"(?:{body})"


def index(table: Units) -> dict[str, tuple[str, str]]:
    return {
        spelling: (canonical, dim)
        for canonical, (dim, spellings) in table.items()
        for spelling in spellings
    }


def words_of(table: Poles) -> dict[str, tuple[str, int]]:
    return {
        w: (axis, pole)
        for axis, poles in table.items()
        for pole, words in enumerate(poles)
        for w in words
    }


V = TypeVar("V")


class Phrases(Generic[V]):
    """Word-sequence lookup: a dictionary walk over the text's words, much faster than a
    regex alternation of hundreds of phrases. Matches only words separated by whitespace."""

    def __init__(self, table: dict[str, V]) -> None:
        self.table = {" ".join(k.split()): v for k, v in table.items()}
        self.first = frozenset(k.split()[0] for k in self.table)
        self.longest = max(len(k.split()) for k in self.table)

    def consume(self, text: str, take: Callable[[V], None]) -> str:
        """Call ``take`` with each phrase's value, longest phrase first; blank the phrases."""
        spans = [m.span() for m in WORD.finditer(text)]
        parts, last, i = [], 0, 0
        while i < len(spans):
            start = spans[i][0]
            if text[start : spans[i][1]] not in self.first:
                i += 1
                continue
            for n in range(min(self.longest, len(spans) - i), 0, -1):
                end = spans[i + n - 1][1]
                key = " ".join(text[start:end].split())
                if key in self.table and len(key.split()) == n:
                    take(self.table[key])
                    parts += [text[last:start], " " * (end - start)]
                    last, i = end, i + n
                    break
            else:
                i += 1
        if not parts:
            return text
        parts.append(text[last:])
        return "".join(parts)


CJK = re.compile(r"[\u3400-\u9fff]")
DIGIT = re.compile(r"\d")
QUANTITY_TRIGGER = re.compile(r"[\d$€£¥₹]")
QUOTE_TRIGGER = re.compile(r"[\"“「《『']")
WORD = re.compile(r"[a-z]+")
LETTER_DIGIT = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
QUOTE_CHARS = str.maketrans({"’": "'", "‘": "'", "`": "'"})
TOKEN = re.compile(r"[a-z0-9]+(?:[.+#][a-z0-9]+)*[+#]*|[\u3400-\u9fff]+")
LATIN_WORD = re.compile(r"\.?[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)*(?:\+\+|#)?")
SENTENCE_START = re.compile(r"(?:^|[.?!:;\n。？！：；])[\s\"'(\[“]*")
QUOTED = re.compile(
    r'"([^"]{1,80})"|“([^”]{1,80})”|「([^」]{1,80})」|《([^》]{1,80})》|『([^』]{1,80})』'
    r"|(?<![a-z0-9])'([^']{2,80})'(?![a-z0-9])"
)

EN_UNIT = index(lex.en_units)
EN_BARE = [u for u in EN_UNIT if u not in lex.en_attached_only and not u.startswith("°")]
EN_NUM_WORDS = frozenset({*lex.en_number_words, *lex.en_scales})
EN_NUM = "|".join(sorted(EN_NUM_WORDS, key=len, reverse=True))
EN_QUANTITY = re.compile(
    r"(?P<cur>[$€£¥₹])?\s?"
    r"(?P<num>(?<![a-z0-9_.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![a-z0-9_.])-?\d+(?:[.:]\d+)*"
    r"|\ba\s(?:hundred|thousand|million|billion|dozen)\b"
    rf"|\b(?:{EN_NUM})(?:[\s-]+(?:{EN_NUM}))*\b)"
    r"(?:\s?(?P<scale>hundred|thousand|million|billion|trillion)\b)?"
    rf"(?:[\s-]?(?P<unit>{alternation(EN_UNIT, latin=False)})(?![a-z]))?"
)
EN_ORDINAL = re.compile(alternation(lex.en_ordinals, latin=True))
EN_BARE_UNIT = Phrases({u: EN_UNIT[u][::-1] for u in EN_BARE if re.fullmatch(r"[a-z ]+", u)})
EN_CONVERTIBLE = alternation([u for u in EN_BARE if len(u) >= 2], latin=True)
EN_CONVERSION = re.compile(rf"({EN_CONVERTIBLE})\s+(?:to|into|in|->|→)\s+({EN_CONVERTIBLE})")
EN_DATE_WORDS = frozenset({*lex.en_months, *lex.en_weekdays, *lex.en_day_words})
EN_DATE = re.compile(
    rf"(?<![a-z])(?:(?P<rel>{'|'.join(lex.en_relative)})\s+)?"
    rf"(?P<word>{'|'.join(sorted({*EN_DATE_WORDS, *lex.en_periods}, key=len, reverse=True))})"
    r"(?![a-z])"
)
EN_COMPARISON_WORDS = words_of(lex.en_comparisons)
EN_COMPARISON = Phrases(EN_COMPARISON_WORDS)
EN_NEGATION_IDIOM = re.compile("|".join(lex.en_negation_idioms))
EN_NEGATION_WORDS = frozenset(w for w in lex.en_negations if w.isalpha())
EN_KNOWN = frozenset(lex.en_known_names)

GATE_QUANTITY = EN_NUM_WORDS
GATE_UNIT = EN_BARE_UNIT.first
GATE_DATE = EN_DATE_WORDS | frozenset(lex.en_periods)

ZH_NUMERALS = "零〇一二两三四五六七八九十百千万亿"
ZH_UNIT = index(lex.zh_units)
ZH_BARE = [u for u in ZH_UNIT if len(u) >= 2]  # single characters are too ambiguous bare
ZH_QUANTITY = re.compile(
    rf"百分之(?P<pct>\d+(?:\.\d+)?|[{ZH_NUMERALS}]+)"
    rf"|(?P<ord>第)?(?P<num>\d+(?:\.\d+)?[万亿千百]?|[{ZH_NUMERALS}]+)"
    rf"(?P<unit>{alternation([*ZH_UNIT, *lex.zh_classifiers], latin=False)})?"
)
ZH_NUMERAL_IDIOM = re.compile("|".join(lex.zh_numeral_idioms))
ZH_UNIT_SYNONYM = re.compile("|".join(lex.zh_unit_synonyms))
ZH_BARE_UNIT = re.compile(alternation(ZH_BARE, latin=False))
ZH_CONVERSION = re.compile(
    rf"({alternation(ZH_BARE, latin=False)})"
    r"(?:换算成|换算为|转换成|转换为|转成|换成|等于多少|是多少|兑换成|兑换|兑|对|换)"
    rf"({alternation(ZH_BARE, latin=False)})"
)
ZH_DATE = re.compile(
    alternation(lex.zh_date_words, latin=False)
    + rf"|(?<!每)(?:{'|'.join(lex.zh_weekday_prefixes)})(?P<wd>[一二三四五六日天末])(?![次个遍])"
)
ZH_GAZETTEER = re.compile(alternation(lex.zh_gazetteer, latin=False))
ZH_COMPARISON_WORDS: dict[str, tuple[str, int] | None] = {
    **words_of(lex.zh_comparisons),
    **dict.fromkeys(lex.zh_comparison_idioms),
}
ZH_COMPARISON = re.compile(alternation(ZH_COMPARISON_WORDS, latin=False))
ZH_NEGATION_IDIOM = re.compile(
    rf"(.)[不没]\1|{lex.zh_question_tail}|" + "|".join(lex.zh_negation_idioms)
)
ZH_NEGATION = re.compile("|".join(lex.zh_negations))


def norm_phrase(text: str) -> str:
    """Comparable form of an entity or a text: lower-case tokens joined by single spaces."""
    return " ".join(TOKEN.findall(text.lower()))


ALIAS = {norm_phrase(spelling): name for spelling, name in lex.aliases.items()}
ALIAS_PHRASE = re.compile(alternation([k for k in lex.aliases if " " in k or "." in k], latin=True))
CJK_ALIAS = re.compile(alternation([k for k in ALIAS if CJK.search(k)], latin=False))


KNOWN_SPELLINGS = EN_KNOWN | {k for k, name in ALIAS.items() if name in EN_KNOWN}


def canonical(name: str) -> str:
    phrase = norm_phrase(name)
    return ALIAS.get(phrase, phrase)


def consume(text: str, pattern: re.Pattern[str], take: Callable[[re.Match[str]], bool]) -> str:
    """Blank each match ``take`` accepts; lengths are kept so offsets stay aligned."""
    parts, last = [], 0
    for match in pattern.finditer(text):
        if take(match):
            parts += [text[last : match.start()], " " * (match.end() - match.start())]
            last = match.end()
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def digits_value(raw: str, scale: int = 1) -> str:
    text = raw.replace(",", "")
    if scale != 1:
        try:
            return format((Decimal(text) * scale).normalize(), "f")
        except InvalidOperation:
            return text
    text = text.removesuffix(":00") if ":" in text else text
    return re.sub(r"^(-?)0+(?=\d)", r"\1", text)


def en_words_value(words: str) -> int:
    total = current = 0
    for word in re.split(r"[\s-]+", words.removeprefix("a ")):
        if word in lex.en_scales and lex.en_scales[word] == 100:
            current = (current or 1) * 100
        elif word in lex.en_scales:
            total += (current or 1) * lex.en_scales[word]
            current = 0
        else:
            current += lex.en_number_words[word]
    return total + current


def zh_value(raw: str) -> str:
    if raw[0].isdigit():
        multiplier = {"万": 10_000, "亿": 100_000_000, "千": 1_000, "百": 100}.get(raw[-1], 1)
        return digits_value(raw.rstrip("万亿千百"), multiplier)
    if not any(c in lex.zh_small_units or c in lex.zh_big_units for c in raw):
        return str(int("".join(str(lex.zh_digits[c]) for c in raw)))  # 二零二四 -> 2024
    total = section = number = 0
    for char in raw:
        if char in lex.zh_digits:
            number = lex.zh_digits[char]
        elif char in lex.zh_small_units:
            section += (number or 1) * lex.zh_small_units[char]
            number = 0
        else:
            total += (section + number or 1) * lex.zh_big_units[char]
            section = number = 0
    return str(total + section + number)


def normalise(text: str) -> tuple[str, str]:
    """(case-preserving, lower-case) forms of equal length."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(QUOTE_CHARS)
    if DIGIT.search(text):
        text = LETTER_DIGIT.sub(" ", text)
    low = text.lower()
    return (text, low) if len(low) == len(text) else (low, low)
