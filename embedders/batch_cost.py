"""What one embedder batch costs: ``seconds(n) = fixed_s + per_text_s x n``, learned online.

A line, not seconds per text, because a per-text average from a quiet spell's one-text batches
counts the fixed part once per text and would price a burst at several batches' time. The
line's shape is fitted by least squares over a long memory (``SHAPE_DECAY``); a level factor
over recent batches (``LEVEL_WEIGHT``) scales it to how busy the machine is now. Until batch
sizes have spread, the line goes through the origin (the cautious reading). Times are
wall-clock, as the waiting lookups feel them.
"""

from __future__ import annotations

#: Weight kept by each older batch per newer one in the shape fit (about 50 batches).
SHAPE_DECAY = 0.98
#: Weight of the newest batch in the level factor and the recent per-text average.
LEVEL_WEIGHT = 0.3


class BatchCost:
    """A line through (texts in batch, seconds of the batch), learned online."""

    __slots__ = ("_level", "_n", "_nn", "_nt", "_recent_n", "_recent_t", "_t", "_w")

    def __init__(self) -> None:
        self._w = self._n = self._t = self._nn = self._nt = 0.0
        self._level = 1.0
        self._recent_n = self._recent_t = 0.0

    @property
    def known(self) -> bool:
        """At least one batch observed."""
        return self._w > 0.0

    def observe(self, texts: int, seconds: float) -> None:
        """Record one batch of ``texts`` texts that took ``seconds``."""
        n, t = float(max(texts, 1)), max(0.0, seconds)
        shape = self._shape()
        if shape is not None:
            predicted = shape[0] + shape[1] * n
            if predicted > 0:
                self._level += LEVEL_WEIGHT * (t / predicted - self._level)
        if not self.known:
            self._recent_n, self._recent_t = n, t
        else:
            self._recent_n += LEVEL_WEIGHT * (n - self._recent_n)
            self._recent_t += LEVEL_WEIGHT * (t - self._recent_t)
        d = SHAPE_DECAY
        self._w = d * self._w + 1.0
        self._n = d * self._n + n
        self._t = d * self._t + t
        self._nn = d * self._nn + n * n
        self._nt = d * self._nt + n * t
        if shape is None and self._shape() is not None:
            self._level = 1.0  # the shape was just learned from these very batches

    def _shape(self) -> tuple[float, float] | None:
        """(fixed, per text) by least squares over the long memory; None while the sizes
        have not spread enough to tell them apart, or the fit is not physical."""
        if not self.known:
            return None
        mean_n, mean_t = self._n / self._w, self._t / self._w
        var_n = self._nn / self._w - mean_n * mean_n
        if var_n <= 0.25 * max(1.0, mean_n):
            return None
        slope = (self._nt / self._w - mean_n * mean_t) / var_n
        fixed = mean_t - slope * mean_n
        return (fixed, slope) if slope > 0.0 and fixed >= 0.0 else None

    def line(self) -> tuple[float, float]:
        """(fixed seconds per batch, seconds per text) now; (0, 0) before the first batch."""
        if not self.known:
            return 0.0, 0.0
        shape = self._shape()
        if shape is None:  # through the origin: cautious for big batches
            return 0.0, self._recent_t / max(self._recent_n, 1.0)
        return shape[0] * self._level, shape[1] * self._level

    def seconds(self, texts: int) -> float:
        """Predicted seconds of one batch of ``texts`` texts."""
        fixed, per_text = self.line()
        return fixed + per_text * texts if texts > 0 else 0.0

    def per_text_s(self) -> float | None:
        """Recent seconds per text, averaged over batches (None before the first)."""
        if not self.known:
            return None
        return self._recent_t / max(self._recent_n, 1.0)
