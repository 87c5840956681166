"""Payment card numbers (Luhn + issuer prefix + length) and IBANs (ISO 13616 mod-97).

A card is 12-19 digits, plain or grouped, passing Luhn *and* a network's prefix and length,
so a Luhn-valid order number is not a card. IBANs are validated by python-stdnum.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import ModuleType

from semcache.privacy import _deps
from semcache.privacy.deadline import check_deadline
from semcache.privacy.findings import Finding, Kind

_MIN_CARD_DIGITS = 12

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
        (
            ("5018", "5018"),
            ("5020", "5020"),
            ("5038", "5038"),
            ("5893", "5893"),
            ("6304", "6304"),
            ("6759", "6759"),
            ("6761", "6763"),
        ),
        frozenset(range(12, 20)),
    ),
)


_FIRST_DIGITS = "".join(sorted({low[0] for _, ranges, _ in _NETWORKS for low, _ in ranges}))
_CARD = re.compile(rf"(?<![\d\-.])[{_FIRST_DIGITS}](?:[ \-]?\d){{11,18}}(?![\d]|[\-.]\d)")
"""A run that may be a card: it starts with a digit some network's prefix starts with."""

_BY_LENGTH: dict[int, tuple[tuple[str, str, str], ...]] = {
    length: tuple(
        (name, low, high)
        for name, ranges, lengths in _NETWORKS
        if length in lengths
        for low, high in ranges
    )
    for length in range(12, 20)
}


def card_network(digits: str) -> str | None:
    """The network whose prefix and length fit ``digits`` (Luhn not checked), or None."""
    for name, low, high in _BY_LENGTH.get(len(digits), ()):
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
            check_deadline()  # grouped digits are a candidate at every digit
            found = self._card_in(text, match.start(), match.end())
            if found is None:
                position = match.start() + 1  # a card may start inside a rejected run
                continue
            findings.append(found)
            position = found.end
        return findings

    def _card_in(self, text: str, start: int, end: int) -> Finding | None:
        """The longest card number starting at ``start``: the run, or a prefix of whole groups.

        A prefix ends before a separator and uses one kind of separator; its digits are the
        run's first ``stop - separators before stop``, so each cut costs O(1) before Luhn.
        """
        raw = text[start:end]
        digits = raw.replace(" ", "").replace("-", "")
        separators = [i for i, ch in enumerate(raw) if ch in " -"]
        space, hyphen = raw.find(" "), raw.find("-")
        mixed_from = max(space, hyphen) if space >= 0 and hyphen >= 0 else len(raw)
        cuts = [(len(raw), len(separators))] + [
            (i, k) for k, i in reversed(list(enumerate(separators)))
        ]
        for stop, before in cuts:
            if stop > mixed_from:
                continue
            if stop - before < _MIN_CARD_DIGITS:
                break  # cuts only get shorter
            prefix = digits[: stop - before]
            network = card_network(prefix)
            if network is not None and _deps.stdnum("luhn").is_valid(prefix):
                return Finding(Kind.CARD, start, start + stop, network)
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
            check_deadline()
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
    """The end of the longest valid IBAN starting at ``start``, or None.

    python-stdnum validates only the ends whose ISO 7064 mod-97 checksum already holds (one
    in 97), which is cheap to compute for every end.
    """
    head = text[start : start + 4].upper()
    suffix = head[:2].translate(_LETTER_DIGITS) + head[2:4]  # the BBAN comes first
    for stop in range(end, start + 14, -1):
        if text[stop - 1] == " " or (
            stop < len(text) and text[stop].isascii() and text[stop].isalnum()
        ):
            continue
        bban = text[start + 4 : stop].replace(" ", "").upper().translate(_LETTER_DIGITS)
        if int(bban + suffix) % 97 != 1:
            continue
        if iban.is_valid(text[start:stop].upper()):
            return stop
    return None


_LETTER_DIGITS = str.maketrans({chr(code): str(code - 55) for code in range(65, 91)})
"""ISO 13616's letters-to-digits (A=10 … Z=35)."""
