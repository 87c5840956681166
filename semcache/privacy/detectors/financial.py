"""Payment card numbers (Luhn + issuer prefix + length) and IBANs (ISO 13616 mod-97).

A card candidate is 12-19 digits, written plain or in groups separated by one kind of separator
(space or hyphen); it counts only when its Luhn check digit is right *and* its prefix and length
belong to a card network, so an order number that happens to pass Luhn but starts with, say, 8 is
not a card. An IBAN candidate is a country code, two check digits and 11-30 alphanumerics
(optionally grouped by spaces); python-stdnum validates the country's length, BBAN format and
the mod-97 checksum.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import ModuleType

from semcache.privacy import _deps
from semcache.privacy.findings import Finding, Kind

_CARD = re.compile(r"(?<![\d\-.])\d(?:[ \-]?\d){11,18}(?![\d]|[\-.]\d)")

# (network, prefixes as (low, high) inclusive ranges over the first len(low) digits, lengths)
_NETWORKS: tuple[tuple[str, tuple[tuple[str, str], ...], frozenset[int]], ...] = (
    ("visa", (("4", "4"),), frozenset({13, 16, 19})),
    ("mastercard", (("51", "55"), ("2221", "2720")), frozenset({16})),
    ("amex", (("34", "34"), ("37", "37")), frozenset({15})),
    ("discover", (("6011", "6011"), ("644", "649"), ("65", "65")), frozenset({16, 19})),
    ("jcb", (("3528", "3589"),), frozenset(range(16, 20))),
    ("unionpay", (("62", "62"), ("81", "81")), frozenset(range(16, 20))),
    ("diners", (("300", "305"), ("36", "36"), ("38", "39")), frozenset(range(14, 20))),
    ("mir", (("2200", "2204"),), frozenset(range(16, 20))),
    (
        "maestro",
        (("5018", "5018"), ("5020", "5020"), ("5038", "5038"), ("5893", "5893"),
         ("6304", "6304"), ("6759", "6759"), ("6761", "6763")),
        frozenset(range(12, 20)),
    ),
)  # fmt: skip


def card_network(digits: str) -> str | None:
    """The network whose prefix and length fit ``digits`` (Luhn not checked), or None."""
    for name, ranges, lengths in _NETWORKS:
        if len(digits) not in lengths:
            continue
        for low, high in ranges:
            if low <= digits[: len(low)] <= high:
                return name
    return None


class CardDetector:
    """Finds payment card numbers."""

    kinds = frozenset({Kind.CARD})

    def detect(self, text: str) -> Sequence[Finding]:
        findings: list[Finding] = []
        position = 0
        while (match := _CARD.search(text, position)) is not None:
            found = self._card_in(text, match.start(), match.end())
            if found is None:
                position = match.start() + 1  # a card may start inside a rejected run
                continue
            findings.append(found)
            position = found.end
        return findings

    def _card_in(self, text: str, start: int, end: int) -> Finding | None:
        """The longest card number starting at ``start``: the run, or a prefix of whole groups."""
        raw = text[start:end]
        cuts = [end] + [start + i for i in range(len(raw) - 1, 0, -1) if raw[i] in " -"]
        for stop in cuts:
            candidate = text[start:stop]
            if len({ch for ch in candidate if not ch.isdigit()}) > 1:
                continue
            digits = candidate.replace(" ", "").replace("-", "")
            network = card_network(digits)
            if network is not None and _deps.stdnum("luhn").is_valid(digits):
                return Finding(Kind.CARD, start, stop, network)
        return None


_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ ]?[A-Za-z0-9]){11,30}")


class IbanDetector:
    """Finds IBANs; the longest prefix of a candidate that validates is the span."""

    kinds = frozenset({Kind.IBAN})

    def detect(self, text: str) -> Sequence[Finding]:
        findings: list[Finding] = []
        iban = None
        position = 0
        while (match := _IBAN.search(text, position)) is not None:
            if iban is None:
                iban = _deps.stdnum("iban")
            end = _longest_valid(iban, text, match.start(), match.end())
            if end is None:
                position = match.start() + 1
                continue
            findings.append(Finding(Kind.IBAN, match.start(), end, "iban"))
            position = end
        return findings


def _longest_valid(iban: ModuleType, text: str, start: int, end: int) -> int | None:
    for stop in range(end, start + 14, -1):
        if text[stop - 1] == " " or (
            stop < len(text) and text[stop].isascii() and text[stop].isalnum()
        ):
            continue
        if iban.is_valid(text[start:stop].upper()):
            return stop
    return None
