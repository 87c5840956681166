"""Any embedding model LiteLLM can call (OpenAI, Azure, Cohere, Bedrock, a local server, ...).

Texts go out in batches of ``batch_size`` through ``litellm.embedding``. The dimension is
taken from ``dim`` or, when not given, discovered by one embedding call on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from semcache.errors import ConfigError, EmbedderError

from ._common import as_text_list, check_batch_size
from .base import l2_normalise
from .window import UNDECLARED, ByteWindow, Window

_RESERVED = frozenset({"model", "input", "api_base", "api_key"})
_PROBE_TEXT = "semcache dimension probe"


class LiteLLMEmbedder:
    """An embedding model reached through LiteLLM, behind the Embedder protocol.

    ``name`` is ``"litellm:<model>"``; the endpoint (``api_base``) is not part of it, so point
    one store at one deployment of a model. Extra keyword arguments (``timeout``,
    ``max_retries``, ``dimensions``, ``encoding_format``, ...) go to every
    ``litellm.embedding`` call unchanged. Provider errors surface as
    :class:`~semcache.errors.EmbedderError`.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 256,
        **litellm_kwargs: Any,
    ) -> None:
        if not model:
            raise ConfigError("model must name an embedding model, e.g. 'text-embedding-3-small'")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise ConfigError(f"dim must be a positive int or None, got {dim!r}")
        clashing = _RESERVED & litellm_kwargs.keys()
        if clashing:
            raise ConfigError(f"pass {sorted(clashing)} as named arguments, not in litellm_kwargs")
        self._model = model
        self._batch_size = check_batch_size(batch_size)
        self._call_kwargs: dict[str, Any] = {**litellm_kwargs}
        if api_base is not None:
            self._call_kwargs["api_base"] = api_base
        if api_key is not None:
            self._call_kwargs["api_key"] = api_key
        self._dim = dim
        self._dim_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder({self._model!r})"

    @property
    def window(self) -> Window:
        """A byte bound for the model's ``max_input_tokens`` in LiteLLM's model table (a
        provider may truncate rather than refuse); :data:`.window.UNDECLARED` when unlisted."""
        import litellm

        info = litellm.model_cost.get(self._model, {})
        tokens = info.get("max_input_tokens") if isinstance(info, dict) else None
        return ByteWindow(tokens) if isinstance(tokens, int) and tokens > 0 else UNDECLARED

    @property
    def name(self) -> str:
        return f"litellm:{self._model}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            with self._dim_lock:
                if self._dim is None:
                    self._dim = self._request([_PROBE_TEXT]).shape[1]
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = as_text_list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [
            self._request(texts[start : start + self._batch_size])
            for start in range(0, len(texts), self._batch_size)
        ]
        vectors = np.concatenate(batches)
        if self._dim is None:
            self._dim = vectors.shape[1]
        elif vectors.shape[1] != self._dim:
            raise EmbedderError(
                f"{self.name} returned {vectors.shape[1]}-d vectors, expected {self._dim}"
            )
        return l2_normalise(vectors)

    def _request(self, texts: list[str]) -> np.ndarray:
        """One ``litellm.embedding`` call, as an (n, d) float32 array in input order."""
        import litellm
        import openai

        try:
            response = litellm.embedding(model=self._model, input=texts, **self._call_kwargs)
        except openai.OpenAIError as exc:  # root of every error LiteLLM maps from a provider
            raise EmbedderError(f"{self.name} failed to embed {len(texts)} texts: {exc}") from exc
        return _vectors_from(response, len(texts), self.name)


def _vectors_from(response: Any, expected: int, name: str) -> np.ndarray:
    """The response's vectors ordered by their ``index``; a malformed answer is an EmbedderError."""
    items = list(getattr(response, "data", None) or [])
    if len(items) != expected:
        raise EmbedderError(f"{name} returned {len(items)} vectors for {expected} texts")
    try:
        ordered = sorted(items, key=lambda item: _field(item, "index"))
        matrix = np.asarray([_field(item, "embedding") for item in ordered], dtype=np.float32)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise EmbedderError(f"{name} returned a malformed embedding response: {exc}") from exc
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise EmbedderError(f"{name} returned vectors of shape {matrix.shape}")
    return matrix


def _field(item: Any, key: str) -> Any:
    """LiteLLM gives dicts for OpenAI-style providers and objects for some others."""
    return item[key] if isinstance(item, dict) else getattr(item, key)
