"""The shared store on Redis >= 8 vector sets: one vector set per partition, every rule in Redis.

For processes or hosts sharing one semantic cache: what a purge, a withdrawal or a
model-snapshot watermark removes is gone for all of them when the call returns, because the
removal and the fence against older writes live in Redis (:mod:`semcache.stores._redis_layout`).
Vectors are ``NOQUANT`` (float32), so a similarity is the embedded store's cosine (VSIM's
``(1 + cos) / 2`` converted back). Expiry is Redis's own TTL, re-checked in the script and
in :class:`Where`. A write of an entry created before a fence covering it is refused in the
script that would store it (hosts' clocks must agree to well under the write-behind delay).
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from semcache.errors import (
    ConfigError,
    EmbedderMismatchError,
    SemcacheError,
    StoreError,
    StoreUnreachable,
)

from . import _redis_layout as layout
from .base import NEVER_EXPIRES, Entry, Match
from .where import Selection, Where

#: How many more candidates a search with metadata filters looks at than one without.
FILTERED_CANDIDATES = 8

#: Seconds the payload of an entry written already expired (a withdrawal) is kept, so the
#: count and the audit see it as on the other backends; lookups never serve it.
EXPIRED_GRACE_S = 60.0


@contextlib.contextmanager
def _mapped(operation: str) -> Iterator[None]:
    """The one place redis-py's errors (and socket errors under it) become StoreError:
    :class:`StoreUnreachable` when the server (or a cluster slot's master) did not answer."""
    from redis.exceptions import RedisClusterException, RedisError

    try:
        yield
    except SemcacheError:
        raise
    except (RedisError, RedisClusterException, OSError) as exc:
        error = StoreUnreachable if _unreachable(exc) else StoreError
        raise error(f"redis store {operation} failed: {type(exc).__name__}: {exc}") from exc


def _unreachable(exc: BaseException) -> bool:
    """Did the server not answer (as opposed to refusing the command or the credentials)?"""
    from redis import exceptions as e

    refused = (e.AuthenticationError, e.AuthorizationError, e.ExternalAuthProviderError)
    if isinstance(exc, refused):
        return False
    unanswered = (
        e.ConnectionError,
        e.TimeoutError,
        e.ClusterDownError,
        e.TryAgainError,
        e.SlotNotCoveredError,
        e.RedisClusterUnreachableError,
        OSError,
    )
    return isinstance(exc, unanswered)


def _is_cluster(client: Any) -> bool:
    from redis.cluster import RedisCluster

    return isinstance(client, RedisCluster)


#: What names a partition (the fields of :func:`layout.partition_id`).
PARTITION_FIELDS = ("tenant", "namespace", "scope", "embedder")


def _partition_json(entry: Entry) -> str:
    return json.dumps({name: getattr(entry, name) for name in PARTITION_FIELDS})


def _covers(selection: Selection, partition: dict[str, str] | None) -> bool:
    """Does a purge of ``selection`` reach this partition? One that nothing names holds no
    entry to serve: only a purge of every tenant and namespace empties it."""
    if partition is None:
        return selection.tenant is None and selection.namespace is None
    tenant = selection.tenant in (None, partition["tenant"])
    return tenant and selection.namespace in (None, partition["namespace"])


class RedisVectorStore:
    """:class:`~semcache.stores.base.VectorStore` and ``StoreAdmin`` on Redis vector sets.

    ``client``: a sync ``redis.Redis`` / ``RedisCluster`` or a ``redis://`` URL (then built at
    ``setup``, closed by ``close``). ``clock``: wall-clock epoch seconds. ``candidates``: nearest
    elements a lookup checks for a live one; ``ef``: HNSW search breadth. Thread-safe.
    """

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "semcache",
        clock: Callable[[], float] = time.time,
        candidates: int = 8,
        ef: int = 64,
    ) -> None:
        self._given = client
        self._layout = layout.Layout(prefix)
        self._clock = clock
        self._candidates = candidates
        self._ef = ef
        self._client: Any = None
        self._owned = False
        self._dim = 0
        self._scripts: dict[str, Any] = {}
        self._cluster = False
        self._lock = threading.Lock()

    # -- opening and closing ----------------------------------------------------------

    def setup(self, embedder: str, dim: int) -> None:
        with self._lock:
            client, owned = self._client, False
            if client is None:
                client, owned = self._connect()
            try:
                self._check_server(client)
                self._check_meta(client, embedder, dim)
            except BaseException:
                if owned:
                    with contextlib.suppress(Exception):
                        client.close()
                raise
            if self._client is None:
                self._client, self._owned = client, owned
                self._cluster = _is_cluster(client)
                self._scripts = {
                    name: client.register_script(getattr(layout, name))
                    for name in ("WRITE", "NEAREST", "PURGE", "PURGE_EXPIRED")
                }
            self._dim = dim

    def _connect(self) -> tuple[Any, bool]:
        if not isinstance(self._given, str):
            return self._given, False
        try:
            import redis
        except ModuleNotFoundError:
            from semcache.errors import MissingDependency

            raise MissingDependency("redis", "redis") from None
        with _mapped("connect"):
            return redis.Redis.from_url(self._given), True

    def _check_server(self, client: Any) -> None:
        """Vector sets present (Redis >= 8)? Else a ConfigError naming the settings."""
        from redis.exceptions import ResponseError

        try:
            with _mapped("connect"):
                client.execute_command("VCARD", f"{self._layout.prefix}:vs:probe")
        except StoreError as exc:
            if isinstance(exc.__cause__, ResponseError) and "unknown command" in str(exc):
                raise ConfigError(
                    "store.backend 'redis' needs Redis Open Source >= 8.0 (vector sets: VADD, "
                    "VSIM); the server at redis.url does not know VCARD (Valkey and Redis 7 "
                    "lack vector sets)"
                ) from exc
            raise

    def _check_meta(self, client: Any, embedder: str, dim: int) -> None:
        wanted = json.dumps({"format": layout.FORMAT, "embedder": embedder, "dim": dim})
        with _mapped("setup"):
            client.hsetnx(self._layout.meta, "config", wanted)
            found = json.loads(client.hget(self._layout.meta, "config"))
        if (found.get("embedder"), found.get("dim")) != (embedder, dim):
            raise EmbedderMismatchError(
                f"redis store {self._layout.prefix!r} was created with embedder "
                f"{found.get('embedder')!r} (dim {found.get('dim')}), not {embedder!r} (dim "
                f"{dim}); vectors of two models cannot be compared: use another store path, "
                "another collection (key prefix) or purge it"
            )

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
            if client is not None and self._owned:
                with _mapped("close"):
                    client.close()

    def _open(self) -> Any:
        client = self._client
        if client is None:
            raise StoreError("store is not open; call setup() first")
        return client

    def _run(self, script: str, keys: list[str], args: list[Any], operation: str) -> Any:
        self._open()
        with _mapped(operation):
            return self._scripts[script](keys=keys, args=args)

    # -- reads --------------------------------------------------------------------------

    def _keys(self, tenant: str, namespace: str, scope: str, embedder: str) -> list[str]:
        return self._layout.partition(layout.partition_id(tenant, namespace, scope, embedder))

    def _vector(self, vector: np.ndarray) -> bytes:
        array = np.asarray(vector, dtype=np.float32).reshape(-1)
        if array.shape[0] != self._dim:
            raise StoreError(f"vector has {array.shape[0]} components, the store {self._dim}")
        return array.tobytes()

    def retrieve(self, key: str, where: Where) -> Entry | None:
        client = self._open()
        keys = self._keys(where.tenant, where.namespace, where.scope, where.embedder)
        with _mapped("retrieve"):
            data = client.hget(keys[1], key)
        return where.retrieved(key, None if data is None else Entry.from_payload(json.loads(data)))

    def nearest(self, vector: np.ndarray, where: Where) -> Match | None:
        found = self.nearest_k(vector, where, 1)
        return found[0] if found else None

    def nearest_k(self, vector: np.ndarray, where: Where, k: int) -> list[Match]:
        """Up to ``k`` live entries, closest first. With metadata filters the search looks
        at ``FILTERED_CANDIDATES`` times as many candidates and keeps those the filters admit
        (``Where.verified``), so a very selective filter can find fewer than ``k``."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise StoreError(f"k must be an int >= 1, got {k!r}")
        self._open()
        blob = self._vector(vector)
        keys = self._keys(where.tenant, where.namespace, where.scope, where.embedder)
        candidates = max(self._candidates, k)
        limit = k
        if where.filters:
            candidates *= FILTERED_CANDIDATES
            limit = candidates
        args = [blob, repr(float(where.now)), candidates, max(self._ef, candidates), limit]
        found = self._run("NEAREST", keys[:3], args, "search") or []
        matches: list[Match] = []
        for i in range(0, len(found), 3):
            similarity = 2.0 * float(found[i + 1]) - 1.0  # VSIM scores (1 + cos) / 2
            entry = Entry.from_payload(json.loads(found[i + 2]))
            if where.filters and not where.admits(entry):
                continue  # filtered here, not in VSIM (see FILTERED_CANDIDATES)
            match = where.verified(Match(entry, similarity))
            if match is not None:
                matches.append(match)
                if len(matches) == k:
                    break
        return matches

    def count(self) -> int:
        client = self._open()
        parts = self._partitions()
        with _mapped("count"):
            pipe = client.pipeline(transaction=False)
            for pid in parts:
                pipe.zcard(self._layout.partition(pid)[3])
            return int(sum(pipe.execute())) if parts else 0

    def recent(self, *, tenant: str | None = None, limit: int = 50) -> list[Entry]:
        client = self._open()
        chosen = [pid for pid, p in self._partitions().items() if tenant in (None, p["tenant"])]
        newest: list[tuple[float, str, bytes]] = []
        with _mapped("recent"):
            pipe = client.pipeline(transaction=False)
            for pid in chosen:
                pipe.zrevrange(self._layout.partition(pid)[3], 0, limit - 1, withscores=True)
            for pid, rows in zip(chosen, pipe.execute() if chosen else [], strict=True):
                newest += [(float(score), pid, key) for key, score in rows]
            newest = sorted(newest, reverse=True)[:limit]
            pipe = client.pipeline(transaction=False)
            for _, pid, key in newest:
                pipe.hget(self._layout.partition(pid)[1], key)
            payloads = pipe.execute() if newest else []
        return [Entry.from_payload(json.loads(p)) for p in payloads if p is not None]

    def _partitions(self) -> dict[str, dict[str, str]]:
        """The registered partitions (one read; for counts, listings and sweeps)."""
        client = self._open()
        with _mapped("list partitions"):
            rows = client.hgetall(self._layout.parts)
        return {pid.decode(): json.loads(value) for pid, value in rows.items()}

    def _every_partition(self) -> dict[str, dict[str, str] | None]:
        """Every partition holding keys, registered or not: what a purge must reach. The registry is
        one key that may be lost, so the partitions' own keys are scanned too (every master) and
        re-registered; a purge never reports success while answers stay.
        """
        client = self._open()
        known: dict[str, dict[str, str] | None] = dict(self._partitions())
        lost: set[str] = set()
        with _mapped("scan partitions"):
            for name in client.scan_iter(match=self._layout.partition_pattern, count=1000):
                text = name.decode() if isinstance(name, bytes) else str(name)
                pid = text[text.index("{") + 1 : text.index("}")]
                if pid not in known:
                    lost.add(pid)
            for pid in sorted(lost):
                known[pid] = self._named(client, pid)
        return known

    def _named(self, client: Any, pid: str) -> dict[str, str] | None:
        """A partition the registry lost, from its own keys (re-registered); None when
        nothing names it (no ``part`` field and no entry: nothing there to serve)."""
        keys = self._layout.partition(pid)
        raw = client.hget(keys[4], "part")
        if raw is None:
            found = client.hrandfield(keys[1], 1, withvalues=True)
            if not found:
                return None
            entry = json.loads(found[1])
            raw = json.dumps({name: entry[name] for name in PARTITION_FIELDS})
        client.hsetnx(self._layout.parts, pid, raw)
        partition: dict[str, str] = json.loads(raw)
        return partition

    # -- writes -------------------------------------------------------------------------

    def upsert(self, entries: Sequence[Entry]) -> None:
        """Store entries in one round trip per step (register, read fences, write)."""
        client = self._open()
        blobs = []
        for entry in entries:
            if entry.vector is None:
                raise StoreError(f"entry {entry.key!r} has no vector")
            blobs.append(self._vector(entry.vector))
        if not entries:
            return
        pids = self._register(client, entries)
        # Read after registering: a purge that this read misses began after the partition
        # was registered, so it finds the partition and fences it there.
        with _mapped("upsert"):
            pipe = client.pipeline(transaction=False)
            for entry in entries:
                fields = layout.covering_fields(entry.tenant, entry.namespace, entry.model)
                pipe.hmget(self._layout.fence, fields)
            fences = pipe.execute()
        now = self._clock()
        write = self._scripts["WRITE"]
        # redis-py's cluster pipeline refuses scripts: there, one call per entry
        pipe = None if self._cluster else client.pipeline(transaction=False)
        with _mapped("upsert"):
            for entry, blob, pid, found in zip(entries, blobs, pids, fences, strict=True):
                fence = max((float(f) for f in found if f is not None), default=-math.inf)
                args = self._write_args(entry, blob, now, fence)
                write(keys=self._layout.partition(pid), args=args, client=pipe or client)
            if pipe is not None:
                pipe.execute()

    @staticmethod
    def _write_args(entry: Entry, blob: bytes, now: float, fence: float) -> list[Any]:
        ttl_s = entry.expires_at - now
        ttl = ""  # never expires
        if entry.expires_at < NEVER_EXPIRES:
            ttl = str(max(1, math.ceil((ttl_s if ttl_s > 0 else EXPIRED_GRACE_S) * 1000)))
        attrs = {
            "expires_at": entry.expires_at,
            "created_at": entry.created_at,
            "model": entry.model,
        }
        return [
            entry.key,
            blob,
            json.dumps(attrs),
            json.dumps(entry.payload()),
            repr(entry.created_at),
            repr(entry.expires_at),
            repr(now),
            repr(fence) if fence > -math.inf else "-inf",
            layout.h(entry.model),
            ttl,
            _partition_json(entry),
        ]

    def _register(self, client: Any, entries: Sequence[Entry]) -> list[str]:
        """Record each entry's partition in ``P:vs:parts`` (on every write: a Redis restarted
        empty must learn it again, or a purge would not find it); returns their ids."""
        pids, partitions = [], {}
        for entry in entries:
            pid = layout.partition_id(entry.tenant, entry.namespace, entry.scope, entry.embedder)
            pids.append(pid)
            partitions[pid] = _partition_json(entry)
        with _mapped("register partition"):
            pipe = client.pipeline(transaction=False)
            for pid, partition in partitions.items():
                pipe.hsetnx(self._layout.parts, pid, partition)
            pipe.execute()
        return pids

    def purge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        """Remove every entry matching all given fields, for every process; fence older writes. The
        global fence goes first, then each partition is fenced and emptied in one script; a write
        registers its partition before reading the global fence, so one of the two fences it.
        """
        selection = Selection(tenant=tenant, namespace=namespace, model=model)
        return self._fence_and_remove(selection, self._clock(), remove_all=True)

    def mark_model(self, model: str, before: float) -> int:
        """The model-snapshot watermark: entries of ``model`` created before ``before`` are
        removed for every process, and older writes of it refused; returns how many went."""
        return self._fence_and_remove(Selection(model=model), before, remove_all=False)

    def _fence_and_remove(self, selection: Selection, at: float, *, remove_all: bool) -> int:
        client = self._open()
        field = layout.fence_field(selection.tenant, selection.namespace, selection.model)
        with _mapped("purge"):
            previous = client.hget(self._layout.fence, field)
            if previous is None or float(previous) < at:
                client.hset(self._layout.fence, field, repr(at))
        suffix = layout.UNFILTERED if selection.model is None else layout.h(selection.model)
        removed = 0
        for pid, p in self._every_partition().items():
            if not _covers(selection, p):
                continue
            args = [suffix, selection.model or "", repr(at), "1" if remove_all else "0"]
            removed += int(self._run("PURGE", self._layout.partition(pid), args, "purge"))
        return removed

    def purge_expired(self, now: float) -> int:
        removed = 0
        for pid in self._partitions():
            keys = self._layout.partition(pid)[:4]
            removed += int(self._run("PURGE_EXPIRED", keys, [repr(float(now))], "purge_expired"))
        return removed
