"""semcache: a correct-first semantic cache for LLM calls.

Every public name is imported on first access. semcache sets
``LITELLM_LOCAL_MODEL_COST_MAP=True`` unless set, so LiteLLM (imported after semcache) uses
the price map it ships instead of fetching one from the network.
"""

from __future__ import annotations

import logging
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from semcache.cache import SemanticCache
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

#: Public name -> the module that defines it, imported on first access: ``import semcache``
#: (and so the ``semcache`` command's entry point, which must be running before a Ctrl-C
#: can be turned into exit status 130) takes milliseconds, not the seconds the settings take.
_EXPORTS = {
    "SemanticCache": "semcache.cache",
    "CacheSettings": "semcache.config.settings",
    "CacheControl": "semcache.core.policy",
    "load_shipped_pairs": "semcache.datasets",
    "Embedder": "semcache.embedders.base",
    **dict.fromkeys(
        (
            "ConfigError",
            "EmbedderError",
            "EmbedderMismatchError",
            "InvalidRequest",
            "InvalidRequestType",
            "MissingDependency",
            "SemcacheError",
            "StoreError",
            "StoreLockedError",
            "UnknownServe",
        ),
        "semcache.errors",
    ),
    **dict.fromkeys(("DetailGuard", "HitVerifier", "NoGuard", "get_verifier"), "semcache.guard"),
    **dict.fromkeys(("CacheHit", "CacheInfo", "cache_info"), "semcache.stats"),
    **dict.fromkeys(("Entry", "Match", "VectorStore"), "semcache.stores.base"),
}

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
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'semcache' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


# a library's logger: silent until the application configures logging (no "last resort"
# stderr lines from semcache in someone else's program)
logging.getLogger("semcache").addHandler(logging.NullHandler())
