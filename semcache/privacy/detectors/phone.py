"""Phone numbers, international and national, through Google's libphonenumber port.

``phonenumbers.PhoneNumberMatcher`` runs once per default region (numbers written with ``+`` or
``00`` are found whatever the region) at ``Leniency.VALID``: the number must be a valid, assigned
range for its country, which rejects most dates, counters and order numbers.

Two extra rules for national numbers (no ``+``/``00``), because numbering plans are dense enough
that many digit runs parse as valid: a CN national number counts only when it is a mobile
number (``1[3-9]`` and 11 digits) or written with the trunk ``0`` (``010-62345678``); and a
number written as one bare run of digits (``2147483647``) counts only when it is a CN mobile
number or a phone keyword (``call``, ``tel``, ``电话``…) precedes it. A phone number inside
code (``send_sms("+8613912345678")``) is still a phone number: it is flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from types import ModuleType

from semcache.errors import ConfigError
from semcache.privacy import _deps
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
        if sum(ch.isdigit() for ch in text) < 7:
            return []
        phonenumbers = self._phonenumbers()
        spans: set[tuple[int, int]] = set()
        segments = [(0, len(text))]
        # libphonenumber reads a number followed by more digits ("(206) 794-7729 010-28742761",
        # "(206) 794-7729 01200001E") as one invalid candidate and drops it. Two recoveries:
        # rescan the gaps between numbers already found, then try the whitespace-delimited
        # windows of every digit run still unexplained.
        for _ in range(_MAX_ROUNDS):
            new = {
                span
                for start, end in segments
                for span in self._scan(phonenumbers, text, start, end)
                if span not in spans
            }
            if not new:
                break
            spans |= new
            segments = _gaps(sorted(spans), len(text))
        for start, end in segments:
            spans |= self._windows(phonenumbers, text, start, end)
        return [Finding(Kind.PHONE, start, end, "phone") for start, end in sorted(spans)]

    def _windows(
        self, phonenumbers: ModuleType, text: str, start: int, end: int
    ) -> set[tuple[int, int]]:
        found: set[tuple[int, int]] = set()
        for run in _DIGIT_RUN.finditer(text, start, end):
            # One token is tried too: "11010519740406134X , 010-28742761" is read by the
            # main scan as one candidate (the X as an extension mark) and dropped whole.
            tokens = [m.span() for m in re.finditer(r"\S+", run.group())]
            taken_until = 0
            for first in range(len(tokens)):
                if tokens[first][0] < taken_until:
                    continue
                for last in range(min(len(tokens), first + _MAX_TOKENS) - 1, first - 1, -1):
                    span = (run.start() + tokens[first][0], run.start() + tokens[last][1])
                    if self._valid(phonenumbers, text, *span):
                        found.add(span)
                        taken_until = tokens[last][1]
                        break
        return found

    def _valid(self, phonenumbers: ModuleType, text: str, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` alone is a valid number grouped as its country groups it.

        Stricter than the main scan (``STRICT_GROUPING``): a window cut out of a longer digit
        run has no surrounding text to vouch for it, so "3414 225263" (an Amex-style group)
        must not pass as the US number 341-422-5263.
        """
        raw = text[start:end]
        for region in self._regions:
            matcher = phonenumbers.PhoneNumberMatcher(
                raw, region, leniency=phonenumbers.Leniency.STRICT_GROUPING
            )
            for match in matcher:
                if (match.start, match.end) == (0, len(raw)) and _accept(raw, region):
                    return (
                        not raw.isdigit()
                        or _CN_MOBILE.fullmatch(raw) is not None
                        or (preceded_by(text, start, _PHONE_CONTEXT, _CONTEXT_WINDOW))
                    )
        return False

    def _scan(
        self, phonenumbers: ModuleType, text: str, start: int, end: int
    ) -> Iterator[tuple[int, int]]:
        segment = text[start:end]
        for region in self._regions:
            matcher = phonenumbers.PhoneNumberMatcher(
                segment, region, leniency=phonenumbers.Leniency.VALID
            )
            for match in matcher:
                raw = match.raw_string
                if _accept(raw, region) and (
                    not raw.isdigit()
                    or _CN_MOBILE.fullmatch(raw) is not None
                    or preceded_by(text, start + match.start, _PHONE_CONTEXT, _CONTEXT_WINDOW)
                ):
                    yield start + match.start, start + match.end


def _gaps(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    gaps: list[tuple[int, int]] = []
    position = 0
    for start, end in spans:
        if start > position:
            gaps.append((position, start))
        position = max(position, end)
    if position < length:
        gaps.append((position, length))
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
