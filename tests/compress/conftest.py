"""Fixtures for the compression tests: a pinned token counter (words) keeps them fast."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from semcache.compress.base import Message

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class WordCounter:
    """A ``TokenCounter`` counting words and punctuation marks (no tokenizer load)."""

    def text(self, text: str, *, model: str) -> int:
        return len(_TOKEN.findall(text))

    def messages(self, messages: Sequence[Message], *, model: str) -> int:
        return sum(self.text(str(m.get("content") or ""), model=model) + 3 for m in messages)


@pytest.fixture
def counter() -> WordCounter:
    return WordCounter()
