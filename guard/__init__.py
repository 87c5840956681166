"""The answer guard: a last check that a semantic candidate's answer fits the new question.

Layout: ``base`` (the ``HitVerifier`` protocol and ``NoGuard``, the null guard), ``registry``
(guards by name: ``get_verifier``, ``register``), ``details`` (``DetailGuard``: numbers, dates,
negation, names, opposite comparisons, swapped roles), and the engine it loads on its first
comparison: ``rules`` (how two questions may differ), ``features`` (what one question pins
down), ``order`` (role swaps), ``patterns`` (compiled patterns) and ``lexicon`` (the word
lists in ``lexicon.toml``). Importing this package compiles and reads none of the engine.
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
