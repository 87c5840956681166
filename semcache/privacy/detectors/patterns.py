"""User-supplied patterns: named regular expressions for data only the user knows is private
(employee numbers, internal account ids, patient numbers)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from semcache.errors import ConfigError
from semcache.privacy.findings import Finding, Kind

_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


def compile_patterns(patterns: Mapping[str, str | re.Pattern[str]]) -> dict[str, re.Pattern[str]]:
    """Validate and compile ``{name: regex}``; raise ConfigError naming the bad entry.

    A name is lower-case ``[a-z][a-z0-9_]*`` (it becomes the scheme label and the redaction
    placeholder ``[NAME]``); a pattern must compile and must not match the empty string.
    """
    compiled: dict[str, re.Pattern[str]] = {}
    for name, pattern in patterns.items():
        if not isinstance(name, str) or _NAME.fullmatch(name) is None:
            raise ConfigError(
                f"privacy pattern name {name!r} must match [a-z][a-z0-9_]* (at most 40 chars)"
            )
        try:
            regex = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)
        except (re.error, TypeError) as exc:
            raise ConfigError(f"privacy pattern {name!r} is not a valid regex: {exc}") from None
        if regex.search("") is not None:
            raise ConfigError(f"privacy pattern {name!r} matches the empty string")
        compiled[name] = regex
    return compiled


class PatternDetector:
    """Finds matches of user patterns; each finding is ``Kind.CUSTOM`` with the pattern's name."""

    kinds = frozenset({Kind.CUSTOM})

    def __init__(self, patterns: Mapping[str, str | re.Pattern[str]]) -> None:
        self._patterns = compile_patterns(patterns)

    def detect(self, text: str) -> Sequence[Finding]:
        return [
            Finding(Kind.CUSTOM, match.start(), match.end(), name)
            for name, regex in self._patterns.items()
            for match in regex.finditer(text)
            if match.end() > match.start()
        ]
