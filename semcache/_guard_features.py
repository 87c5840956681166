"""The answer-determining details of one question, for the answer guard (``guard_details``).

``extract(text)`` is pure and cached. It normalises the text (NFKC, curly quotes, letters split
from digits so "5km" reads "5 km"; a lower-case copy of equal length for matching) and reads,
stage by stage, each stage blanking what it consumed so the next cannot read it again ("3月" is a
month, not also a bare 3; "US dollars" is a currency, not also the entity "US"):

1. quoted titles and Chinese place and brand names (entities);
2. dates and times: month and weekday names, today/明天, last week/下周, time of day, seasons;
3. quantities: digits or number words (English, Chinese with 万/亿, "a hundred"), money and
   units attached to them, ordinals, percentages; a lone "one"/"一" is *weak* (often "a");
4. units named without a number ("in miles") and conversion directions ("USD to EUR");
5. comparison and direction words as (axis, pole): before/after, 升序/降序, cheaper/more;
6. negation parity, after dropping idioms that only look negative ("not only", "能不能");
7. entities: capitalised, mixed-case and all-caps English tokens outside sentence starts, known
   lower-case names (python, csv), capitalised Latin names inside Chinese text.

Each stage first checks a cheap trigger (a word set, a character) so most texts skip most
regexes; ``haystack`` keeps the text's tokens for "is this entity mentioned at all" checks.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from semcache import _guard_lexicon as lex


@dataclass(frozen=True, slots=True)
class Details:
    """What a question pins down; compared field by field by ``guard_details``."""

    quantities: frozenset[tuple[str, str]]  # (value, canonical unit or "")
    weak: frozenset[str]  # values written only as a lone "one"/"一"
    units: frozenset[tuple[str, str]]  # (dimension, unit) of every unit named
    conversions: frozenset[tuple[str, str]]  # (from unit, to unit)
    dates: frozenset[str]
    negation: int  # parity of negation cues: 0 or 1
    entities: frozenset[str]
    comparisons: frozenset[tuple[str, int]]  # (axis, pole)
    haystack: str  # " token token 中文 " for mention checks


def _alternation(words: Iterable[str], *, latin: bool) -> str:
    """Regex alternation, longest first so "more expensive" wins over "more"."""
    ordered = sorted(set(words), key=len, reverse=True)
    body = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)
    return rf"(?<![a-z0-9])(?:{body})(?![a-z0-9])" if latin else f"(?:{body})"


def _index(table: dict[str, tuple[str, tuple[str, ...]]]) -> dict[str, tuple[str, str]]:
    return {spelling: (canonical, dim) for canonical, (dim, spellings) in table.items()
            for spelling in spellings}  # fmt: skip


Poles = dict[str, tuple[tuple[str, ...], tuple[str, ...]]]


def _words_of(table: Poles) -> dict[str, tuple[str, int]]:
    return {w: (axis, pole) for axis, poles in table.items()
            for pole, words in enumerate(poles) for w in words}  # fmt: skip


class _Phrases:
    """Word-sequence lookup: a dictionary walk over the text's words, much faster than a
    regex alternation of hundreds of phrases. Matches only words separated by whitespace."""

    def __init__(self, table: dict[str, object]) -> None:
        self.table = {" ".join(k.split()): v for k, v in table.items()}
        self.first = frozenset(k.split()[0] for k in self.table)
        self.longest = max(len(k.split()) for k in self.table)

    def consume(self, text: str, take: Callable[[object], None]) -> str:
        """Call ``take`` with each phrase's value, longest phrase first; blank the phrases."""
        spans = [m.span() for m in _WORD.finditer(text)]
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


