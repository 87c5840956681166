"""``VerifySettings`` and ``TuningSettings``: the tuning loop's configuration.

Mounted by ``CacheSettings`` as ``verify`` (shadow verification, off unless ``sample_rate``
> 0) and ``tuning`` (feedback, the live false-hit estimate, miss analysis). Only the
composition root reads them.
"""

from __future__ import annotations

from pydantic import Field

from semcache.config.check import SettingsSection


class VerifySettings(SettingsSection):
    """Shadow verification of semantic hits (``SEMCACHE_VERIFY__*``)."""

    sample_rate: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="Base probability that a semantic hit is re-asked upstream in the "
        "background and compared (0 disables shadow verification).",
    )
    near_boost: float = Field(
        4.0,
        ge=1.0,
        allow_inf_nan=False,
        description="How many times more likely a hit right at the threshold is sampled than "
        "a hit far above it (1: uniform).",
    )
    near_width: float = Field(
        0.05,
        gt=0.0,
        allow_inf_nan=False,
        description="Cosine similarity over the threshold at which the boost has fallen to "
        "1/e of its excess (smaller: only hits closer to the threshold are favoured).",
    )
    max_concurrency: int = Field(4, ge=1, description="Shadow upstream calls running at once.")
    max_pending: int = Field(
        256,
        ge=1,
        description="Shadow calls waiting or running; a sampled hit beyond this is skipped "
        "and counted (verify_skipped).",
    )
    answer_similarity: float = Field(
        0.9,
        ge=-1.0,
        le=1.0,
        description="Cosine similarity of the two answers' embeddings at or above which they "
        "agree (used when no judge model is set).",
    )
    judge_model: str | None = Field(
        None,
        description="LiteLLM model that judges whether the fresh and cached answers agree "
        "(None: exact match, then answer-embedding similarity).",
    )
    seed: int | None = Field(None, description="Seed of the sampling draws (None: unpredictable).")


class TuningSettings(SettingsSection):
    """Feedback, the live false-hit estimate and miss analysis (``SEMCACHE_TUNING__*``)."""

    delta: float = Field(
        0.05,
        gt=0.0,
        lt=1.0,
        description="Tolerated false-hit rate (wrong answers / semantic hits); the alert "
        "fires when the estimate's 95% lower bound exceeds it (evidence, never at 0 wrong).",
    )
    window: int = Field(
        2000,
        ge=10,
        description="Most recent shadow verdicts per namespace the live estimate uses.",
    )
    labels_path: str | None = Field(
        None,
        description="JSONL file labeled pairs (feedback, shadow verdicts) are appended to, "
        "in the format 'semcache calibrate --labels' reads (None: memory only).",
    )
    thresholds_path: str | None = Field(
        None,
        description="JSON file the thresholds applied at runtime (POST /admin/threshold, the "
        "dashboard's apply) are written to before they are served, and read at start: a "
        "restart serves them until the configured thresholds change (then the configuration "
        "wins). None: an applied threshold lasts until the process ends.",
    )
    max_labels: int = Field(
        10_000, ge=0, description="Labeled pairs kept in memory (oldest dropped first)."
    )
    miss_margin: float = Field(
        0.1,
        ge=0.0,
        le=2.0,
        description="A miss is recorded for analysis when its nearest stored question was "
        "at most this much cosine similarity under the threshold (0: never record).",
    )
    max_misses: int = Field(
        5000, ge=0, description="Near misses kept for analysis (oldest dropped first)."
    )
    max_serves: int = Field(
        10_000,
        ge=0,
        description="Recent semantic hits remembered so feedback can name the query they "
        "served (older hits can no longer be given feedback).",
    )
