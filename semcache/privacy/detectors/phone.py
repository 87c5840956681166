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
from collections.abc import Sequence
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
        spans: dict[tuple[int, int], None] = {}
        for region in self._regions:
            matcher = phonenumbers.PhoneNumberMatcher(
                text, region, leniency=phonenumbers.Leniency.VALID
            )
            for match in matcher:
                if _accept(match.raw_string, region) and (
                    not match.raw_string.isdigit()
                    or _CN_MOBILE.fullmatch(match.raw_string) is not None
                    or preceded_by(text, match.start, _PHONE_CONTEXT, _CONTEXT_WINDOW)
                ):
                    spans.setdefault((match.start, match.end), None)
        return [Finding(Kind.PHONE, start, end, "phone") for start, end in spans]


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
