"""Helpers of the store tests: backend variants, hand-made unit vectors, entries, Where."""

from __future__ import annotations

import atexit
import hashlib
from pathlib import Path

import numpy as np

from semcache.stores import NEVER_EXPIRES, Entry, QdrantEdgeStore, QdrantStore, VectorStore, Where
from semcache.stores.redis_vectors import RedisVectorStore
from semcache.testing import InMemoryStore, RedisServer

DIM = 8
EMBEDDER = "test-embedder"
NOW = 1_000_000.0

#: backend variants of the shared suite; "persistent" ones can be closed and reopened
VARIANTS = ["edge", "client-memory", "client-path", "in-memory", "redis"]
PERSISTENT = ["edge", "client-path", "redis"]

_redis: list[RedisServer] = []


def redis_server() -> RedisServer:
    """One real Redis 8 for the whole test session (started on first use)."""
    if not _redis:
        _redis.append(RedisServer().start())
        atexit.register(_redis[0].stop)
    return _redis[0]


def unit(*values: float) -> np.ndarray:
    """A DIM-d vector from its leading components, scaled to unit length."""
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def make_entry(
    key: str,
    vector: np.ndarray | None = None,
    *,
    tenant: str = "t1",
    namespace: str = "ns",
    scope: str = "s1",
    model: str = "gpt-4o-mini",
    embedder: str = EMBEDDER,
    created_at: float = NOW - 10,
    expires_at: float = NEVER_EXPIRES,
    response: str | None = None,
) -> Entry:
    return Entry(
        key=key,
        tenant=tenant,
        namespace=namespace,
        model=model,
        scope=scope,
        response=response if response is not None else f'{{"answer": "{key}"}}',
        created_at=created_at,
        expires_at=expires_at,
        embedder=embedder,
        question=f"question {key}?",
        vector=unit(1.0) if vector is None else vector,
    )


def where(**overrides: str | float) -> Where:
    """The partition of ``make_entry``'s defaults at NOW, with ``overrides``."""
    fields = {"tenant": "t1", "namespace": "ns", "scope": "s1", "embedder": EMBEDDER, "now": NOW}
    return Where(**(fields | overrides))


def build(variant: str, directory: Path) -> VectorStore:
    """A store of ``variant`` (not set up) whose data lives under ``directory``."""
    if variant == "edge":
        return QdrantEdgeStore(directory / "edge", optimize_every=None)
    if variant == "client-memory":
        return QdrantStore(location=":memory:")
    if variant == "client-path":
        return QdrantStore(path=str(directory / "client"))
    if variant == "in-memory":
        return InMemoryStore()
    if variant == "redis":  # one key prefix per test directory: reopening finds the same data
        import redis

        prefix = "t" + hashlib.sha256(str(directory).encode()).hexdigest()[:12]
        client = redis.Redis.from_url(redis_server().url)
        return RedisVectorStore(client, prefix=prefix, clock=lambda: NOW)
    raise ValueError(variant)
