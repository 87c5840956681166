"""How much of a text an embedder reads: its window, and where a text leaves it.

A model reads a fixed number of tokens (all-MiniLM-L6-v2: 256 word pieces, two of them
markers) and silently drops the rest, so two prompts that share a long beginning are one text
to it: a document followed by "what was the revenue?" and the same document followed by
"list the risks" embed at cosine 1.0. A window reports :meth:`Window.cut`, the character
offset where the unseen part begins, so the cache can keep such texts out of semantic
matching (:mod:`semcache.pipeline.readability`).

Two kinds:

``TokenWindow``
    The model's own tokenizer (``tokenizer.json``, read with the ``tokenizers`` library on
    first need, without loading the model) and its ``max_seq_length``: exact.
``ByteWindow``
    For an embedder that cannot tell: a lower bound on what it reads. Every token of a
    WordPiece, SentencePiece or byte-level BPE tokenizer consumes at least one byte of UTF-8
    input, so ``tokens`` tokens read at least the first ``tokens`` bytes; the rest counts as
    unseen even where the model may have read it (a missed hit, never a wrong one).

Both first check the same bound, so a text of at most ``tokens`` bytes (most questions)
costs one ``len`` and never a tokenizer pass.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tokenizers import Tokenizer


@runtime_checkable
class Window(Protocol):
    """Where a text leaves what the embedder reads."""

    @property
    def tokens(self) -> int | None:
        """Tokens of content the embedder reads (None: no limit)."""
        ...

    def cut(self, text: str) -> int:
        """The offset into ``text`` where the unseen part begins; ``len(text)`` when the
        embedder reads all of it. Pure and deterministic: the same text, the same cut."""
        ...


def unseen(window: Window, text: str) -> str:
    """The part of ``text`` the embedder never reads ("" when it reads it all; trailing
    whitespace alone does not count)."""
    rest = text[window.cut(text) :]
    return rest if rest.strip() else ""


def _within_bytes(text: str, limit: int) -> bool:
    """Is ``text`` at most ``limit`` UTF-8 bytes? (ASCII: its length, without encoding.)"""
    if len(text) > limit:
        return False
    return text.isascii() or len(text.encode("utf-8")) <= limit


class Unlimited:
    """Reads every text whole (a bag-of-words test double, a model with no length limit)."""

    @property
    def tokens(self) -> int | None:
        return None

    def cut(self, text: str) -> int:
        return len(text)


class ByteWindow:
    """Reads at least the first ``tokens`` UTF-8 bytes (see the module docstring)."""

    def __init__(self, tokens: int) -> None:
        if tokens < 1:
            raise ValueError(f"tokens must be >= 1, got {tokens}")
        self._tokens = tokens

    def __repr__(self) -> str:
        return f"ByteWindow({self._tokens})"

    @property
    def tokens(self) -> int:
        return self._tokens

    def cut(self, text: str) -> int:
        if _within_bytes(text, self._tokens):
            return len(text)
        used = 0
        for i, char in enumerate(text):
            used += len(char.encode("utf-8"))
            if used > self._tokens:
                return i
        return len(text)


class TokenWindow:
    """The exact window of a model folder with a fast tokenizer (``tokenizer.json``).

    ``max_length``: tokens per input, markers included (``max_seq_length`` of
    ``sentence_bert_config.json`` when not given). The tokenizer is read on the first text
    longer than the byte bound, once, under a lock; encoding is serialised too (the Rust
    tokenizer refuses concurrent use from threads).
    """

    def __init__(self, folder: str | Path, max_length: int | None = None) -> None:
        self._folder = Path(folder)
        self._max_length = max_length if max_length is not None else _max_length(self._folder)
        self._lock = threading.Lock()
        self._tokenizer: Tokenizer | None = None
        self._markers = 0

    def __repr__(self) -> str:
        return f"TokenWindow({str(self._folder)!r}, {self._max_length})"

    @property
    def tokens(self) -> int:
        """Content tokens read: the limit less the markers (estimated as 2 before loading)."""
        return self._max_length - (self._markers if self._tokenizer is not None else 2)

    def cut(self, text: str) -> int:
        if _within_bytes(text, self._max_length - 2):
            return len(text)  # each token consumes at least one byte, markers aside
        with self._lock:
            tokenizer = self._load()
            encoding = tokenizer.encode(text)
        marks = encoding.special_tokens_mask
        content = [
            span for span, special in zip(encoding.offsets, marks, strict=True) if not special
        ]
        room = self._max_length - self._markers
        if len(content) <= room:
            return len(text)
        return content[room - 1][1]

    def _load(self) -> Tokenizer:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self._folder / "tokenizer.json"))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._markers = len(tokenizer.encode("").ids)
            self._tokenizer = tokenizer
        return self._tokenizer


def _max_length(folder: Path) -> int:
    config = folder / "sentence_bert_config.json"
    if config.is_file():
        length = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
        if isinstance(length, int) and length > 0:
            return length
    return 512


def folder_window(folder: str | Path, fallback: int = 512) -> Window:
    """The exact window of a model folder when it has ``tokenizer.json``, else the byte bound
    for ``fallback`` tokens."""
    path = Path(folder)
    if (path / "tokenizer.json").is_file():
        return TokenWindow(path)
    return ByteWindow(fallback)


UNDECLARED = ByteWindow(510)
"""For an embedder that does not declare its window: 512 tokens less two markers (BERT-sized
models, the most common), as a byte bound."""


def window_of(embedder: Any) -> Window:
    """What ``embedder`` declares (its ``window`` attribute), else :data:`UNDECLARED`."""
    declared = getattr(embedder, "window", None)
    return declared if isinstance(declared, Window) else UNDECLARED
