"""``FakeEmbedder``: a deterministic bag-of-words embedder for tests that need no model.

Texts sharing words get similar vectors; it loads instantly (or when ``loaded`` says), counts
its calls, and ``call_latency_s + text_latency_s x texts`` gives each call a latency.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np

from semcache.embedders.window import Unlimited
from semcache.testing._openai_server import hash_embedding


class FakeEmbedder:
    """Implements ``semcache.Embedder``; ``fail`` makes the next calls raise ``RuntimeError``;
    ``batches`` lists each call's number of texts.

    ``loaded``: a model still loading. Like a real embedder, ``name`` is known at once but
    ``dim`` and ``embed`` wait until the event is set (so a test decides when the model is
    ready, e.g. to show what a restarted cache answers before then). Set it before the
    cache closes: closing waits for the warm-up.
    """

    def __init__(
        self,
        dim: int = 64,
        name: str = "fake-bow",
        *,
        call_latency_s: float = 0.0,
        text_latency_s: float = 0.0,
        loaded: threading.Event | None = None,
    ) -> None:
        self._dim = dim
        self._name = f"{name}-{dim}"
        self._loaded = loaded
        self.calls = 0
        self.texts = 0
        self.batches: list[int] = []
        self.fail = False
        self.call_latency_s = call_latency_s
        self.text_latency_s = text_latency_s

    @property
    def window(self) -> Unlimited:
        """Hashes every word of a text, however long."""
        return Unlimited()

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        if self._loaded is not None:
            self._loaded.wait()
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._loaded is not None:
            self._loaded.wait()
        self.calls += 1
        self.texts += len(texts)
        self.batches.append(len(texts))
        latency = self.call_latency_s + self.text_latency_s * len(texts)
        if latency > 0:
            time.sleep(latency)
        if self.fail:
            raise RuntimeError("fake embedder failure")
        rows = [hash_embedding(text, self._dim) for text in texts]
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self._dim)
