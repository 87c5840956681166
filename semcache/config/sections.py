"""The sections of ``CacheSettings`` that belong to no one tier's package: policy, exact,
coalescing, semantic, store, admission and health (each field states its unit and direction)."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from semcache.config.check import (
    SettingsSection,
)


class PolicySettings(SettingsSection):
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
    namespace_ttl_s: dict[str, float | None] = Field(
        default_factory=dict,
        description="Per-namespace lifetime of stored answers in seconds (None: until purged), "
        "overriding default_ttl_s for that namespace; a request's own ttl still wins.",
    )
    tool_requests: Literal["exact", "semantic"] = Field(
        "exact",
        description="A request that offers tools the model may call (tools set, tool_choice "
        "not 'none') may get an answer asking the client to run a tool: 'exact' answers it "
        "from identical requests only, never a paraphrase's answer; 'semantic' lets it take "
        "part in the semantic tier like any question.",
    )
    on_model_change: Literal["invalidate", "keep"] = Field(
        "invalidate",
        description="When a fresh answer reports another snapshot (response.model plus "
        "system_fingerprint) than earlier answers of the same model name: 'invalidate' stops "
        "serving every answer of that name stored before it; 'keep' serves them on.",
    )

    @field_validator("namespace_ttl_s")
    @classmethod
    def _ttls_not_negative(cls, value: dict[str, float | None]) -> dict[str, float | None]:
        for namespace, ttl in value.items():
            if ttl is not None and not ttl >= 0:
                raise ValueError(
                    f"expected seconds >= 0 or null; namespace {namespace!r} has {ttl}"
                )
        return value


class ExactSettings(SettingsSection):
    """In-process LRU in front of everything."""

    max_entries: int = Field(10_000, ge=0, description="Entries kept in memory (0 disables).")
    max_bytes: int = Field(
        256 * 1024 * 1024, ge=0, description="Bytes of serialised responses kept in memory."
    )


class CoalesceSettings(SettingsSection):
    """Single-flight of concurrent identical requests."""

    enabled: bool = Field(True, description="Share one upstream call among identical requests.")
    max_wait_s: float | None = Field(
        None,
        gt=0,
        description="Seconds a follower waits for the leader before calling upstream itself; "
        "None waits as long as the leader runs.",
    )
    merge: bool = Field(
        True,
        description="A paraphrase of a question whose upstream call is in flight in this "
        "process, or in any replica sharing redis.url when redis.coalesce is on (same "
        "partition, and a semantic hit by the same threshold and guard), waits for that call "
        "instead of making its own (cache_info tier 'merged').",
    )
    window_ms: float | Literal["adaptive"] = Field(
        0.0,
        description="Milliseconds a miss waits before its upstream call, so near-simultaneous "
        "duplicates and paraphrases join it (0: none); 'adaptive': window_fraction of the "
        "observed upstream p50 latency, at most window_max_ms.",
    )
    window_fraction: float = Field(
        0.1,
        gt=0,
        le=1,
        description="Adaptive window: share of the upstream p50 latency (a fraction, 0-1].",
    )
    window_max_ms: float = Field(
        1000.0, ge=0, description="Adaptive window: the longest hold, milliseconds."
    )

    @field_validator("window_ms", mode="before")
    @classmethod
    def _window(cls, value: Any) -> float | str:
        """One clear error for a bad window, not one per branch of the union."""
        if isinstance(value, str) and value.strip().lower() == "adaptive":
            return "adaptive"
        try:
            ms = float(value)
        except (TypeError, ValueError):
            ms = float("nan")
        if isinstance(value, bool) or not 0 <= ms < float("inf"):
            raise ValueError(f"expected finite milliseconds >= 0 or 'adaptive', got {value!r}")
        return ms


class SemanticSettings(SettingsSection):
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
    fallback_embedder: str | None = Field(
        None,
        description="A multilingual embedder for questions 'embedder' cannot read (by its "
        "declared scripts): such a question is embedded by this one and looked up and stored in "
        "its own store, never compared with the primary's entries; 'use-multilingual' or "
        "'e5-small-4bit' (each declares its scripts). Unset: those questions are exact-only. "
        "Loads in the background after the primary; needs 'fallback_threshold'.",
    )
    fallback_threshold: float | None = Field(
        None,
        ge=-1,
        le=1,
        description="Cosine similarity a routed question needs on 'fallback_embedder' (a hit "
        "when >=); a threshold belongs to one embedder, so 'threshold', 'namespace_thresholds' "
        "and 'scorer' never apply to routed questions.",
    )
    device: str = Field("auto", description="Embedding device: auto, cpu, cuda, mps.")
    precision: Literal["auto", "float32", "float16", "bfloat16", "int8"] = Field(
        "auto",
        description="Model precision for sentence-transformers embedders: 'auto' is float16 on "
        "a GPU and float32 on the CPU; 'bfloat16' is ~1.5x faster on CPUs with native bf16 and "
        "moves similarities by up to ~0.004; 'int8' is ONNX Runtime's dynamic quantization "
        "(onnx runtime only; its own embedder name, so float32 entries and thresholds are "
        "never reused for it).",
    )
    runtime: Literal["auto", "torch", "onnx"] = Field(
        "auto",
        description="How sentence-transformers embedders run: 'auto' is ONNX Runtime for the "
        "bundled MiniLM on the CPU when onnxruntime is installed (same vectors, ~3x less CPU "
        "per question; the export is made once and cached) and PyTorch otherwise; 'torch'; "
        "'onnx' (needs semcache-llm[onnx]).",
    )
    cpu_threads: int | None = Field(
        1,
        ge=1,
        description="CPU threads a local embedder may use (torch: process-wide "
        "torch.set_num_threads; ONNX Runtime: intra-op threads; USE and e5: their own pools); "
        "None keeps each runtime's default of one per core. One, because the "
        "embedder shares the CPU with the requests it serves, and on oversubscribed cores "
        "OpenMP threads spin waiting for each other (see docs/benchmarks.md).",
    )
    batch_size: int = Field(64, ge=1, description="Texts per embedder batch.")
    vector_cache_entries: int = Field(
        4096,
        ge=0,
        description="Question vectors kept in a text -> vector LRU keyed by embedder name and "
        "text (~1.5 KiB each at 384-d), so a repeated question is never embedded twice; 0 "
        "turns it off.",
    )
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
    guard_candidates: int = Field(
        3,
        ge=0,
        le=32,
        description="When the answer guard vetoes the nearest stored (or in-flight) question, "
        "how many of the next nearest (closest first, each over the threshold) are judged by "
        "the same rule; the first accepted is served (or followed). 0: the nearest only. "
        "Not used with a scorer, whose guarantee is for the nearest candidate.",
    )

    scorer: str | None = Field(
        None,
        description="Path of a scorer file written by 'semcache calibrate' (a learned hit "
        "model with its embedders, probability threshold, cosine band and optional guard veto, "
        "or a plug-in "
        "cross-encoder / LLM judge with its threshold and band). When set, it "
        "decides hits and its band's lower edge replaces 'threshold' as the search cutoff; "
        "empty or unset: hits are cosine >= threshold plus 'verifier'.",
    )

    @field_validator("scorer", "fallback_embedder")
    @classmethod
    def _empty_scorer_is_none(cls, value: str | None) -> str | None:
        return None if value is None or not value.strip() else value

    @field_validator("namespace_thresholds")
    @classmethod
    def _thresholds_in_range(cls, value: dict[str, float]) -> dict[str, float]:
        for namespace, threshold in value.items():
            if not -1 <= threshold <= 1:
                raise ValueError(
                    f"expected cosine similarities in [-1, 1]; namespace {namespace!r} has "
                    f"{threshold}"
                )
        return value


def default_store_path() -> str:
    """``$XDG_CACHE_HOME/semcache/store`` (``~/.cache/semcache/store``): a library must not
    write into whatever directory its caller happens to run in."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "semcache", "store")


