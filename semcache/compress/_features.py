"""The one import of the answer guard's feature extraction.

Everything in ``semcache.compress`` imports the guard's extractor from here, so the
detail-preservation check and the answer guard read details the same way.
"""

from __future__ import annotations

from semcache.guard.features import Details, extract

__all__ = ["Details", "extract"]
