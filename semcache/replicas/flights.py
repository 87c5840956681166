"""A cross-replica flight: one upstream call per request key among replicas sharing a Redis.

Each step is one atomic command or script on the tenant's bucket (one cluster slot):

- **Claim**: a live stored answer is returned; else ``SET lease NX PX`` makes the caller the
  leader; else it follows the flight the lease names. One script, so a request never misses
  an answer stored just before it claimed.
- **Lead**: renew the lease every ``lease_ms / 3``; append chunks to the flight's stream,
  then ``done`` (after storing the answer) or ``failed``; release the lease last.
- **Follow**: replay the stream, then block for more; when the lease no longer names this
  flight and no outcome came, the flight is lost and the follower claims again.

A failed or lost flight is never served: a follower that already passed a chunk on raises
``SharedFlightFailed``.
"""

from __future__ import annotations

import asyncio
import enum
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from semcache.errors import StoreError
from semcache.replicas.connect import mapped
from semcache.replicas.exact import _GENS
from semcache.replicas.keys import KeySpace
from semcache.runtime.failopen import FailOpen

if TYPE_CHECKING:
    from redis.asyncio import Redis

CLAIM = (
    _GENS
    + """
local fields = redis.call('HMGET', KEYS[1], 'g', 'v')
if fields[2] and fields[1] == current then return {'hit', fields[2]} end
if redis.call('SET', KEYS[3], ARGV[9], 'NX', 'PX', ARGV[10]) then return {'lead', ARGV[9]} end
return {'follow', redis.call('GET', KEYS[3])}
"""
)
"""KEYS: entry, the bucket's generation hash, lease (one slot: the tenant's bucket); ARGV: the
entry's 8 generation fields, new flight id, lease ms."""

PEEK = (
    _GENS
    + """
local fields = redis.call('HMGET', KEYS[1], 'g', 'v')
if fields[2] and fields[1] == current then return {'hit', fields[2]} end
local flight = redis.call('GET', KEYS[3])
if flight then return {'follow', flight} end
return {'none', ''}
"""
)
"""CLAIM without the lease: what a paraphrase of the request finds (a live answer, the flight
to follow, or nothing). Same KEYS and the first 8 ARGV."""

RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

CHUNK, DONE, FAILED = b"c", b"d", b"f"

#: Consecutive blocking reads that may time out before following fails.
_READ_TIMEOUTS_TOLERATED = 2


class Role(enum.Enum):
    HIT = "hit"
    LEADER = "lead"
    FOLLOWER = "follow"


@dataclass(frozen=True, slots=True)
class Claim:
    role: Role
    lease: str
    stream: str
    flight_id: str
    entry: bytes | None = None


@dataclass(slots=True)
class Followed:
    """How following ended: ``done`` holds the outcome payload; else the flight failed or was
    lost (``failed``), or the follower's wait ran out (``timed_out``). ``emitted`` counts the
    chunks passed on to the caller."""

    done: dict[str, Any] | None = None
    failed: bool = False
    timed_out: bool = False
    emitted: int = 0


class SharedFlights:
    """Claims, leads and follows flights in one Redis (the keys come from ``keys``)."""

    def __init__(
        self,
        client: Redis,
        keys: KeySpace,
        failopen: FailOpen,
        *,
        lease_ms: int,
        stream_ttl_ms: int,
        poll_ms: int,
    ) -> None:
        self._client = client
        self._keys = keys
        self._failopen = failopen
        self.lease_ms = lease_ms
        self._stream_ttl_ms = stream_ttl_ms
        self._poll_ms = poll_ms
        self._claim = client.register_script(CLAIM)
        self._peek = client.register_script(PEEK)
        self._renew = client.register_script(RENEW)
        self._release = client.register_script(RELEASE)

    async def claim(self, exact: str, *, tenant: str, namespace: str, model: str) -> Claim:
        ks = self._keys
        lease = ks.lease(exact, tenant=tenant)
        keys = [
            ks.entry(exact, tenant=tenant, namespace=namespace, model=model),
            ks.generation_hash(tenant),
            lease,
        ]
        args: list[str | int] = [
            *ks.generations(tenant=tenant, namespace=namespace, model=model),
            uuid.uuid4().hex,
            self.lease_ms,
        ]
        async with mapped():
            kind, value = await self._claim(keys=keys, args=args)
        role = Role(kind.decode())
        if role is Role.HIT:
            return Claim(role, lease, "", "", entry=value)
        flight_id = value.decode()
        return Claim(role, lease, ks.stream(exact, flight_id, tenant=tenant), flight_id)

    async def peek(self, exact: str, *, tenant: str, namespace: str, model: str) -> Claim | None:
        """The stored answer (``HIT``) or the flight (``FOLLOWER``) of another request's key,
        or None when it is neither stored nor in flight; never takes a lease."""
        ks = self._keys
        lease = ks.lease(exact, tenant=tenant)
        keys = [
            ks.entry(exact, tenant=tenant, namespace=namespace, model=model),
            ks.generation_hash(tenant),
            lease,
        ]
        args = ks.generations(tenant=tenant, namespace=namespace, model=model)
        async with mapped():
            kind, value = await self._peek(keys=keys, args=args)
        if kind == b"hit":
            return Claim(Role.HIT, lease, "", "", entry=value)
        if kind != b"follow":
            return None
        flight_id = value.decode()
        return Claim(Role.FOLLOWER, lease, ks.stream(exact, flight_id, tenant=tenant), flight_id)

    def lead(self, claim: Claim) -> Leader:
        return Leader(self, claim)

    async def follow(
        self, claim: Claim, on_chunk: Callable[[bytes], None], deadline: float | None
    ) -> Followed:
        """Replay and then read the flight live until it ends, is lost, or ``deadline`` passes
        (loop time; it applies only while no chunk has arrived)."""
        client, loop = self._client, asyncio.get_running_loop()
        followed = Followed()
        cursor = b"0-0"
        while True:
            block = self._poll_ms
            if deadline is not None and not followed.emitted:
                left_ms = int((deadline - loop.time()) * 1000)
                if left_ms <= 0:
                    followed.timed_out = True
                    return followed
                block = max(1, min(block, left_ms))
            reply = await self._read(claim.stream, cursor, block)
            if not reply:
                async with mapped():
                    alive = await client.get(claim.lease) == claim.flight_id.encode()
                    if not alive:  # one last look: the outcome may have landed meanwhile
                        reply = await client.xread({claim.stream: cursor}, count=512)
                if not alive and not reply:
                    followed.failed = True
                    return followed
                if not reply:
                    continue
            for entry_id, fields in reply[0][1]:
                cursor = entry_id
                kind = fields[b"t"]
                if kind == CHUNK:
                    on_chunk(fields[b"d"])
                    followed.emitted += 1
                elif kind == DONE:
                    followed.done = orjson.loads(fields[b"d"])
                    return followed
                else:
                    followed.failed = True
                    return followed

    async def _read(self, stream: str, cursor: bytes, block: int) -> Any:
        """One blocking read; a read that outlasts the socket timeout (this process's loop
        was busy, e.g. importing) counts as an empty read, up to a few times in a row."""
        from redis.exceptions import TimeoutError as RedisTimeout

        for attempt in range(_READ_TIMEOUTS_TOLERATED + 1):
            try:
                async with mapped():
                    return await self._client.xread({stream: cursor}, count=512, block=block)
            except StoreError as exc:
                if (
                    not isinstance(exc.__cause__, RedisTimeout)
                    or attempt == _READ_TIMEOUTS_TOLERATED
                ):
                    raise
        return None

    async def _append(self, stream: str, items: list[tuple[bytes, bytes]]) -> bool:
        async with mapped():
            pipe = self._client.pipeline(transaction=False)
            for kind, data in items:
                pipe.xadd(stream, {"t": kind, "d": data})
            pipe.pexpire(stream, self._stream_ttl_ms)
            await pipe.execute()
        return True


