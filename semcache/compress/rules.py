"""Rule-based compression: filler phrases out, repeated instructions merged, whitespace collapsed.

The phrases are data (``rules/en.json``, ``rules/zh.json``, ``RuleSet.from_file``), the
passes are code: mask protected spans (``semcache.compress._mask``); run each rule set's
``delete`` and ``replace`` rules (a match holding a detail is left alone); drop a sentence
that repeats an earlier one of the same message, ignoring case, punctuation, labels and
``dedup_ignore`` words (never one under ``min_repeat_tokens`` words: short repeats are more
often data); collapse spaces and blank lines. Pure and deterministic; ``RuleCompressor``
runs it behind the detail check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from semcache.errors import ConfigError

from ._mask import mask
from .base import Refusal, Rewrite
from .check import holds_detail

BUILTIN_RULE_SETS = ("en", "zh")

# A clause starts at a line start (after indentation), after sentence or clause punctuation and
# its spaces, or after a list marker. The lead is kept; only the phrase after it is removed.
_CLAUSE_START = (
    r"(?P<lead>^[ \t]*|(?<=[.!?;:,)\]\ue001])[ \t]+|(?<=[-*•>])[ \t]+|(?<=[。！？；：，、]))"
)
_SENTENCE_END = (".", "!", "?", "-", "*", "•", ">", "\n", "。", "！", "？")


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled rule; see the module docstring for ``kind`` and ``at``."""

    id: str
    kind: Literal["delete", "replace"]
    regex: re.Pattern[str]
    replacement: str = ""

    def apply(self, text: str) -> str:
        if self.kind == "replace":
            return self.regex.sub(self._replace, text)
        parts: list[str] = []
        last, capitalise = 0, False
        for match in self.regex.finditer(text):
            if match.end() == match.end("lead") or holds_detail(
                text[match.end("lead") : match.end()]
            ):
                continue
            chunk = text[last : match.start()] + (match.group("lead") or "")
            parts.append(_capitalised(chunk) if capitalise else chunk)
            before = text[: match.end("lead")].rstrip(" \t")
            capitalise = not before or before.endswith(_SENTENCE_END)
            last = match.end()
        tail = text[last:]
        parts.append(_capitalised(tail) if capitalise else tail)
        return "".join(parts)

    def _replace(self, match: re.Match[str]) -> str:
        if holds_detail(match.group()):
            return match.group()
        new = match.expand(self.replacement)
        if new and match.group()[:1].isupper():
            return new[0].upper() + new[1:]
        return new


def _capitalised(text: str) -> str:
    if text[:1].isascii() and text[:1].islower():
        return text[0].upper() + text[1:]
    return text


