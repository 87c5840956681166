"""semcache: a correct-first semantic cache for LLM calls.

Import is cheap: names that need LiteLLM (``SemanticCache``, ``cache_info``) load it on
first access.

LiteLLM fetches its model price map from the network when it is first imported (and retries
in the background, about a minute offline). semcache sets ``LITELLM_LOCAL_MODEL_COST_MAP``
to ``True`` unless it is already set, so LiteLLM uses the map it ships; set it to ``False``
before importing semcache to fetch the current one. This only works when semcache is
imported before LiteLLM.
"""

from __future__ import annotations

import logging
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from typing import TYPE_CHECKING, Any

from semcache.config.settings import CacheSettings
from semcache.core.policy import CacheControl
from semcache.datasets import load_shipped_pairs
from semcache.embedders.base import Embedder
from semcache.errors import (
    ConfigError,
    EmbedderError,
    EmbedderMismatchError,
    InvalidRequest,
    InvalidRequestType,
    MissingDependency,
    SemcacheError,
    StoreError,
    StoreLockedError,
    UnknownServe,
)
from semcache.guard import DetailGuard, HitVerifier, NoGuard, get_verifier
from semcache.stats import CacheHit, CacheInfo, cache_info
from semcache.stores.base import Entry, Match, VectorStore

if TYPE_CHECKING:
    from semcache.cache import SemanticCache

__all__ = [
    "CacheControl",
    "CacheHit",
    "CacheInfo",
    "CacheSettings",
    "ConfigError",
    "DetailGuard",
    "Embedder",
    "EmbedderError",
    "EmbedderMismatchError",
    "Entry",
    "HitVerifier",
    "InvalidRequest",
    "InvalidRequestType",
    "Match",
    "MissingDependency",
    "NoGuard",
    "SemanticCache",
    "SemcacheError",
    "StoreError",
    "StoreLockedError",
    "UnknownServe",
    "VectorStore",
    "cache_info",
    "get_verifier",
    "load_shipped_pairs",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "SemanticCache":
        from semcache.cache import SemanticCache

        return SemanticCache
    raise AttributeError(f"module 'semcache' has no attribute {name!r}")


# a library's logger: silent until the application configures logging (no "last resort"
# stderr lines from semcache in someone else's program)
logging.getLogger("semcache").addHandler(logging.NullHandler())
