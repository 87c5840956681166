"""The purge log: every purge and withdrawal, durably, for every replica, including one that
was down when it happened.

Each replica keeps answers in its own memory (and, with the embedded store, on its own disk),
so each purge, withdrawal and model change is appended to the stream ``{P:purges}`` and
every replica reads it and applies each entry to its memory tier, write fence and own store.

- **Acks.** The purging replica counts the live readers (heartbeats in
  ``{P:purges}:readers``) in the script that appends, then waits up to ``ack_timeout_s``
  for each to confirm, so when ``purge`` returns no live replica serves a purged answer.
- **Replay.** After a start the store serves no hit (readiness "warming") until every entry
  after the saved position (:mod:`semcache.replicas.purge_state`) is applied, also while
  Redis is unreachable.
- **Gaps.** When the position cannot be trusted (none saved, trimmed past, a new log epoch)
  the replica empties its memory tier and its own store and counts ``purge_log_resets``:
  losing cached answers is safe, serving a purged one is not. Shared stores keep their own
  generations and fences.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from semcache.pipeline.backend import ServingGate
from semcache.pipeline.fence import PurgeFilter
from semcache.replicas.connect import mapped
from semcache.replicas.eviction import eviction_warning
from semcache.replicas.keys import KeySpace
from semcache.replicas.purge_state import LogPosition, PositionFile, replay_gap
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger("semcache")

#: The log keeps this many entries by default (``redis.purge_log_entries``): a replica down
#: while more purges than that were made empties its own store when it returns. At ~200
#: bytes an entry the stream stays under ~20 MB.
MAX_ENTRIES = 100_000
#: Seconds between attempts to read the log again after a failure.
RETRY_S = 0.25
#: A reader counts as live for this long after its last heartbeat (it beats every block).
READER_TTL_MS = 3000
#: Entries applied per read.
BATCH = 256
#: Seconds applying one batch to memory and the local store may take.
APPLY_TIMEOUT_S = 60.0
#: Seconds a purge's confirmation list lives.
ACK_TTL_MS = 60_000

_PUBLISH = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[2], ARGV[2], 'NX')
if ARGV[4] ~= '' then redis.call('SET', KEYS[4], '1', 'PX', ARGV[5]) end
local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 6))
local over = redis.call('XLEN', KEYS[1]) - tonumber(ARGV[1])
if over > 0 then
  local gone = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', over)
  redis.call('SET', KEYS[5], gone[#gone][1])
  redis.call('XTRIM', KEYS[1], 'MAXLEN', ARGV[1])
end
if redis.call('EXISTS', KEYS[3]) == 0 then return {id, -1} end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local live = redis.call('ZCOUNT', KEYS[3], now, '+inf')
if redis.call('ZSCORE', KEYS[3], ARGV[3]) then live = live - 1 end
return {id, live}
"""
"""KEYS: log, epoch, readers, this purge's "acks wanted" marker, trim watermark; ARGV: max
entries, an epoch for a log that has none, origin, ack ('' none), marker TTL ms, field/value
pairs. Returns the entry's ID and how many other readers are live (-1: unknown, the list of
readers is gone). Trims the log itself (by one entry per append, so it is cheap) and records
the last ID trimmed: a reader whose position is older than that missed entries (Redis's own
``max-deleted-entry-id`` ignores trims)."""

_CHECK = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], ARGV[1], 'NX')
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[2])
return {redis.call('GET', KEYS[1]), now}
"""
"""KEYS: epoch, readers; ARGV: an epoch for a log that has none, reader id, TTL ms. A
heartbeat; returns the log's epoch (a Redis restarted empty gets a new one here) and Redis's
clock in ms."""

_ACK = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('RPUSH', KEYS[2], '1')
  redis.call('PEXPIRE', KEYS[2], ARGV[1])
end
"""
"""KEYS: marker, ack list. Confirms only while the purger still waits (no stray lists when a
replica replays old entries)."""

_RESYNC = object()


