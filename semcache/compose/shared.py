"""What replicas share through Redis (``redis.url``): the exact tier, cross-replica flights
and the purge log, and the pipeline stages that read and write them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from semcache.config.settings import (
    CoalesceSettings,
)
from semcache.core.memory import MemoryTier
from semcache.core.model_watch import ModelWatch
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Stage
from semcache.pipeline.fence import PurgeFilter, Refusal
from semcache.pipeline.lookup import Shared
from semcache.pipeline.write_behind import WriteBehind
from semcache.replicas.settings import RedisSettings
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats

if TYPE_CHECKING:
    from semcache.pipeline.shared_merge import SharedMerge
    from semcache.replicas.connect import RedisOptions
    from semcache.replicas.tier import SharedTier


#: Seconds a question stays in the shared in-flight set if its leader never removes it (a
#: crash): longer than most upstream calls, short enough that a dead one soon stops being the
#: nearest (a follower that finds its leader gone also removes it).
IN_FLIGHT_LIFETIME_S = 120


def local_store_dir(backend: str, path: str, injected: bool) -> Path | bool | None:
    """Where a replica's own store keeps its purge-log position: its directory (the edge
    store at a path), None for a store that starts empty every time (``:memory:``, an
    injected one), False for no local store (none, or one every replica shares: Qdrant
    server, Redis), whose purges the purging replica applies for everyone."""
    if injected:
        return None
    if backend != "edge":
        return False
    return None if path == ":memory:" else Path(path)


def shared_tier(
    r: RedisSettings,
    memory: MemoryTier,
    writer: WriteBehind,
    failopen: FailOpen,
    watch: ModelWatch,
    clock: Callable[[], float],
    *,
    backend: SemanticBackend,
    stats: Stats,
    store_dir: Path | bool | None,
) -> SharedTier | None:
    """The Redis shared by replicas (exact tier, purge log, flights), if configured. With a
    local store (``store_dir`` not False) its hits are held back until the log is replayed."""
    if r.url is None:
        return None
    from semcache.replicas.connect import connect
    from semcache.replicas.exact import RedisExact
    from semcache.replicas.flights import SharedFlights
    from semcache.replicas.inflight import SharedQuestions
    from semcache.replicas.keys import CLUSTER_BUCKETS, KeySpace
    from semcache.replicas.purge_state import FILE_NAME, PositionFile
    from semcache.replicas.purges import PurgeLog
    from semcache.replicas.serves import SharedServes
    from semcache.replicas.tier import SharedTier

    client = connect(redis_options(r, r.url))
    keys = KeySpace(r.key_prefix, buckets=CLUSTER_BUCKETS if r.cluster else 1)

    # A store every replica shares was purged there by the purging replica, and its fences
    # and the exact tier's generations hold for everyone: only this process's memory (and
    # its pending writes) hear of a purge, and a gap in the log resets nothing but them.
    apply = writer.forget if store_dir is False else writer.purge

    async def reset() -> int:  # the log cannot say what was missed: forget everything local
        return await apply(PurgeFilter(), Refusal.PURGE_LOG_RESET)

    async def opened_with() -> int | None:  # entries in the local store before our writes
        await backend.ready()
        return 0 if backend.tier is None else backend.opened_with

    position = PositionFile(store_dir / FILE_NAME) if isinstance(store_dir, Path) else None
    log = PurgeLog(
        client,
        keys,
        failopen,
        stats,
        on_purge=apply,
        on_reset=reset,
        store_ready=opened_with,
        gate=backend.gate,
        position=position,
        timeout_s=r.timeout_s,
        on_model_change=watch.mark,
        max_entries=r.purge_log_entries,
    )
    if store_dir is not False and backend.tier is not None:
        backend.gate.require(
            "replaying the purge log before serving from the local store", log.start
        )
    flights = questions = None
    if r.coalesce:
        # A follower polls the lease between blocking reads; a read must end well within
        # the command timeout, and often enough to notice a dead leader soon after expiry.
        poll_ms = max(10, min(r.lease_ms // 3, int(r.timeout_s * 500)))
        flights = SharedFlights(
            client,
            keys,
            failopen,
            lease_ms=r.lease_ms,
            stream_ttl_ms=int(r.stream_ttl_s * 1000),
            poll_ms=poll_ms,
        )
        questions = SharedQuestions(client, keys, lifetime_s=IN_FLIGHT_LIFETIME_S)
    exact = RedisExact(client, keys, clock, failopen=failopen)
    serves = SharedServes(client, keys, exact, failopen)
    return SharedTier(client, exact, log, flights, questions, serves=serves)


def redis_lookup(shared: SharedTier | None) -> Shared | None:
    """The Redis exact tier as the lookup reads it (None without ``redis.url``)."""
    return None if shared is None else Shared(shared.exact, shared.log)


def redis_write(shared: SharedTier, failopen: FailOpen, stats: Stats, watch: ModelWatch) -> Stage:
    from semcache.pipeline.redis_exact import RedisWriteStage

    return RedisWriteStage(shared.exact, shared.log, failopen, stats, watch)


def shared_flight(
    shared: SharedTier | None,
    failopen: FailOpen,
    stats: Stats,
    c: CoalesceSettings,
    watch: ModelWatch,
) -> list[Stage]:
    if shared is None or shared.flights is None or not c.enabled:
        return []
    from semcache.pipeline.shared_flight import SharedFlightStage

    flight = SharedFlightStage(
        shared.flights, failopen, stats, max_wait_s=c.max_wait_s, fresh=watch.fresh
    )
    return [flight]


def shared_merge(
    shared: SharedTier | None,
    failopen: FailOpen,
    stats: Stats,
    c: CoalesceSettings,
    watch: ModelWatch,
) -> SharedMerge | None:
    """The paraphrase merge across replicas: on wherever the in-process merge and the
    cross-replica flights both are."""
    if shared is None or shared.flights is None or shared.questions is None:
        return None
    if not (c.enabled and c.merge):
        return None
    from semcache.pipeline.shared_merge import SharedMerge

    return SharedMerge(
        shared.questions,
        shared.flights,
        failopen,
        stats,
        max_wait_s=c.max_wait_s,
        fresh=watch.fresh,
    )


def redis_options(r: RedisSettings, url: str) -> RedisOptions:
    """The connection options of ``redis.*`` (one place: the shared tier's async client and
    the Redis store's blocking one must reach the same Redis the same way)."""
    from semcache.replicas.connect import RedisOptions

    return RedisOptions(
        url=url,
        username=r.username,
        password=None if r.password is None else r.password.get_secret_value(),
        tls_ca_file=r.tls_ca_file,
        tls_cert_file=r.tls_cert_file,
        tls_key_file=r.tls_key_file,
        tls_verify=r.tls_verify,
        timeout_s=r.timeout_s,
        max_connections=r.max_connections,
        cluster=r.cluster,
    )