_CJK = re.compile(r"[\u3400-\u9fff]")
_DIGIT = re.compile(r"\d")
_QUANTITY_TRIGGER = re.compile(r"[\d$€£¥₹]")
_QUOTE_TRIGGER = re.compile(r"[\"“「《『']")
_WORD = re.compile(r"[a-z]+")
_LETTER_DIGIT = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
_QUOTE_CHARS = str.maketrans({"’": "'", "‘": "'", "`": "'"})
_TOKEN = re.compile(r"[a-z0-9]+(?:[.+#][a-z0-9]+)*[+#]*|[\u3400-\u9fff]+")
_LATIN_WORD = re.compile(r"\.?[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)*(?:\+\+|#)?")
_SENTENCE_START = re.compile(r"(?:^|[.?!:;\n。？！：；])[\s\"'(\[“]*")
_QUOTED = re.compile(
    r'"([^"]{1,80})"|“([^”]{1,80})”|「([^」]{1,80})」|《([^》]{1,80})》|『([^』]{1,80})』'
    r"|(?<![a-z0-9])'([^']{2,80})'(?![a-z0-9])"
)

_EN_UNIT = _index(lex.EN_UNITS)
_EN_BARE = [u for u in _EN_UNIT if u not in lex.EN_ATTACHED_ONLY and not u.startswith("°")]
_EN_NUM_WORDS = frozenset({*lex.EN_NUMBER_WORDS, *lex.EN_SCALES})
_EN_NUM = "|".join(sorted(_EN_NUM_WORDS, key=len, reverse=True))
_EN_QUANTITY = re.compile(
    r"(?P<cur>[$€£¥₹])?\s?"
    r"(?P<num>(?<![a-z0-9_.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![a-z0-9_.])-?\d+(?:[.:]\d+)*"
    r"|\ba\s(?:hundred|thousand|million|billion|dozen)\b"
    rf"|\b(?:{_EN_NUM})(?:[\s-]+(?:{_EN_NUM}))*\b)"
    r"(?:\s?(?P<scale>hundred|thousand|million|billion|trillion)\b)?"
    rf"(?:[\s-]?(?P<unit>{_alternation(_EN_UNIT, latin=False)})(?![a-z]))?"
)
_EN_ORDINAL = re.compile(_alternation(lex.EN_ORDINALS, latin=True))
_EN_BARE_UNIT = _Phrases({u: _EN_UNIT[u][::-1] for u in _EN_BARE if re.fullmatch(r"[a-z ]+", u)})
_EN_CONVERTIBLE = _alternation([u for u in _EN_BARE if len(u) >= 2], latin=True)
_EN_CONVERSION = re.compile(rf"({_EN_CONVERTIBLE})\s+(?:to|into|in|->|→)\s+({_EN_CONVERTIBLE})")
_EN_DATE_WORDS = frozenset({*lex.EN_MONTHS, *lex.EN_WEEKDAYS, *lex.EN_DAY_WORDS})
_EN_DATE = re.compile(
    rf"(?<![a-z])(?:(?P<rel>{'|'.join(lex.EN_RELATIVE)})\s+)?"
    rf"(?P<word>{'|'.join(sorted({*_EN_DATE_WORDS, *lex.EN_PERIODS}, key=len, reverse=True))})"
    r"(?![a-z])"
)
_EN_COMPARISON_WORDS = _words_of(lex.EN_COMPARISONS)
_EN_COMPARISON = _Phrases(_EN_COMPARISON_WORDS)
_EN_NEGATION_IDIOM = re.compile("|".join(lex.EN_NEGATION_IDIOMS))
_EN_NEGATION_WORDS = frozenset(w for w in lex.EN_NEGATIONS if w.isalpha())
_EN_KNOWN = frozenset(lex.EN_KNOWN_NAMES)

_GATE_QUANTITY = _EN_NUM_WORDS
_GATE_UNIT = _EN_BARE_UNIT.first
_GATE_DATE = _EN_DATE_WORDS | frozenset(lex.EN_PERIODS)