class StoreSettings(SettingsSection):
    """Where entries live."""

    backend: Literal["edge", "qdrant", "redis", "none"] = Field(
        "edge",
        description="'edge': embedded Qdrant engine in this process (one process per path); "
        "'qdrant': a Qdrant server or cluster at `url`; 'redis': vector sets of the Redis "
        "Open Source >= 8.0 at `redis.url`, shared by every process (keys under "
        "`redis.key_prefix`); 'none': memory tier only.",
    )
    path: str = Field(
        default_factory=default_store_path,
        description="Directory of the embedded store; ':memory:' for a temporary one. "
        "Default: semcache/store under the user's cache directory ($XDG_CACHE_HOME or "
        "~/.cache), never the working directory.",
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


class AdmissionSettings(SettingsSection):
    """Admission control: a lookup is skipped only when the cache's own queue would delay it
    past a budget relative to the upstream call it could save.

    The budget is ``wait_fraction`` of the observed upstream p50, at least ``wait_ms``; a
    skipped lookup is a ``shed`` miss that goes upstream at once.
    """

    wait_ms: float = Field(
        20.0,
        ge=0,
        allow_inf_nan=False,
        description="The floor of the wait budget, milliseconds: a semantic lookup expected "
        "to wait longer than the budget for its vector is skipped and counted as shed. The "
        "budget is this until an upstream latency is observed.",
    )
    wait_fraction: float = Field(
        0.1,
        ge=0,
        le=1,
        description="The wait budget as a share of the observed upstream p50 latency (a "
        "fraction, 0-1; the floor is wait_ms). 0.1 with a 1 s upstream: a lookup may wait "
        "100 ms for a hit that saves the second. Higher: more hits under load, slower misses.",
    )
    hedge: bool = Field(
        True,
        description="Race a lookup skipped for the queue against the upstream call instead of "
        "dropping it, when it is expected to finish before the upstream answers: the call "
        "starts at once (a miss is no slower), and a hit that arrives first is served and "
        "the call cancelled (counted hedge_hits; a provider may bill a cancelled call's "
        "prompt). Paused while nearly all recent races were lost to the upstream answer "
        "(counted hedges_paused; one in 8 still runs). False: a skipped lookup is simply shed.",
    )
    lookup_deadline_ms: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="Milliseconds an admitted semantic lookup may take in all before the request "
        "goes upstream without it (counted as shed); None: only store.timeout_s applies.",
    )
    max_loop_lag_ms: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="Milliseconds the cache's event loop may run late (a moving average of how "
        "late it wakes, i.e. the process is short of CPU) before every semantic lookup is "
        "skipped and counted as shed, so the cache stops competing with requests for CPU. "
        "None (the default): not checked, because a host busy with other work made the cache "
        "shed lookups of one sequential client; the queue-based budget already bounds what "
        "the cache adds.",
    )
    max_pending_writes: int = Field(
        256,
        ge=0,
        description="Store writes (write-behind) that may be pending at once. Past it a "
        "completion's answer is dropped from the store (kept in memory), counted as shed "
        "(store_upsert) and reported by flush(); store()/store_many() never drop: they wait "
        "for room (see store_wait_s). 0: completions store nothing in the store, and "
        "requested writes go one at a time.",
    )
    store_wait_s: float = Field(
        30.0,
        gt=0,
        allow_inf_nan=False,
        description="Seconds store()/astore()/store_many() wait for room among pending store "
        "writes (backpressure) before raising StoreBackpressure; also how long one store write "
        "may take, its wait behind other writes at the embedder included. Higher: a slow "
        "store slows the caller longer before it is told.",
    )


