"""Protected spans: what no compression rule may rewrite.

``mask(text)`` replaces code, URLs, e-mail addresses, quotes, JSON-like blocks and numbers
with placeholders ``U+E000 <index> U+E001`` (private-use characters no rule matches);
``Masked.restore`` puts them back byte for byte. Identical spans share a placeholder, so a
passage repeated verbatim is still a repeat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPEN, CLOSE = "\ue000", "\ue001"
PLACEHOLDER = re.compile(f"{OPEN}(\\d+){CLOSE}")

# Order matters: earlier patterns claim their spans first (a URL inside code stays code).
_SPANS = [
    re.compile(r"(?ms)^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$"),  # fenced code
    re.compile(r"(?m)^(?: {4,}|\t)\S.*$"),  # indented code line
    re.compile(r"`[^`\n]+`"),  # inline code
    re.compile(r"(?i)\b(?:https?|ftp)://[^\s<>\"'`，。；）]+|\bwww\.[^\s<>\"'`，。；）]+"),
    re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),  # e-mail
    re.compile(r"\"[^\"\n]{1,400}\"|“[^”\n]{1,400}”|「[^」\n]{1,400}」|『[^』\n]{1,400}』"),
    re.compile(r"《[^》\n]{1,100}》|‘[^’\n]{1,400}’"),
    re.compile(r"(?<![\w'])'[^'\n]{1,200}'(?![\w'])"),  # 'single quoted', not don't/it's
    re.compile(r"[$€£¥]?\d[\d,.:/_-]*\d%?|[$€£¥]?\d%?"),  # numbers, times, versions, dates
]
_URL_TRAILING = ".,;:!?)]"


def _json_blocks(text: str) -> list[tuple[int, int]]:
    """Balanced ``{...}`` blocks and ``[...]`` blocks that contain a ``:`` or a quote."""
    found: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        if text[i] in "{[":
            end = _balanced_end(text, i)
            if end is not None:
                inner = text[i:end]
                if text[i] == "{" or ":" in inner or '"' in inner:
                    found.append((i, end))
                    i = end
                    continue
        i += 1
    return found


def _balanced_end(text: str, start: int) -> int | None:
    pairs = {"{": "}", "[": "]"}
    stack = [pairs[text[start]]]
    for j in range(start + 1, min(len(text), start + 20_000)):
        ch = text[j]
        if ch in pairs:
            stack.append(pairs[ch])
        elif ch in "}]":
            if ch != stack.pop():
                return None
            if not stack:
                return j + 1
    return None


@dataclass(frozen=True, slots=True)
class Masked:
    """A text with protected spans replaced; ``spans[i]`` is placeholder ``i``'s original."""

    text: str
    spans: tuple[str, ...]

    def restore(self, text: str) -> str:
        """``text`` (a rewrite of ``self.text``) with every placeholder put back."""
        return PLACEHOLDER.sub(lambda m: self.spans[int(m.group(1))], text)


def protected_spans(text: str) -> list[tuple[int, int]]:
    """Non-overlapping (start, end) of every protected span, in text order."""
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    for pattern in _SPANS[:2]:
        taken += [m.span() for m in pattern.finditer(text) if free(*m.span())]
    taken += [span for span in _json_blocks(text) if free(*span)]
    for pattern in _SPANS[2:]:
        for match in pattern.finditer(text):
            start, end = match.span()
            if pattern is _SPANS[3]:
                while end > start and text[end - 1] in _URL_TRAILING:
                    end -= 1  # "see https://x.io/a." -> the full stop is prose
            if free(start, end):
                taken.append((start, end))
    return sorted(taken)


def mask(text: str) -> Masked:
    """Replace every protected span of ``text`` with a placeholder (see the module doc)."""
    index: dict[str, int] = {}
    parts: list[str] = []
    last = 0
    for start, end in protected_spans(text):
        span = text[start:end]
        number = index.setdefault(span, len(index))
        parts += [text[last:start], f"{OPEN}{number}{CLOSE}"]
        last = end
    parts.append(text[last:])
    return Masked("".join(parts), tuple(index))
