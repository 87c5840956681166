"""The answer guard: a last check that a semantic candidate's answer fits the new question.

``base`` (the ``HitVerifier`` protocol, ``NoGuard``), ``registry`` and ``details``
(``DetailGuard``); the engine (``rules``, ``features``, ``order``, ``patterns``,
``lexicon``) loads on the first comparison, not on import.
"""

from __future__ import annotations

from semcache.guard.base import HitVerifier, NoGuard
from semcache.guard.details import RULES, DetailGuard, Difference
from semcache.guard.registry import DEFAULT_VERIFIER, get_verifier, register, registered_names

__all__ = [
    "DEFAULT_VERIFIER",
    "RULES",
    "DetailGuard",
    "Difference",
    "HitVerifier",
    "NoGuard",
    "get_verifier",
    "register",
    "registered_names",
]
