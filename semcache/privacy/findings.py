"""What a detector reports: the kind of private data and where it sits, never the data itself.

A :class:`Finding` carries offsets into the scanned text and a scheme label (``"visa"``,
``"cn_ric"``, ``"aws_access_key"``, a user pattern's name), so counting, logging and metrics can
use it without ever holding the matched characters.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from semcache.errors import ConfigError


class Kind(enum.StrEnum):
    """The kinds of private data semcache recognises; ``CUSTOM`` is every user pattern."""

    EMAIL = "email"
    PHONE = "phone"
    CARD = "card"
    IBAN = "iban"
    NATIONAL_ID = "national_id"
    IP = "ip"
    SECRET = "secret"
    CUSTOM = "custom"


@dataclass(frozen=True, slots=True)
class Finding:
    """One span of private data in a text: ``text[start:end]`` (Python string offsets).

    ``scheme`` says which rule matched (e.g. ``"visa"``, ``"cn_ric"``, a custom pattern's name);
    it is safe to log. The matched text is deliberately not a field.
    """

    kind: Kind
    start: int
    end: int
    scheme: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.kind, Kind):
            raise ConfigError(f"Finding.kind must be a Kind, got {self.kind!r}")
        if self.start < 0 or self.end <= self.start:
            raise ConfigError(
                f"Finding span must satisfy 0 <= start < end, got {self.start}..{self.end}"
            )


@runtime_checkable
class PrivateDataDetector(Protocol):
    """Finds private data in one text. Plug in Presidio or your own rules by implementing this.

    Contract: returns findings with offsets into ``text`` (any order, may overlap); never
    mutates or stores ``text``; a text without private data gives an empty sequence.
    """

    def detect(self, text: str) -> Sequence[Finding]: ...