_ZH_NUMERALS = "零〇一二两三四五六七八九十百千万亿"
_ZH_UNIT = _index(lex.ZH_UNITS)
_ZH_BARE = [u for u in _ZH_UNIT if len(u) >= 2]  # single characters are too ambiguous bare
_ZH_CLASSIFIER = frozenset(lex.ZH_CLASSIFIERS)
_ZH_QUANTITY = re.compile(
    rf"百分之(?P<pct>\d+(?:\.\d+)?|[{_ZH_NUMERALS}]+)"
    rf"|(?P<ord>第)?(?P<num>\d+(?:\.\d+)?[万亿千百]?|[{_ZH_NUMERALS}]+)"
    rf"(?P<unit>{_alternation([*_ZH_UNIT, *lex.ZH_CLASSIFIERS], latin=False)})?"
)
_ZH_NUMERAL_IDIOM = re.compile("|".join(lex.ZH_NUMERAL_IDIOMS))
_ZH_UNIT_SYNONYM = re.compile("|".join(lex.ZH_UNIT_SYNONYMS))
_ZH_BARE_UNIT = re.compile(_alternation(_ZH_BARE, latin=False))
_ZH_CONVERSION = re.compile(
    rf"({_alternation(_ZH_BARE, latin=False)})"
    r"(?:换算成|换算为|转换成|转换为|转成|换成|等于多少|是多少|兑换成|兑换|兑|对|换)"
    rf"({_alternation(_ZH_BARE, latin=False)})"
)
_ZH_DATE = re.compile(
    _alternation(lex.ZH_DATE_WORDS, latin=False)
    + rf"|(?<!每)(?:{'|'.join(lex.ZH_WEEKDAY_PREFIXES)})(?P<wd>[一二三四五六日天末])(?![次个遍])"
)
_ZH_GAZETTEER = re.compile(_alternation(lex.ZH_GAZETTEER, latin=False))
_ZH_COMPARISON_WORDS: dict[str, tuple[str, int] | None] = {
    **_words_of(lex.ZH_COMPARISONS), **dict.fromkeys(lex.ZH_COMPARISON_IDIOMS)
}  # fmt: skip
_ZH_COMPARISON = re.compile(_alternation(_ZH_COMPARISON_WORDS, latin=False))
_ZH_NEGATION_IDIOM = re.compile(
    rf"(.)[不没]\1|{lex.ZH_QUESTION_TAIL}|" + "|".join(lex.ZH_NEGATION_IDIOMS)
)
_ZH_NEGATION = re.compile("|".join(lex.ZH_NEGATIONS))


def _norm_phrase(text: str) -> str:
    """Comparable form of an entity or a text: lower-case tokens joined by single spaces."""
    return " ".join(_TOKEN.findall(text.lower()))


_ALIAS = {_norm_phrase(spelling): name for spelling, name in lex.ALIASES.items()}
_ALIAS_PHRASE = re.compile(
    _alternation([k for k in lex.ALIASES if " " in k or "." in k], latin=True)
)
_CJK_ALIAS = re.compile(_alternation([k for k in _ALIAS if _CJK.search(k)], latin=False))


_KNOWN_SPELLINGS = _EN_KNOWN | {k for k, name in _ALIAS.items() if name in _EN_KNOWN}


def _canonical(name: str) -> str:
    phrase = _norm_phrase(name)
    return _ALIAS.get(phrase, phrase)


def _consume(text: str, pattern: re.Pattern[str], take: Callable[[re.Match[str]], bool]) -> str:
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


def _digits_value(raw: str, scale: int = 1) -> str:
    text = raw.replace(",", "")
    if scale != 1:
        try:
            return format((Decimal(text) * scale).normalize(), "f")
        except InvalidOperation:
            return text
    text = text.removesuffix(":00") if ":" in text else text
    return re.sub(r"^(-?)0+(?=\d)", r"\1", text)


def _en_words_value(words: str) -> int:
    total = current = 0
    for word in re.split(r"[\s-]+", words.removeprefix("a ")):
        if word in lex.EN_SCALES and lex.EN_SCALES[word] == 100:
            current = (current or 1) * 100
        elif word in lex.EN_SCALES:
            total += (current or 1) * lex.EN_SCALES[word]
            current = 0
        else:
            current += lex.EN_NUMBER_WORDS[word]
    return total + current


