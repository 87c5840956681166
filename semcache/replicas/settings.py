"""Settings of the Redis shared by replicas (mounted as ``CacheSettings.redis``)."""

from __future__ import annotations

from pydantic import Field, SecretStr

from semcache.config.check import SettingsSection


class RedisSettings(SettingsSection):
    """A Redis shared by replicas: exact tier and cross-replica coalescing (off without a URL).

    Memory is bounded by Redis itself, not by semcache: set ``maxmemory`` and
    ``maxmemory-policy volatile-lru`` (entries with a TTL are evicted first; leases and
    generations are tiny) or ``allkeys-lru`` on a Redis used only by semcache. A single
    Redis (or a primary with replicas behind one URL), or a Redis Cluster with ``cluster``:
    every key of a tenant carries its bucket's hash tag, so each script touches one slot, and
    a master that is down degrades only the tenants on its slots (docs/deployment.md, "Redis
    Cluster").
    """

    url: str | None = Field(
        None,
        description="redis://[user@]host:port/db, or rediss:// for TLS; None disables the Redis "
        "tier and cross-replica coalescing.",
    )
    cluster: bool = Field(
        False,
        description="redis.url is a seed node of a Redis Cluster: the exact tier, flights and "
        'the store (store.backend = "redis") follow its slots. Same TLS and auth options.',
    )
    username: str | None = Field(None, description="ACL user (overrides the URL's).")
    password: SecretStr | None = Field(None, description="Password (overrides the URL's).")
    tls_ca_file: str | None = Field(
        None, description="CA bundle (PEM path) that signed the server's certificate (rediss://)."
    )
    tls_cert_file: str | None = Field(None, description="Client certificate (PEM path), mTLS.")
    tls_key_file: str | None = Field(None, description="Client private key (PEM path), mTLS.")
    tls_verify: bool = Field(
        True, description="Verify the server's certificate and host name (rediss://)."
    )
    key_prefix: str = Field(
        "semcache", min_length=1, description="Prefix of every key semcache writes."
    )
    timeout_s: float = Field(
        1.0,
        gt=0,
        description="Seconds one Redis command may take before it counts as failed "
        "(the request then degrades: a miss, or an upstream call of its own).",
    )
    max_connections: int = Field(
        256, ge=2, description="Connections per replica (each waiting follower holds one)."
    )
    coalesce: bool = Field(
        True, description="One upstream call per request key across all replicas (a lease)."
    )
    lease_ms: int = Field(
        3000,
        ge=100,
        description="Milliseconds a leader's lease lives unless renewed (renewed every third); "
        "after a leader crash followers take over within about this long.",
    )
    stream_ttl_s: float = Field(
        60.0,
        gt=0,
        description="Seconds a flight's chunk stream stays readable after its last write.",
    )
    purge_log_entries: int = Field(
        100_000,
        ge=1,
        description="Entries the purge log keeps (a Redis stream every replica reads): a "
        "replica with its own store that was down while more purges and withdrawals than "
        "this were made empties its store when it starts (it cannot replay them).",
    )
