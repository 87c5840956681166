"""The one import of the answer guard's feature extraction.

Everything in ``semcache.compress`` imports the guard's extractor from here, so the
detail-preservation check and the answer guard read details the same way. The guard's tables
load on the first extraction, not on import (``import semcache`` compiles nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from semcache.guard.features import Details

__all__ = ["extract"]


def extract(text: str) -> Details:
    """The guard's details of ``text`` (numbers, dates, negations, entities, comparisons)."""
    from semcache.guard.features import extract as guard_extract

    return guard_extract(text)
