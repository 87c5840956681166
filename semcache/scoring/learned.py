"""``LearnedScorer``: runs the model ``semcache calibrate`` fit on the user's labeled pairs."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from semcache.embedders.base import Embedder
from semcache.errors import ConfigError

from .features import FeatureExtractor
from .saved import SavedScorer


class LearnedScorer:
    """A :class:`~semcache.scoring.HitScorer` over a saved model. ``embedders`` maps each
    non-primary embedder of the file to a loaded one (one ``embed`` per scored candidate); the
    primary's cosine arrives as ``similarity``.
    """

    def __init__(self, saved: SavedScorer, embedders: Mapping[str, Embedder] | None = None) -> None:
        given = {} if embedders is None else dict(embedders)
        missing = [e for e in saved.embedders if e != saved.primary and e not in given]
        if missing:
            raise ConfigError(
                f"scorer needs embedders {missing} besides the primary {saved.primary!r}"
            )
        self._saved = saved
        self._embedders = given
        self._features = FeatureExtractor()

    @property
    def name(self) -> str:
        return f"learned:{self._saved.model.kind}"

    @property
    def saved(self) -> SavedScorer:
        return self._saved

    def _cosine(self, embedder: str, query: str, candidate: str, similarity: float) -> float:
        if embedder == self._saved.primary:
            return similarity
        vectors = np.asarray(self._embedders[embedder].embed([query, candidate]), dtype=np.float64)
        a, b = vectors
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        return float(a @ b / norm) if norm > 0 else 0.0

    def score(self, query: str, candidate: str, similarity: float) -> float:
        cosines = [self._cosine(e, query, candidate, similarity) for e in self._saved.embedders]
        row = self._features.row(query, candidate, cosines)
        return float(self._saved.model.predict(row[None, :])[0])