class PurgeLog:
    """Publish purges to the log and follow it (one per cache; ``start`` on its loop).

    Callbacks: ``on_purge`` applies one entry locally, ``on_reset`` empties memory and the local
    store, ``store_ready`` waits for the local store and returns its size, ``gate`` holds its hits
    back until the log is replayed, ``position`` saves where it stands (None: not persistent).
    """

    def __init__(
        self,
        client: Redis,
        keys: KeySpace,
        failopen: FailOpen,
        stats: Stats,
        *,
        on_purge: Callable[[PurgeFilter], Awaitable[object]],
        on_reset: Callable[[], Awaitable[int]],
        store_ready: Callable[[], Awaitable[int | None]],
        gate: ServingGate,
        position: PositionFile | None,
        timeout_s: float,
        on_model_change: Callable[[str, float], None] | None = None,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        self._client, self._keys, self._failopen, self._stats = client, keys, failopen, stats
        self._on_purge, self._on_reset, self._store_ready = on_purge, on_reset, store_ready
        self._on_model_change = on_model_change
        self._gate, self._file = gate, position
        self._timeout_s = timeout_s
        self._block_ms = max(10, min(500, int(timeout_s * 500)))
        self._max_entries = max_entries
        self._publish_script = client.register_script(_PUBLISH)
        self._check = client.register_script(_CHECK)
        self._ack = client.register_script(_ACK)
        self.replica_id = uuid.uuid4().hex
        self._epoch: str | None = None
        self._last: str | None = None
        self._synced = False
        self._caught_up = asyncio.Event()
        self._waited = False
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.resets = 0
        self._last_reset: tuple[float, str] | None = None
        self._born_ms = time.time() * 1000.0  # this replica's start, on its own clock
        self._opened_with: int | None = None
        #: Why the server's eviction policy is unsafe for withdrawals (None: it is safe, or
        #: not known); read once when following starts, shown by ``health()``.
        self.eviction: str | None = None

    # -- publishing -------------------------------------------------------------------------
    async def publish(self, purge: PurgeFilter, *, ack_timeout_s: float) -> int:
        """Append ``purge`` and wait until every live reader has applied it (at most
        ``ack_timeout_s``); returns how many did not confirm in time."""
        kind = "purge" if purge.key is None else "withdraw"
        fields = {
            "tenant": purge.tenant,
            "namespace": purge.namespace,
            "model": purge.model,
            "key": purge.key,
            "scope": purge.scope,
        }
        ack = uuid.uuid4().hex
        acks = self._keys.purge_ack(ack)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ack_timeout_s
        async with mapped():
            _, missing = await self._append(kind, fields, ack)
            unknown = missing < 0
            if unknown:  # no list of readers (lost, or none ever beat): wait the whole time
                self._stats.count("purge_log_readers_unknown")
                why = "semcache purge log: no list of live readers; waiting %.1f s for replicas"
                log.warning(why, ack_timeout_s)
            try:
                while (unknown or missing > 0) and (left := deadline - loop.time()) > 0:
                    # short blocks: a BLPOP must end within the client's command timeout
                    if await self._client.blpop([acks], timeout=min(left, 0.1)) is not None:
                        missing -= 1
            finally:
                await self._client.delete(acks, acks + ":open")
        return 0 if unknown else int(missing)

    async def publish_model_change(self, model: str, before: float) -> None:
        """Tell the other replicas' model watches (no confirmation: the shared tier already
        stopped serving the older answers when Redis decided the change)."""
        async with mapped():
            await self._append("model", {"model": model, "before": repr(before)}, "")

    async def _append(self, kind: str, fields: dict[str, str | None], ack: str) -> tuple[str, int]:
        ks = self._keys
        marker = ks.purge_ack(ack or "-") + ":open"
        pairs: list[str] = ["kind", kind, "origin", self.replica_id, "ack", ack]
        for name, value in fields.items():
            if value is not None:
                pairs += [name, value]
        keys = [ks.purge_log, ks.purge_epoch, ks.purge_readers, marker, ks.purge_trimmed]
        args: list[str | int] = [self._max_entries, uuid.uuid4().hex, self.replica_id, ack]
        args += [ACK_TTL_MS, *pairs]
        entry_id, live = await self._publish_script(keys=keys, args=args)
        return entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id), int(live)

    # -- following ----------------------------------------------------------------------------
    def start(self) -> None:
        """Start following the log on the running loop (idempotent)."""
        if self._task is None and not self._closed:
            self._task = asyncio.get_running_loop().create_task(self._follow())

    async def started(self) -> None:
        """Start following; the first caller waits (at most the command timeout) until the
        log was read once, later ones never wait (a Redis outage or a model still loading
        costs no latency per request; until then Redis hits are not remembered)."""
        self.start()
        if not self._waited:
            self._waited = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._caught_up.wait(), self._timeout_s)

    @property
    def synced(self) -> bool:
        """The log was read up to now at least once (and is being followed)."""
        return self._caught_up.is_set()

    def note(self, now: float, window_s: float) -> str | None:
        """What ``health()`` should say about the log (None: nothing)."""
        reset = self._last_reset
        if reset is not None and now - reset[0] <= window_s:
            return f"local store emptied ({self.resets}x since start): {reset[1]}"
        return None

    async def _follow(self) -> None:
        await self._check_eviction()
        # the store must be open before its position is trusted
        self._opened_with = await self._store_ready()
        while not self._closed:  # a flag too: wait_for can swallow a cancel (gh-86296)
            if not await self._step():
                if not self._gate.open:
                    reason = self._failopen.last_reason("redis_purge_log") or "retrying"
                    self._gate.close(f"waiting to replay the purge log ({reason})", settled=True)
                await asyncio.sleep(RETRY_S)

    async def _check_eviction(self) -> None:
        """Read the server's eviction policy once, at start; warn on an unsafe one. Never
        fails the follower: a Redis (or master) unreachable now leaves it unknown."""
        from redis.exceptions import RedisError

        try:
            warning = await asyncio.wait_for(eviction_warning(self._client), self._timeout_s)
        except (RedisError, OSError, TimeoutError) as exc:
            log.debug("semcache: could not read Redis's maxmemory-policy: %s", exc)
            return
        if warning is not None:
            log.warning("semcache: %s", warning)
        self.eviction = warning

    async def _step(self) -> bool:
        fo = self._failopen
        if not self._synced:
            observed = await fo.call("redis_purge_log", self._observe, None)
            if observed is None:
                return False
            epoch, now_ms, info = observed
            settle = lambda: self._settle(epoch, now_ms, info)  # noqa: E731
            if not await fo.call("purge_apply", settle, False, timeout_s=APPLY_TIMEOUT_S):
                return False
        catching_up = not self._gate.open or not self._caught_up.is_set()
        wait_s = self._timeout_s + self._block_ms / 1000.0
        batch = await fo.call(
            "redis_purge_log", lambda: self._read(catching_up), None, timeout_s=wait_s
        )
        if batch is None:
            self._synced = False  # re-check the epoch and the trim point once back
            return False
        if batch is _RESYNC:
            self._synced = False
            return True
        assert isinstance(batch, list)
        if batch:
            return await fo.call(
                "purge_apply", lambda: self._apply(batch), False, timeout_s=APPLY_TIMEOUT_S
            )
        if catching_up:  # nothing after our position: the store may serve again
            self._gate.release()
            self._caught_up.set()
        return True

    async def _observe(self) -> tuple[str, int, dict[str, Any] | None]:
        from redis.exceptions import ResponseError

        async with mapped():
            epoch, now_ms = await self._beat()
            try:
                info: dict[str, Any] | None = await self._client.xinfo_stream(self._keys.purge_log)
            except ResponseError as exc:
                if "no such key" not in str(exc).lower():
                    raise
                info = None
            trimmed = await self._client.get(self._keys.purge_trimmed)
        if info is not None and trimmed is not None:
            info["trimmed"] = trimmed
        return epoch, now_ms, info

    async def _beat(self) -> tuple[str, int]:
        ks = self._keys
        keys = [ks.purge_epoch, ks.purge_readers]
        epoch, now_ms = await self._check(
            keys=keys, args=[uuid.uuid4().hex, self.replica_id, READER_TTL_MS]
        )
        return (epoch.decode() if isinstance(epoch, bytes) else str(epoch)), int(now_ms)

    async def _settle(self, epoch: str, now_ms: int, info: dict[str, Any] | None) -> bool:
        """Trust the saved position and replay after it, or empty the local tiers."""
        position = None
        if self._last is not None and self._epoch is not None:
            position = LogPosition(self._epoch, self._last)
        elif self._file is not None:
            position = await asyncio.to_thread(self._file.load)
        why = replay_gap(position, epoch, info)
        if position is None and self._opened_with == 0 and info is not None:
            # A store that was empty when opened holds only what this replica learned since
            # it started: replay from its start (Redis's clock; 1 s for the round trip).
            born = int(self._born_ms + (now_ms - time.time() * 1000.0)) - 1000
            self._last = f"{max(0, born)}-0"
        elif position is None and self._opened_with == 0:
            self._last = "0-0"  # no log yet: every entry it will hold is news
        elif why is None and position is not None:
            self._last = position.last_id
        else:
            self._gate.close(f"emptying the local store: {why}")
            removed = await self._on_reset()
            if removed or position is not None:  # a position that no longer holds: counted
                self.resets += 1
                self._stats.count("purge_log_resets")
                self._last_reset = (self._failopen.now(), str(why))
                log.warning("semcache purge log: %s; emptied the local tiers (%d)", why, removed)
            end = info.get("last-generated-id") if info is not None else None
            self._last = "0-0" if end is None else (end.decode() if isinstance(end, bytes) else end)
        self._epoch, self._synced = epoch, True
        await self._save()
        return True

    async def _read(self, catching_up: bool) -> object:
        async with mapped():
            if (await self._beat())[0] != self._epoch:
                return _RESYNC  # a new log: what this replica missed is unknowable
            block = None if catching_up else self._block_ms
            reply: Any = await self._client.xread(
                {self._keys.purge_log: self._last or "0-0"}, count=BATCH, block=block
            )
        if not reply:
            return []
        _, entries = reply[0]  # RESP2: [[stream, [(id, fields), ...]]]
        return list(entries)

    async def _apply(self, batch: list[tuple[bytes, dict[bytes, bytes]]]) -> bool:
        try:
            for entry_id, raw in batch:
                fields = {k.decode(): v.decode() for k, v in raw.items()}
                if fields.get("origin") != self.replica_id:  # the origin applied it itself
                    await self._apply_one(fields)
                    self._stats.count("purge_log_applied")
                    if fields.get("ack"):
                        acks = self._keys.purge_ack(fields["ack"])
                        async with mapped():
                            await self._ack(keys=[acks + ":open", acks], args=[ACK_TTL_MS])
                self._last = entry_id.decode()
        finally:
            await self._save()
        return True

    async def _apply_one(self, fields: dict[str, str]) -> None:
        if fields.get("kind") == "model":
            if self._on_model_change is not None:
                self._on_model_change(fields["model"], float(fields["before"]))
            return
        await self._on_purge(
            PurgeFilter(
                fields.get("tenant"),
                fields.get("namespace"),
                fields.get("model"),
                key=fields.get("key"),
                scope=fields.get("scope"),
            )
        )

    async def _save(self) -> None:
        if self._file is not None and self._epoch is not None and self._last is not None:
            await asyncio.to_thread(self._file.save, LogPosition(self._epoch, self._last))

    async def close(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            # bounded: a swallowed cancel must not hang close (the task then ends by itself)
            await asyncio.wait([self._task], timeout=2.0)
            self._task = None
            # no longer live: a purge from now on waits for no confirmation from us
            await self._failopen.call("redis_purge_log_leave", self._leave, None)

    async def _leave(self) -> None:
        async with mapped():
            await self._client.zrem(self._keys.purge_readers, self.replica_id)
