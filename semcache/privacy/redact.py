"""Masking findings in a text: each merged span becomes a placeholder such as ``[EMAIL]``.

The result holds no character of any finding's span; text outside is kept byte for byte;
deterministic. Idempotent with :class:`~semcache.privacy.CompositeDetector`, which ignores
matches inside placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from semcache.errors import ConfigError
from semcache.privacy.findings import Finding, Kind

PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*\]")
"""What a redaction placeholder looks like."""

PRIORITY: tuple[Kind, ...] = (
    Kind.CUSTOM,
    Kind.SECRET,
    Kind.CARD,
    Kind.IBAN,
    Kind.NATIONAL_ID,
    Kind.EMAIL,
    Kind.IP,
    Kind.PHONE,
)
"""Which kind names a span when findings of several kinds overlap (first wins)."""

_RANK = {kind: rank for rank, kind in enumerate(PRIORITY)}


def placeholder(finding: Finding) -> str:
    """``[EMAIL]``, ``[NATIONAL_ID]``…; a custom pattern's finding uses its own name."""
    if finding.kind is Kind.CUSTOM and finding.scheme:
        return f"[{finding.scheme.upper()}]"
    return f"[{finding.kind.name}]"


def merge(findings: Sequence[Finding]) -> list[Finding]:
    """Non-overlapping findings covering the union of the spans, sorted by start; a merged span is
    named by the finding containing the others (an IBAN stays an IBAN), else by :data:`PRIORITY`.
    """
    ordered = sorted(findings, key=lambda f: (f.start, f.end))
    merged: list[Finding] = []
    for finding in ordered:
        if merged and finding.start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = _combine(last, finding)
        else:
            merged.append(finding)
    return merged


def _combine(a: Finding, b: Finding) -> Finding:
    start, end = min(a.start, b.start), max(a.end, b.end)
    if (a.start, a.end) == (start, end) and (b.start, b.end) != (start, end):
        lead = a
    elif (b.start, b.end) == (start, end) and (a.start, a.end) != (start, end):
        lead = b
    else:
        lead = a if _RANK[a.kind] <= _RANK[b.kind] else b
    return Finding(lead.kind, start, end, lead.scheme)


def redact(text: str, findings: Sequence[Finding]) -> str:
    """``text`` with every finding's span replaced by its placeholder."""
    for finding in findings:
        if finding.end > len(text):
            raise ConfigError(f"finding {finding} lies beyond the text ({len(text)} chars)")
    parts: list[str] = []
    position = 0
    for finding in merge(findings):
        parts.append(text[position : finding.start])
        parts.append(placeholder(finding))
        position = finding.end
    parts.append(text[position:])
    return "".join(parts)