def _zh_value(raw: str) -> str:
    if raw[0].isdigit():
        multiplier = {"万": 10_000, "亿": 100_000_000, "千": 1_000, "百": 100}.get(raw[-1], 1)
        return _digits_value(raw.rstrip("万亿千百"), multiplier)
    if not any(c in lex.ZH_SMALL_UNITS or c in lex.ZH_BIG_UNITS for c in raw):
        return str(int("".join(str(lex.ZH_DIGITS[c]) for c in raw)))  # 二零二四 -> 2024
    total = section = number = 0
    for char in raw:
        if char in lex.ZH_DIGITS:
            number = lex.ZH_DIGITS[char]
        elif char in lex.ZH_SMALL_UNITS:
            section += (number or 1) * lex.ZH_SMALL_UNITS[char]
            number = 0
        else:
            total += (section + number or 1) * lex.ZH_BIG_UNITS[char]
            section = number = 0
    return str(total + section + number)


def _normalise(text: str) -> tuple[str, str]:
    """(case-preserving, lower-case) forms of equal length."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_QUOTE_CHARS)
    if _DIGIT.search(text):
        text = _LETTER_DIGIT.sub(" ", text)
    low = text.lower()
    return (text, low) if len(low) == len(text) else (low, low)


class _Reader:
    """One text's details, collected while the stages blank what they consume."""

    def __init__(self, text: str) -> None:
        self.text, self.low = _normalise(text)
        self.cjk = bool(_CJK.search(self.low))
        self.words = frozenset(_WORD.findall(self.low))
        self.token_list = _TOKEN.findall(self.low)
        self.tokens = frozenset(self.token_list)
        self.quantities: set[tuple[str, str]] = set()
        self.strong: set[str] = set()
        self.units: set[tuple[str, str]] = set()
        self.conversions: set[tuple[str, str]] = set()
        self.dates: set[str] = set()
        self.entities: set[str] = set()
        self.comparisons: set[tuple[str, int]] = set()
        self.negation_parity = 0

    def quantity(self, value: str, unit: str, dim: str, *, weak: bool = False) -> bool:
        self.quantities.add((value, unit))
        if unit:
            self.units.add((dim, unit))
        if not weak:
            self.strong.add(value)
        return True

    def quoted(self, match: re.Match[str]) -> bool:
        inner = next(group for group in match.groups() if group is not None)
        tokens = _norm_phrase(inner).split()
        if any(t not in lex.EN_COMMON_WORDS for t in tokens):  # not scare quotes: "the one"
            self.entities.add(_canonical(inner))
        return False

    def gazetteer(self, match: re.Match[str]) -> bool:
        self.entities.add(_ALIAS.get(match.group(), match.group()))
        return True

    def en_date(self, match: re.Match[str]) -> bool:
        rel, word = match["rel"], match["word"]
        prefix = f"{lex.EN_RELATIVE[rel]}_" if rel else ""
        if word in lex.EN_PERIODS:
            if not rel:
                return False  # "week" alone is a unit, read later
            self.dates.add(prefix + word)
        elif word in lex.EN_MONTHS:
            if word in ("may", "march") and not rel and not self._is_month(match, word):
                return False
            self.dates.add(f"{prefix}month{lex.EN_MONTHS[word]}")
        elif word in lex.EN_WEEKDAYS:
            self.dates.add(prefix + lex.EN_WEEKDAYS[word])
        elif re.search(r"\d\s*$", self.low[: match.start("word")]):
            return False  # "3 nights" is a quantity
        else:
            self.dates.add(prefix + lex.EN_DAY_WORDS[word])
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
        self.dates.add(lex.ZH_WEEKDAYS[wd] if wd else lex.ZH_DATE_WORDS[match.group()])
        return True

    def zh_quantity(self, match: re.Match[str]) -> bool:
        if match["pct"] is not None:
            return self.quantity(_zh_value(match["pct"]), "%", "ratio")
        num, unit, ordinal = match["num"], match["unit"], match["ord"]
        if num[0].isdigit() and not (unit or ordinal or num[-1] in "万亿千百"):
            return False  # plain digits: the English stage reads them, with Latin units
        if not num[0].isdigit() and len(num) == 1 and not (unit or ordinal):
            return False  # a lone numeral character is rarely a number ("三星", "一样")
        canonical, dim = ("ord", "ordinal") if ordinal else _ZH_UNIT.get(unit or "", ("", ""))
        return self.quantity(_zh_value(num), canonical, dim, weak=num == "一")

    def en_quantity(self, match: re.Match[str]) -> bool:
        num, unit = match["num"], match["unit"]
        scale = lex.EN_SCALES[match["scale"]] if match["scale"] else 1
        canonical, dim = _EN_UNIT[re.sub(r"\s+", " ", unit)] if unit else ("", "")
        if match["cur"]:
            canonical, dim = lex.CURRENCY_SYMBOLS[match["cur"]], "money"
        if num[0].isdigit() or num[0] == "-":
            return self.quantity(_digits_value(num, scale), canonical, dim)
        value = str(_en_words_value(num) * scale)
        return self.quantity(value, canonical, dim, weak=num in lex.EN_WEAK_WORDS)

    def en_ordinal(self, match: re.Match[str]) -> bool:
        word = match.group()
        if word == "second" and re.search(r"\b(?:a|per|one)\s+$", self.low[: match.start()]):
            self.units.add(("time", "s"))
            return True
        return self.quantity(str(lex.EN_ORDINALS[word]), "ord", "ordinal")

    def unit(self, found: object) -> None:
        self.units.add(found)  # type: ignore[arg-type]  # (dimension, unit) from the table

    def zh_unit(self, match: re.Match[str]) -> bool:
        canonical, dim = _ZH_UNIT[match.group()]
        self.units.add((dim, canonical))
        return True

    def comparison(self, found: object) -> None:
        if found is not None:
            self.comparisons.add(found)  # type: ignore[arg-type]  # (axis, pole)

    def zh_comparison(self, match: re.Match[str]) -> bool:
        self.comparison(_ZH_COMPARISON_WORDS[match.group()])
        return True

    def negation(self, text: str) -> int:
        """Parity of negation cues in ``text`` (place names already blanked: 无锡, 南非)."""
        count = 0
        if self.words & _EN_NEGATION_WORDS or "n't" in text:
            text = _EN_NEGATION_IDIOM.sub(" ", text)
            count += text.count("n't") + sum(w in _EN_NEGATION_WORDS for w in _WORD.findall(text))
        if self.cjk:
            count += len(_ZH_NEGATION.findall(_ZH_NEGATION_IDIOM.sub(" ", text)))
        return count % 2

    def _sentence_starts(self) -> set[int]:
        return {m.end() for m in _SENTENCE_START.finditer(self.text)}

    def latin_entities(self, masked: str) -> None:
        for spelling in self.tokens & _KNOWN_SPELLINGS:
            self.entities.add(_ALIAS.get(spelling, spelling))  # python, js, csv
        if self.text == self.low or self.text.isupper():
            return  # no capitals, or ALL CAPS: case says nothing about names
        candidates: list[tuple[int, str, str]] = []
        content = capitalised = 0
        for match in _LATIN_WORD.finditer(self.text):
            surface = match.group()
            if surface.islower():
                content += len(surface) >= 3 and surface not in lex.EN_COMMON_WORDS
                continue
            lower = surface.lower().lstrip(".")
            if lower in lex.EN_COMMON_WORDS or surface == "I":
                continue
            content += len(surface) >= 3
            capitalised += len(surface) >= 3
            if masked[match.start()] != " ":  # not consumed as a date, quantity or unit
                candidates.append((match.start(), surface, _ALIAS.get(lower, lower)))
        title_case = content >= 3 and capitalised >= 0.8 * content
        starts = set() if self.cjk or not candidates else self._sentence_starts()
        for start, surface, name in candidates:
            if name in _EN_KNOWN:
                continue  # already added
            if any(c.isupper() for c in surface[1:]) and any(c.islower() for c in surface):
                self.entities.add(name)  # iPhone, PayPal, macOS
            elif len(surface) >= 2 and surface.isupper():
                self.entities.add(name)  # CSV, FIFA, US
            elif not title_case and start not in starts:
                self.entities.add(name)  # a capitalised word mid-sentence

    def haystack(self) -> str:
        tokens = list(self.token_list)
        tokens += [_ALIAS[t] for t in tokens if t in _ALIAS]
        if "." in self.low or " " in self.low:
            tokens += [_ALIAS[_norm_phrase(p)] for p in _ALIAS_PHRASE.findall(self.low)]
        if self.cjk:
            tokens += [_ALIAS[g] for g in _CJK_ALIAS.findall(self.low)]
        return f" {' '.join(tokens)} "


