"""Small text helpers the detectors share: keyword context before a match."""

from __future__ import annotations

import re


def preceded_by(text: str, start: int, keywords: re.Pattern[str], window: int) -> bool:
    """True when ``keywords`` matches within the ``window`` characters before ``start``."""
    return keywords.search(text, max(0, start - window), start) is not None
