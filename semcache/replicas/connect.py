"""Opening the shared Redis: URL, TLS and auth in one place, the client library loaded lazily.

Connections are made on first use (constructors do no I/O) and belong to the event loop that
uses them, which for a cache is its own loop. Library errors become :class:`StoreError` in
:func:`mapped`, the one place that knows redis-py's exception types.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from semcache.errors import ConfigError, MissingDependency, StoreError

if TYPE_CHECKING:
    import redis
    from redis.asyncio import Redis


@dataclass(frozen=True, slots=True)
class RedisOptions:
    """How to reach the shared Redis (see ``RedisSettings`` for each field's meaning)."""

    url: str
    username: str | None = None
    password: str | None = None
    tls_ca_file: str | None = None
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    tls_verify: bool = True
    timeout_s: float = 1.0
    max_connections: int = 256
    cluster: bool = False

    def __post_init__(self) -> None:
        scheme = urlsplit(self.url).scheme
        if scheme not in ("redis", "rediss", "unix"):
            raise ConfigError(
                f"redis.url: expected redis://, rediss:// or unix://, got {self.url!r}"
            )
        tls_files = (self.tls_ca_file, self.tls_cert_file, self.tls_key_file)
        if scheme != "rediss" and any(f is not None for f in tls_files):
            raise ConfigError("redis.tls_*: TLS files given but redis.url is not rediss://")
        if self.cluster and scheme == "unix":
            raise ConfigError("redis.cluster: a cluster's seed node is redis:// or rediss://")

    @property
    def tls(self) -> bool:
        return urlsplit(self.url).scheme == "rediss"


def connect(options: RedisOptions) -> Redis:
    """A client with a connection pool; nothing is connected until the first command.

    With ``cluster`` it is a ``redis.asyncio.cluster.RedisCluster`` seeded from the URL (it
    learns the other masters from it and follows their slots); the callers use the commands
    both share, and every script and multi-key command they send touches one slot."""
    try:
        from redis.asyncio import Redis
    except ModuleNotFoundError:
        raise MissingDependency("redis", "redis") from None
    if options.cluster:
        from semcache.replicas.cluster_client import Cluster

        cluster: Any = Cluster.from_url(options.url, **_client_kwargs(options, aio=True))
        return cast("Redis", cluster)
    return Redis.from_url(options.url, **_client_kwargs(options, aio=True))


def connect_sync(options: RedisOptions) -> redis.Redis:
    """The same client for blocking callers (the Redis vector store runs in worker threads);
    a ``redis.cluster.RedisCluster`` with ``cluster``."""
    try:
        import redis
        from redis.cluster import RedisCluster
    except ModuleNotFoundError:
        raise MissingDependency("redis", "redis") from None
    if options.cluster:
        cluster: Any = RedisCluster.from_url(options.url, **_client_kwargs(options))
        return cast("redis.Redis", cluster)
    return redis.Redis.from_url(options.url, **_client_kwargs(options))


def _client_kwargs(options: RedisOptions, *, aio: bool = False) -> dict[str, Any]:
    """``aio``: for an asyncio client, which takes ``redis.asyncio.retry.Retry`` (redis-py
    8 warns when given the blocking one, and converts it)."""
    from redis.backoff import NoBackoff

    if aio:
        from redis.asyncio.retry import Retry
    else:
        from redis.retry import Retry  # type: ignore[assignment]

    kwargs: dict[str, Any] = {
        "socket_timeout": options.timeout_s,
        "socket_connect_timeout": options.timeout_s,
        "max_connections": options.max_connections,
        # One quick retry: a request must degrade within its timeout, not back off for seconds.
        "retry": Retry(NoBackoff(), 1),
        "client_name": "semcache",
    }
    if options.username is not None:
        kwargs["username"] = options.username
    if options.password is not None:
        kwargs["password"] = options.password
    if options.tls:
        kwargs["ssl_cert_reqs"] = "required" if options.tls_verify else "none"
        kwargs["ssl_check_hostname"] = options.tls_verify
        if options.tls_ca_file is not None:
            kwargs["ssl_ca_certs"] = options.tls_ca_file
        if options.tls_cert_file is not None:
            kwargs["ssl_certfile"] = options.tls_cert_file
        if options.tls_key_file is not None:
            kwargs["ssl_keyfile"] = options.tls_key_file
    return kwargs


@asynccontextmanager
async def mapped() -> AsyncIterator[None]:
    """Raise redis-py's errors (and socket errors under it) as :class:`StoreError`."""
    from redis.exceptions import RedisError

    try:
        yield
    except (RedisError, OSError) as exc:
        raise StoreError(f"redis: {type(exc).__name__}: {exc}") from exc
