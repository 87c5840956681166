"""Email addresses: a conservative RFC 5322 subset (ASCII local part, dotted domain, letter TLD).

Not flagged: SSH remotes such as ``git@github.com:org/repo.git`` (a service account in a URL,
not a person's address) and shapes without a letter TLD (``pkg@1.2.3``, ``user@localhost``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from semcache.privacy.findings import Finding, Kind

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])"
    r"[A-Za-z0-9](?:[A-Za-z0-9._%+\-]{0,62}[A-Za-z0-9_%+\-])?"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}"
    r"(?![A-Za-z0-9\-]|\.[A-Za-z0-9])"
)
_SSH_REMOTE = re.compile(r"git@[^\s:]+:")


class EmailDetector:
    """Finds email addresses."""

    kinds = frozenset({Kind.EMAIL})

    def detect(self, text: str) -> Sequence[Finding]:
        if "@" not in text:
            return []
        return [
            Finding(Kind.EMAIL, match.start(), match.end(), "email")
            for match in _EMAIL.finditer(text)
            if _SSH_REMOTE.match(text, match.start()) is None
        ]
