"""Phone numbers, international and national, through Google's libphonenumber port.

``PhoneNumberMatcher`` runs per default region at ``Leniency.VALID`` (an assigned range for
its country, which rejects most dates and counters). Because numbering plans are dense, a
national CN number counts only as a mobile number or with the trunk ``0``, and a bare digit
run only as a CN mobile number or after a phone keyword. Work is bounded (:data:`TRIES_FLOOR`
plus one try per :data:`BYTES_PER_TRY` characters); a text needing more raises
:class:`~semcache.errors.ScanLimitExceeded` rather than being reported clean.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

from semcache.errors import ConfigError, ScanLimitExceeded
from semcache.privacy import _deps
from semcache.privacy.deadline import check_deadline
from semcache.privacy.detectors._context import preceded_by
from semcache.privacy.findings import Finding, Kind

DEFAULT_REGIONS = ("CN", "US")
_CN_MOBILE = re.compile(r"1[3-9]\d{9}")
_PHONE_CONTEXT = re.compile(
    r"phone|call|tel\b|mobile|cell|sms|text me|whats ?app|contact|fax|dial|number|"
    r"电话|手机|联系|号码|致电|拨打|微信|短信|座机|热线",
    re.IGNORECASE,
)
_CONTEXT_WINDOW = 40
_MAX_ROUNDS = 3
_MAX_TOKENS = 8
_DIGIT_RUN = re.compile(r"(?:\+|00)?[\d(][\d ().\-]{5,}\d")
_DOTTED_QUAD = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_MIN_DIGITS = 7
_SOME_DIGITS = re.compile(rf"(?:\D*+\d){{{_MIN_DIGITS}}}")
_NUMBER_RUN = re.compile(r"\d(?:[\W_xX]{0,4}\d)*")
_RUN_HOLDS_MIN_DIGITS = 5 * _MIN_DIGITS - 4
"""A number run at least this long holds seven digits (at most four separators each)."""
_LEFT_CONTEXT = 8
_RIGHT_CONTEXT = 40
"""Characters kept around a number run: a lead ``+(``, a letter before it, an extension."""
_MAX_DIGITS = 17
"""Digits in a window worth handing to libphonenumber (E.164 allows 15, plus ``00``)."""

TRIES_FLOOR = 1024
"""libphonenumber candidate attempts every text may use, however short."""
BYTES_PER_TRY = 512
"""Characters of text that buy one more attempt: the work allowed grows linearly."""


class _Tries:
    """The candidate attempts one ``detect`` call has left; matchers draw on them.

    An attempt is a candidate libphonenumber rejected (its own ``max_tries`` count) or a match
    it returned. Running out raises :class:`ScanLimitExceeded`.
    """

    __slots__ = ("left",)

    def __init__(self, length: int) -> None:
        self.left = TRIES_FLOOR + length // BYTES_PER_TRY

    def matches(
        self, phonenumbers: ModuleType, text: str, region: str, leniency: object
    ) -> list[Any]:
        check_deadline()
        if self.left <= 0:
            raise ScanLimitExceeded("phone detector: text too dense in number candidates")
        start = self.left
        matcher = phonenumbers.PhoneNumberMatcher(text, region, leniency, max_tries=start)
        found = []
        for match in matcher:
            found.append(match)
            # ``_max_tries``: libphonenumber's own count of rejected candidates left
            if len(found) + start - matcher._max_tries >= start:
                break
        self.left = matcher._max_tries - len(found)
        if self.left <= 0:
            raise ScanLimitExceeded("phone detector: text too dense in number candidates")
        return found


class PhoneDetector:
    """Finds phone numbers valid in their country.

    ``regions``: ISO 3166 codes whose national formats (no ``+``) are recognised; international
    numbers are recognised for every country regardless.
    """

    kinds = frozenset({Kind.PHONE})

    def __init__(self, regions: Sequence[str] = DEFAULT_REGIONS) -> None:
        if isinstance(regions, str) or not regions:
            raise ConfigError("PhoneDetector.regions must be a non-empty sequence of region codes")
        self._regions = tuple(region.upper() for region in regions)
        self._checked = False

    def load(self) -> None:
        """Import libphonenumber and check the regions against it."""
        self._phonenumbers()

    def _phonenumbers(self) -> ModuleType:
        module = _deps.phonenumbers()
        if not self._checked:
            known = module.SUPPORTED_REGIONS
            unknown = [region for region in self._regions if region not in known]
            if unknown:
                raise ConfigError(f"PhoneDetector.regions: unknown region code(s) {unknown}")
            self._checked = True
        return module

    def detect(self, text: str) -> Sequence[Finding]:
        if _SOME_DIGITS.match(text) is None:
            return []
        phonenumbers = self._phonenumbers()
        tries = _Tries(len(text))
        spans: set[tuple[int, int]] = set()
        for piece in _pieces(text):
            spans |= self._piece(phonenumbers, tries, text, *piece)
        return [Finding(Kind.PHONE, start, end, "phone") for start, end in sorted(spans)]

    def _piece(
        self, phonenumbers: ModuleType, tries: _Tries, text: str, start: int, end: int
    ) -> set[tuple[int, int]]:
        spans: set[tuple[int, int]] = set()
        segments = [(start, end)]
        # libphonenumber reads a number followed by more digits ("(206) 794-7729 010-28742761",
        # "(206) 794-7729 01200001E") as one invalid candidate and drops it. Two recoveries:
        # rescan the gaps between numbers already found, then try the whitespace-delimited
        # windows of every digit run still unexplained.
        for _ in range(_MAX_ROUNDS):
            new = {
                span
                for gap_start, gap_end in segments
                for span in self._scan(phonenumbers, tries, text, gap_start, gap_end)
                if span not in spans
            }
            if not new:
                break
            spans |= new
            segments = _gaps(sorted(spans), start, end)
        for gap_start, gap_end in segments:
            spans |= self._windows(phonenumbers, tries, text, gap_start, gap_end)
        return spans

    def _windows(
        self, phonenumbers: ModuleType, tries: _Tries, text: str, start: int, end: int
    ) -> set[tuple[int, int]]:
        found: set[tuple[int, int]] = set()
        for run in _DIGIT_RUN.finditer(text, start, end):
            # One token is tried too: "11010519740406134X , 010-28742761" is read by the
            # main scan as one candidate (the X as an extension mark) and dropped whole.
            tokens = [m.span() for m in re.finditer(r"\S+", run.group())]
            digits = [_count_digits(run.group()[a:b]) for a, b in tokens]
            taken_until = 0
            for first in range(len(tokens)):
                if tokens[first][0] < taken_until:
                    continue
                for last in range(min(len(tokens), first + _MAX_TOKENS) - 1, first - 1, -1):
                    if not _MIN_DIGITS <= sum(digits[first : last + 1]) <= _MAX_DIGITS:
                        continue
                    span = (run.start() + tokens[first][0], run.start() + tokens[last][1])
                    if self._valid(phonenumbers, tries, text, *span):
                        found.add(span)
                        taken_until = tokens[last][1]
                        break
        return found

    def _valid(
        self, phonenumbers: ModuleType, tries: _Tries, text: str, start: int, end: int
    ) -> bool:
        """Whether ``text[start:end]`` alone is a valid number grouped as its country groups it
        (``STRICT_GROUPING``: a window cut from a longer digit run has no context to vouch for it).
        """
        raw = text[start:end]
        for region in self._regions:
            for match in tries.matches(
                phonenumbers, raw, region, phonenumbers.Leniency.STRICT_GROUPING
            ):
                if (match.start, match.end) == (0, len(raw)) and _accept(raw, region):
                    return (
                        not raw.isdigit()
                        or _CN_MOBILE.fullmatch(raw) is not None
                        or (preceded_by(text, start, _PHONE_CONTEXT, _CONTEXT_WINDOW))
                    )
        return False

    def _scan(
        self, phonenumbers: ModuleType, tries: _Tries, text: str, start: int, end: int
    ) -> Iterator[tuple[int, int]]:
        segment = text[start:end]
        for region in self._regions:
            for match in tries.matches(phonenumbers, segment, region, phonenumbers.Leniency.VALID):
                raw = match.raw_string
                if _accept(raw, region) and (
                    not raw.isdigit()
                    or _CN_MOBILE.fullmatch(raw) is not None
                    or preceded_by(text, start + match.start, _PHONE_CONTEXT, _CONTEXT_WINDOW)
                ):
                    yield start + match.start, start + match.end


def _pieces(text: str) -> list[tuple[int, int]]:
    """The parts of ``text`` worth handing to libphonenumber (runs that can hold seven digits),
    with context around them.
    """
    pieces: list[tuple[int, int]] = []
    for run in _NUMBER_RUN.finditer(text):
        if (
            run.end() - run.start() < _RUN_HOLDS_MIN_DIGITS
            and _count_digits(run.group()) < _MIN_DIGITS
        ):
            continue
        start = max(0, run.start() - _LEFT_CONTEXT)
        end = min(len(text), run.end() + _RIGHT_CONTEXT)
        if pieces and start <= pieces[-1][1]:
            pieces[-1] = (pieces[-1][0], end)
        else:
            pieces.append((start, end))
    return pieces


def _count_digits(text: str) -> int:
    return sum(map(str.isdigit, text))


def _gaps(spans: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    gaps: list[tuple[int, int]] = []
    position = start
    for span_start, span_end in spans:
        if span_start > position:
            gaps.append((position, span_start))
        position = max(position, span_end)
    if position < end:
        gaps.append((position, end))
    return gaps


def _accept(raw: str, region: str) -> bool:
    if _DOTTED_QUAD.fullmatch(raw):
        return False  # an IPv4 address, which libphonenumber happily parses as a number
    stripped = raw.lstrip("(")
    if stripped.startswith(("+", "00")):
        return True
    if region != "CN":
        return True
    digits = "".join(ch for ch in raw if ch.isdigit())
    return digits.startswith("0") or _CN_MOBILE.fullmatch(digits) is not None
