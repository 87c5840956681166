"""Offline stand-ins for the models ``compress-eval`` talks to, for tests and benchmarks.

``fake_llm_responder`` plugs into ``semcache.testing.FakeOpenAIServer(responder=...)`` and
answers by the request's system message: as the rewrite model (``REWRITE_INSTRUCTION``) it
drops repeats and small words and, like a careless model, every sentence whose stable hash
is ``0 mod drop_every``; as the judge (``JUDGE_INSTRUCTION``) SAME when both answers are
equal; otherwise it lists the prompt's details, so an answer changes exactly when a detail
is lost. Deterministic.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from ._features import extract
from .judge import JUDGE_INSTRUCTION
from .model import REWRITE_INSTRUCTION

_SENTENCE = re.compile(r"```.*?```|\S[^\n]*?(?:[.!?](?=\s|$)|[。！？]|$)", re.S | re.M)
_SMALL_WORDS = re.compile(r"\b(?:the|a|an|that|very|really|please|just)\b ?", re.IGNORECASE)
_ZH_SMALL = re.compile(r"[的了请]")
_DETAIL = re.compile(r"https?://[^\s，。]+|`[^`]+`")


def _stable(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "little")


def fake_rewrite(text: str, *, drop_every: int = 20) -> str:
    """What the fake rewrite model answers for ``text`` (see the module docstring)."""
    seen: set[str] = set()
    kept: list[str] = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group().strip()
        key = sentence.casefold()
        if not sentence or key in seen or _stable(key) % drop_every == 0:
            continue
        seen.add(key)
        if "`" not in sentence and "http" not in sentence:
            sentence = _ZH_SMALL.sub("", _SMALL_WORDS.sub("", sentence))
        kept.append(sentence)
    return " ".join(kept)


def fake_answer(prompt: str) -> str:
    """What the fake answering model says: the details it read (numbers, names, dates, code,
    URLs), sorted, so two prompts get the same answer exactly when they state the same ones."""
    d = extract(prompt)
    found = {*d.values, *d.entities, *d.dates, *_DETAIL.findall(prompt)}
    return "Answer based on: " + ", ".join(sorted(found))


def _messages_text(body: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content") or "") for m in body.get("messages") or [] if m.get("role") != "system"
    )


def fake_llm_responder(*, drop_every: int = 20) -> Callable[[dict[str, Any]], str]:
    """A ``FakeOpenAIServer`` responder playing rewrite model, judge and answering model."""

    def respond(body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        system = str(messages[0].get("content") or "") if messages else ""
        if system.startswith(REWRITE_INSTRUCTION.split("{", 1)[0]):
            return fake_rewrite(_messages_text(body), drop_every=drop_every)
        if system == JUDGE_INSTRUCTION:
            text = _messages_text(body)
            first = text.split("Answer A:\n", 1)[-1].split("\n\nAnswer B:\n", 1)
            return (
                "SAME" if len(first) == 2 and first[0].strip() == first[1].strip() else "DIFFERENT"
            )
        return fake_answer("\n".join(str(m.get("content") or "") for m in messages))

    return respond
