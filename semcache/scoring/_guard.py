"""The one place the scoring package imports the answer guard (its rules become features)."""

from __future__ import annotations

from semcache.guard.details import RULES, DetailGuard

__all__ = ["RULES", "DetailGuard"]