class Leader:
    """The leader's side of a flight: lease renewal and the ordered stream of its output.

    ``chunk`` never blocks (the caller is an ``emit`` callback): chunks are queued and a pump
    task appends them in batches. ``finish`` appends the outcome after every chunk, then
    releases the lease. Redis failures are counted by ``FailOpen`` and only stop publishing;
    followers then notice the lease going and claim again.
    """

    def __init__(self, flights: SharedFlights, claim: Claim) -> None:
        self._flights = flights
        self._claim = claim
        self._queue: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue()
        self.lease_lost = False
        self._finished = False
        loop = asyncio.get_running_loop()
        self._pump = loop.create_task(self._pump_forever())
        self._renewer = loop.create_task(self._renew_forever())

    def chunk(self, data: bytes) -> None:
        self._queue.put_nowait((CHUNK, data))

    async def finish(self, outcome: dict[str, Any] | None, *, keep: bool = True) -> None:
        """End the flight: ``done`` with ``outcome`` (appended before the lease is released: the
        answer is stored), or ``failed`` when None (after the release, so a follower claiming again
        never finds this lease). ``keep`` False deletes the stream after the release.
        """
        # A flag as well as cancel(): asyncio.wait_for (inside FailOpen) can swallow a
        # cancellation that arrives as the renewal completes (CPython gh-86296), and the
        # renewer would then renew forever. It is not awaited either: a late renewal is a
        # no-op, since the script renews only a lease that still names this flight.
        self._finished = True
        self._renewer.cancel()
        if outcome is None:
            await self._release()
            await self._close_stream((FAILED, b""))
        else:
            await self._close_stream((DONE, orjson.dumps(outcome)))
            await self._release()
        if not keep:
            await self._delete_stream()

    async def _delete_stream(self) -> None:
        client, stream = self._flights._client, self._claim.stream

        async def delete() -> None:
            async with mapped():
                await client.delete(stream)

        await self._flights._failopen.call("redis_stream_delete", delete, None)

    async def _close_stream(self, last: tuple[bytes, bytes]) -> None:
        self._queue.put_nowait(last)
        self._queue.put_nowait((b"", b""))  # end of pump
        await asyncio.gather(self._pump, return_exceptions=True)

    async def _release(self) -> None:
        flights, claim = self._flights, self._claim

        async def release() -> None:
            async with mapped():
                await flights._release(keys=[claim.lease], args=[claim.flight_id])

        await flights._failopen.call("redis_lease_release", release, None)

    async def _pump_forever(self) -> None:
        flights, queue = self._flights, self._queue
        healthy = True
        while True:
            items = [await queue.get()]
            while not queue.empty():
                items.append(queue.get_nowait())
            last = items[-1][0] == b""
            items = [item for item in items if item[0]]
            if healthy and items:
                append = partial(flights._append, self._claim.stream, items)
                healthy = await flights._failopen.call("redis_stream_append", append, False)
            if last:
                return

    async def _renew_forever(self) -> None:
        flights, claim = self._flights, self._claim

        async def renew() -> bool:
            async with mapped():
                args: list[str | int] = [claim.flight_id, flights.lease_ms]
                return bool(await flights._renew(keys=[claim.lease], args=args))

        while not self._finished:
            await asyncio.sleep(flights.lease_ms / 3000)
            if self._finished:
                return
            if not await flights._failopen.call("redis_lease_renew", renew, True):
                self.lease_lost = True  # it expired: another replica may lead now
                return
