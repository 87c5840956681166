"""The one place the scoring package imports the answer guard.

The guard's module is moving (``semcache.guard_details`` -> ``semcache.guard.details``); when it
lands, this import is the only line to change.
"""

from __future__ import annotations

from semcache.guard_details import RULES, DetailGuard

__all__ = ["RULES", "DetailGuard"]
