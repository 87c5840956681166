"""Wilson's score interval for a proportion, the one implementation (eval and the tuning loop):
the rates that matter sit near 0, where the normal interval collapses. ``n`` may be
fractional (Kish's effective size); vectorised, scalars in give 0-d arrays.
"""

from __future__ import annotations

import numpy as np


def wilson_bounds(
    rate: np.ndarray | float, n: np.ndarray | float, z: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of Wilson's interval for ``rate`` observed on ``n`` trials at normal
    quantile ``z`` (1.96 for two-sided 95%). No trials: ``(0, 1)``. A rate of exactly 0 (or
    1) has a bound of exactly 0 (or 1): rounding never lifts it off."""
    p = np.asarray(rate, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z2 = z * z
        denominator = 1.0 + z2 / n
        centre = (p + z2 / (2.0 * n)) / denominator
        half = z * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denominator
        low = np.where(p <= 0.0, 0.0, np.clip(centre - half, 0.0, 1.0))
        high = np.where(p >= 1.0, 1.0, np.clip(centre + half, 0.0, 1.0))
    return np.where(n > 0, low, 0.0), np.where(n > 0, high, 1.0)
