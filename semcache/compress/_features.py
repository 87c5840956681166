"""The one import of the answer guard's feature extraction.

The guard's extractor is moving into the ``semcache.guard`` package; everything in
``semcache.compress`` imports it from here, so that move is a one-line change.
"""

from __future__ import annotations

from semcache._guard_features import Details, extract

__all__ = ["Details", "extract"]
