"""``CrossEncoderScorer``: a sentence-transformers cross-encoder, by hub name or local path.

A model call per scored candidate, so use it behind a band and calibrate its threshold on
the user's pairs like any scorer (its scale is the model's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from semcache.errors import ScorerError


class CrossEncoderScorer:
    """Scores ``(query, candidate)`` with ``CrossEncoder(model).predict``; loads on first use."""

    def __init__(self, model: str, *, device: str = "cpu", max_length: int = 256) -> None:
        self._name = model
        self._device = device
        self._max_length = max_length
        self._model: Any = None

    @property
    def name(self) -> str:
        return f"cross-encoder:{self._name}"

    def load(self) -> Any:
        """Load the model now (the cache does this when its semantic tier starts, in a
        worker thread, as it loads extra embedders); later calls return it."""
        if self._model is None:
            from semcache.embedders._common import import_optional, resolve_device

            st = import_optional(
                "sentence_transformers", package="sentence-transformers", extra="local"
            )
            device = resolve_device(self._device)  # "auto": cuda, then mps, then cpu
            try:
                self._model = st.CrossEncoder(
                    self._name, device=device, max_length=self._max_length
                )
            except (OSError, ValueError) as exc:
                raise ScorerError(f"cannot load cross-encoder {self._name!r}: {exc}") from exc
        return self._model

    def score(self, query: str, candidate: str, similarity: float) -> float:
        return self.score_many([(query, candidate)])[0]

    def score_many(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32) -> list[float]:
        """Scores of many ``(query, candidate)`` pairs, ``batch_size`` per model call (for
        calibration; the cache scores one candidate per lookup)."""
        if not pairs:
            return []
        scores = self.load().predict(
            list(pairs), batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True
        )
        return [float(v) for v in scores]
