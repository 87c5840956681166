"""Embedders: text to unit-length float32 vectors, behind one small protocol.

``import semcache.embedders`` is cheap: each implementation (and torch, LiteLLM or the
multilingual packages behind it) is imported on first access of its name. Pick one by name
with :func:`load_embedder`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import Embedder, l2_normalise
from .registry import load_embedder, registered_names

if TYPE_CHECKING:
    from .batcher import MicroBatcher
    from .e5_small import E5SmallEmbedder
    from .litellm_embedder import LiteLLMEmbedder
    from .onnx_runtime import OnnxEmbedder
    from .sentence_transformer import SentenceTransformerEmbedder
    from .use_multilingual import UseMultilingualEmbedder
    from .vector_cache import CachedEmbedder, VectorCache

__all__ = [
    "CachedEmbedder",
    "E5SmallEmbedder",
    "Embedder",
    "LiteLLMEmbedder",
    "MicroBatcher",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "UseMultilingualEmbedder",
    "VectorCache",
    "l2_normalise",
    "load_embedder",
    "registered_names",
]

_LAZY = {
    "MicroBatcher": "semcache.embedders.batcher",
    "E5SmallEmbedder": "semcache.embedders.e5_small",
    "LiteLLMEmbedder": "semcache.embedders.litellm_embedder",
    "OnnxEmbedder": "semcache.embedders.onnx_runtime",
    "SentenceTransformerEmbedder": "semcache.embedders.sentence_transformer",
    "UseMultilingualEmbedder": "semcache.embedders.use_multilingual",
    "CachedEmbedder": "semcache.embedders.vector_cache",
    "VectorCache": "semcache.embedders.vector_cache",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