def _read(r: _Reader) -> str:
    """Run the stages in order; returns the text with everything consumed blanked."""
    masked, words = r.low, r.words
    if _QUOTE_TRIGGER.search(masked):
        _consume(masked, _QUOTED, r.quoted)
    if r.cjk:
        masked = _consume(masked, _ZH_GAZETTEER, r.gazetteer)
    r.negation_parity = r.negation(masked)
    if r.cjk:
        masked = _ZH_UNIT_SYNONYM.sub(lambda m: lex.ZH_UNIT_SYNONYMS[m.group()], masked)
        masked = _consume(masked, _ZH_DATE, r.zh_date)
        for source, target in _ZH_CONVERSION.findall(masked):
            r.conversions.add((_ZH_UNIT[source][0], _ZH_UNIT[target][0]))
        masked = _ZH_NUMERAL_IDIOM.sub(lambda m: " " * len(m.group()), masked)
        masked = _consume(masked, _ZH_QUANTITY, r.zh_quantity)
    if words & _GATE_DATE:
        masked = _consume(masked, _EN_DATE, r.en_date)
    unit_words = words & _GATE_UNIT
    if len(unit_words) >= 2:
        for source, target in _EN_CONVERSION.findall(masked):
            r.conversions.add((_EN_UNIT[source][0], _EN_UNIT[target][0]))
    if _QUANTITY_TRIGGER.search(masked) or words & _GATE_QUANTITY:
        masked = _consume(masked, _EN_QUANTITY, r.en_quantity)
    if words.intersection(lex.EN_ORDINALS):
        masked = _consume(masked, _EN_ORDINAL, r.en_ordinal)
    if unit_words:
        masked = _EN_BARE_UNIT.consume(masked, r.unit)
    if r.cjk:
        masked = _consume(masked, _ZH_BARE_UNIT, r.zh_unit)
        masked = _consume(masked, _ZH_COMPARISON, r.zh_comparison)
    if words & _EN_COMPARISON.first:
        masked = _EN_COMPARISON.consume(masked, r.comparison)
    r.latin_entities(masked)
    return masked


@lru_cache(maxsize=8192)
def extract(text: str) -> Details:
    """Details of one question (pure; cached because stored candidates recur)."""
    reader = _Reader(text)
    _read(reader)
    return Details(
        quantities=frozenset(reader.quantities),
        weak=frozenset(v for v, _ in reader.quantities if v not in reader.strong),
        units=frozenset(reader.units),
        conversions=frozenset(reader.conversions),
        dates=frozenset(reader.dates),
        negation=reader.negation_parity,
        entities=frozenset(reader.entities),
        comparisons=frozenset(reader.comparisons),
        haystack=reader.haystack(),
    )