@dataclass(frozen=True, slots=True)
class RuleSet:
    """A named list of rules plus the words repeated-sentence matching ignores."""

    name: str
    rules: tuple[Rule, ...]
    dedup_ignore: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "rule set") -> RuleSet:
        """Validate and compile; a bad entry raises ``ConfigError`` naming its field."""
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{source}: field 'name' must be a non-empty string")
        raw_rules = data.get("rules")
        if not isinstance(raw_rules, list):
            raise ConfigError(f"{source}: field 'rules' must be a list")
        rules = tuple(_compile(raw, f"{source}: rules[{i}]") for i, raw in enumerate(raw_rules))
        ignore = data.get("dedup_ignore", [])
        if not isinstance(ignore, list) or not all(isinstance(w, str) and w for w in ignore):
            raise ConfigError(f"{source}: field 'dedup_ignore' must be a list of words")
        return cls(name, rules, tuple(ignore))

    @classmethod
    def from_file(cls, path: str | Path) -> RuleSet:
        """A rule set from a JSON file shaped like the built-in ``rules/en.json``."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read rule set {str(path)!r}: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: a rule set is a JSON object")
        return cls.from_dict(data, source=str(path))

    @classmethod
    def builtin(cls, name: str) -> RuleSet:
        """One of ``BUILTIN_RULE_SETS``."""
        if name not in BUILTIN_RULE_SETS:
            raise ConfigError(f"unknown rule set {name!r}; built in: {BUILTIN_RULE_SETS}")
        text = (
            resources.files("semcache.compress").joinpath(f"rules/{name}.json").read_text("utf-8")
        )
        return cls.from_dict(json.loads(text), source=f"built-in rule set {name!r}")


def _compile(raw: object, where: str) -> Rule:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a rule is an object with id, kind and pattern")
    rule_id, kind, pattern = raw.get("id"), raw.get("kind"), raw.get("pattern")
    if not isinstance(rule_id, str) or not rule_id:
        raise ConfigError(f"{where}: field 'id' must be a non-empty string")
    if kind not in ("delete", "replace"):
        raise ConfigError(f"{where} ({rule_id}): field 'kind' must be 'delete' or 'replace'")
    if not isinstance(pattern, str) or not pattern:
        raise ConfigError(f"{where} ({rule_id}): field 'pattern' must be a non-empty regex")
    at = raw.get("at", "anywhere")
    if at not in ("anywhere", "clause_start"):
        raise ConfigError(f"{where} ({rule_id}): field 'at' must be 'anywhere' or 'clause_start'")
    replacement = raw.get("replacement", "")
    if kind == "replace" and not isinstance(replacement, str):
        raise ConfigError(f"{where} ({rule_id}): field 'replacement' must be a string")
    lead = _CLAUSE_START if at == "clause_start" else r"(?P<lead>)"
    body = f"{lead}(?:{pattern})[ \\t]*" if kind == "delete" else f"(?:{pattern})"
    try:
        regex = re.compile(body, re.IGNORECASE | re.MULTILINE)
    except re.error as exc:
        raise ConfigError(
            f"{where} ({rule_id}): field 'pattern' is not a valid regex: {exc}"
        ) from exc
    return Rule(rule_id, kind, regex, replacement)


# -- repeated sentences --------------------------------------------------------------------
_SENTENCE = re.compile(r"\S.*?(?:[.!?]+(?=\s|$)|[。！？；]+|$)")
_LIST_MARKER = re.compile(
    r"^(?:[-*•>]+|\ue000\d+\ue001[.)、]|\(?[a-z]\)|[一二三四五六七八九十]+、"
    r"|\[[^\]\n]{1,40}\]|【[^】\n]{1,20}】)\s*"
)
_LABEL = re.compile(r"\[[^\]\n]{1,40}\]\s*|【[^】\n]{1,20}】")
_KEY_TOKEN = re.compile(r"\ue000\d+\ue001|[\u3400-\u9fff]|[^\W_]+")


class _Repeats:
    """Sentence keys seen so far in one message (see the module docstring, pass 3)."""

    def __init__(self, sets: Iterable[RuleSet], min_tokens: int) -> None:
        ignore = {w.casefold() for s in sets for w in s.dedup_ignore}
        self._words = frozenset(w for w in ignore if w.isascii())
        phrases = sorted((w for w in ignore if not w.isascii()), key=len, reverse=True)
        self._phrases = re.compile("|".join(map(re.escape, phrases))) if phrases else None
        self._min_tokens = min_tokens
        self._seen: set[tuple[str, ...]] = set()

    def key(self, sentence: str) -> tuple[str, ...]:
        text = _LIST_MARKER.sub("", sentence.strip()).casefold()
        if self._phrases is not None:
            text = self._phrases.sub(" ", text)
        return tuple(t for t in _KEY_TOKEN.findall(text) if t not in self._words)

    def is_repeat(self, sentence: str) -> bool:
        key = self.key(sentence)
        if len(key) < self._min_tokens:
            return False
        if key in self._seen:
            return True
        self._seen.add(key)
        return False


def _drop_repeats(text: str, repeats: _Repeats) -> str:
    lines: list[str] = []
    for line in text.split("\n"):
        kept: list[str] = []
        last, dropped = 0, False
        for match in _SENTENCE.finditer(line):
            if repeats.is_repeat(match.group()):
                label = _LABEL.match(match.group())  # "[Document 5]" stays: it is cited
                kept.append(line[last : match.start()] + (label.group().rstrip() if label else ""))
                last, dropped = match.end(), True
        kept.append(line[last:])
        new = "".join(kept)
        if dropped and not new.strip():
            continue  # the whole line repeated earlier lines
        lines.append(new)
    return "\n".join(lines)


# -- tidying -------------------------------------------------------------------------------
_TIDY: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"(?m)^([ \t]*(?:[-*•>][ \t]+)?)[,;，、；][ \t]*"), r"\1"),  # orphaned comma
    (re.compile(r"[ \t]+([,;.!?])(?=\s|$)"), r"\1"),
    (re.compile(r",[ \t]*,"), ","),
    (re.compile(r"([。！？；：])[，、]+"), r"\1"),
    (re.compile(r"，[ \t]*，+"), "，"),
    (re.compile(r"(?<=\S)[ \t]{2,}"), " "),  # interior space runs; indentation kept
    (re.compile(r"[ \t]+$", re.MULTILINE), ""),
    (re.compile(r"\n{3,}"), "\n\n"),  # blank-line runs
)


def _tidy(text: str) -> str:
    for pattern, replacement in _TIDY:
        text = pattern.sub(replacement, text)
    return text.strip("\n")


class RuleRewriter:
    """A ``Rewriter`` running rule sets (default: every built-in one) over a message text."""

    def __init__(
        self, rule_sets: Iterable[RuleSet] | None = None, *, min_repeat_tokens: int = 5
    ) -> None:
        chosen = tuple(rule_sets) if rule_sets is not None else None
        self._sets = (
            chosen if chosen is not None else tuple(map(RuleSet.builtin, BUILTIN_RULE_SETS))
        )
        if min_repeat_tokens < 1:
            raise ConfigError("min_repeat_tokens must be >= 1")
        self._min_repeat_tokens = min_repeat_tokens

    @property
    def name(self) -> str:
        return "rules"

    @property
    def rule_sets(self) -> tuple[RuleSet, ...]:
        return self._sets

    def apply(self, text: str) -> str:
        """The rewritten text (pure; see the module docstring)."""
        masked = mask(text)
        out = masked.text
        for rule_set in self._sets:
            for rule in rule_set.rules:
                out = rule.apply(out)
        out = _drop_repeats(out, _Repeats(self._sets, self._min_repeat_tokens))
        return masked.restore(_tidy(out))

    async def rewrite(self, text: str, *, model: str) -> Rewrite:
        new = self.apply(text)
        if new == text:
            return Rewrite(None, Refusal.NOTHING_REMOVED)
        return Rewrite(new)
