"""The one place the scoring package imports the answer guard (its rules become features; a
scorer file may name a guard as its veto)."""

from __future__ import annotations

from semcache.guard.base import HitVerifier
from semcache.guard.details import RULES, DetailGuard
from semcache.guard.registry import get_verifier

__all__ = ["RULES", "DetailGuard", "HitVerifier", "get_verifier"]
