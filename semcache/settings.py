"""All configuration in one declared class.

Read from the environment (prefix ``SEMCACHE_``, nested fields with ``__``, e.g.
``SEMCACHE_SEMANTIC__THRESHOLD=0.93``), from a ``.env`` file, or passed explicitly.
Only the facade, the CLI and the server read settings; library classes take arguments.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class PolicySettings(BaseModel):
    """What may be shared at all."""

    max_shared_temperature: float = Field(
        0.8,
        ge=0,
        description="Requests with an explicit temperature above this (unitless) bypass the "
        "cache (no lookup, no store, no coalescing) unless the caller opts in.",
    )
    default_ttl_s: float | None = Field(
        7 * 24 * 3600.0,
        ge=0,
        description="Lifetime of a stored answer in seconds; None keeps answers until purged. "
        "A request's cache={'ttl': ...} overrides it.",
    )


class ExactSettings(BaseModel):
    """In-process LRU in front of everything."""

    max_entries: int = Field(10_000, ge=0, description="Entries kept in memory (0 disables).")
    max_bytes: int = Field(
        256 * 1024 * 1024, ge=0, description="Bytes of serialised responses kept in memory."
    )


class CoalesceSettings(BaseModel):
    """Single-flight of concurrent identical requests."""

    enabled: bool = Field(True, description="Share one upstream call among identical requests.")
    max_wait_s: float | None = Field(
        None,
        gt=0,
        description="Seconds a follower waits for the leader before calling upstream itself; "
        "None waits as long as the leader runs.",
    )


class SemanticSettings(BaseModel):
    """Similarity lookup of paraphrased questions."""

    enabled: bool = Field(True, description="Look up and store by meaning, not just exactly.")
    threshold: float = Field(
        0.95,
        ge=-1,
        le=1,
        description="Cosine similarity; a candidate is a hit when similarity >= threshold.",
    )
    namespace_thresholds: dict[str, float] = Field(
        default_factory=dict,
        description="Per-namespace threshold overrides (cosine similarity, hit when >=).",
    )
    embedder: str = Field(
        "minilm",
        description="Embedder name: 'minilm' (bundled all-MiniLM-L6-v2), 'use-multilingual', "
        "'e5-small-4bit', 'litellm:<model>', a sentence-transformers hub name or a local path.",
    )
    device: str = Field("auto", description="Embedding device: auto, cpu, cuda, mps.")
    precision: Literal["auto", "float32", "float16", "bfloat16"] = Field(
        "auto",
        description="Model precision for sentence-transformers embedders: 'auto' is float16 on "
        "a GPU and float32 on the CPU; 'bfloat16' is ~1.5x faster on CPUs with native bf16 and "
        "moves similarities by up to ~0.004.",
    )
    runtime: Literal["torch", "onnx"] = Field(
        "torch",
        description="How sentence-transformers embedders run: 'torch', or 'onnx' (ONNX Runtime "
        "on the CPU, same vectors, ~3x faster for one question; needs semcache[onnx]).",
    )
    batch_size: int = Field(64, ge=1, description="Texts per embedder batch.")
    max_batch_wait_ms: float = Field(
        2.0, ge=0, description="Milliseconds the micro-batcher waits to fill a batch."
    )
    store_question: bool = Field(
        True, description="Keep the question text in the store (needed for audits and the guard)."
    )
    verifier: Literal["auto", "none", "details"] = Field(
        "auto",
        description="Answer guard applied to semantic candidates: 'details' rejects candidates "
        "that differ in numbers, dates, negation, entities or comparisons; 'auto' uses the "
        "project default.",
    )

    scorer: str | None = Field(
        None,
        description="Path of a scorer file written by 'semcache calibrate' (a learned hit "
        "model with its embedders, probability threshold and cosine band). When set, it "
        "decides hits and its band's lower edge replaces 'threshold' as the search cutoff; "
        "empty or unset: hits are cosine >= threshold plus 'verifier'.",
    )

    @field_validator("scorer")
    @classmethod
    def _empty_scorer_is_none(cls, value: str | None) -> str | None:
        return None if value is None or not value.strip() else value

    @field_validator("namespace_thresholds")
    @classmethod
    def _thresholds_in_range(cls, value: dict[str, float]) -> dict[str, float]:
        for namespace, threshold in value.items():
            if not -1 <= threshold <= 1:
                raise ValueError(
                    f"namespace_thresholds[{namespace!r}] = {threshold}: expected cosine in [-1, 1]"
                )
        return value


class StoreSettings(BaseModel):
    """Where entries live."""

    backend: Literal["edge", "qdrant", "none"] = Field(
        "edge",
        description="'edge': embedded Qdrant engine in this process (one process per path); "
        "'qdrant': a Qdrant server or cluster at `url`; 'none': memory tier only.",
    )
    path: str = Field(
        "./.semcache",
        description="Directory of the embedded store; ':memory:' for a temporary one.",
    )
    url: str | None = Field(None, description="Qdrant server URL for backend 'qdrant'.")
    api_key: SecretStr | None = Field(None, description="Qdrant server API key.")
    prefer_grpc: bool = Field(True, description="Use gRPC to the Qdrant server when possible.")
    collection: str = Field("semcache", description="Collection (server) name.")
    timeout_s: float = Field(
        2.0,
        gt=0,
        description="Seconds a store or embedder call may take before it counts as "
        "failed and the request degrades to a miss.",
    )
    purge_interval_s: float = Field(
        300.0, gt=0, description="Seconds between background deletions of expired entries."
    )


class CacheSettings(BaseSettings):
    """Every setting of a semcache deployment."""

    model_config = SettingsConfigDict(
        env_prefix="SEMCACHE_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="ignore",
    )

    policy: PolicySettings = Field(default_factory=PolicySettings)
    exact: ExactSettings = Field(default_factory=ExactSettings)
    coalesce: CoalesceSettings = Field(default_factory=CoalesceSettings)
    semantic: SemanticSettings = Field(default_factory=SemanticSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