class HealthSettings(SettingsSection):
    """What ``cache.health()`` and the proxy's /readyz report, and how often to warn."""

    window_s: float = Field(
        60.0,
        gt=0,
        allow_inf_nan=False,
        description="Seconds a failure keeps its part listed as degraded.",
    )
    shed_window_s: float = Field(
        2.0,
        gt=0,
        allow_inf_nan=False,
        description="Seconds work shed by admission control keeps its part listed as "
        "degraded: a shed is a moment of load, over once the queue drains (with window_s, "
        "one shed kept /readyz 'degraded' for a minute).",
    )
    warn_interval_s: float = Field(
        60.0,
        ge=0,
        allow_inf_nan=False,
        description="Seconds between two warnings of the same kind of failure or shed (the "
        "ones in between are counted and logged at debug level).",
    )


class PromptCacheSettings(SettingsSection):
    """Provider prompt caching on misses: a long prefix shared with recent requests of the
    same partition is sent so the provider's own cache serves it (never in the key)."""

    enabled: bool = Field(
        True,
        description="Mark misses for the provider's prompt cache where it supports one: an "
        "Anthropic cache_control breakpoint at the end of a prefix shared with a recent "
        "request of the same tenant, namespace and model, an OpenAI prompt_cache_key per "
        "partition (a hash). A request that sets its own marks or key is sent as it is. "
        "False: requests go upstream as the caller made them.",
    )
    min_tokens: int = Field(
        1024,
        ge=1,
        description="Smallest prefix to mark, in tokens (estimated at four characters a "
        "token); the providers' minimum cacheable prompt is 1024 tokens for most models.",
    )
    window_s: float = Field(
        300.0,
        gt=0,
        allow_inf_nan=False,
        description="Seconds a prefix counts as recent: a request sharing it within this gets "
        "the breakpoint (Anthropic keeps a cached prefix 5 minutes from its last use).",
    )
    max_prefixes: int = Field(
        20_000,
        ge=1,
        description="Prefix digests remembered in all partitions (least recently seen "
        "dropped first); each is a few hundred bytes.",
    )
