"""The shared exact tier: exact key -> stored answer in Redis, with purge generations.

A purge must win over writes that began before it, on every replica: a write carries the
generations its writer read before calling upstream (``begin``) and lands only if they are
unchanged (atomically, in a script); a read returns an entry only if the generations it was
written under are current. A purge bumps one generation field, then unlinks the entries by
``SCAN``. Each generation hash carries a random incarnation field ``!``, so a lost hash that
starts again from 0 withdraws everything older instead of letting a purged answer back.
Expiry is Redis's TTL; the byte bound is Redis's ``maxmemory`` policy.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from semcache.errors import StoreError
from semcache.pipeline.fence import PurgeFilter, Refusal
from semcache.replicas.connect import mapped
from semcache.replicas.keys import KeySpace
from semcache.runtime.failopen import FailOpen
from semcache.stores.base import NEVER_EXPIRES, Entry

if TYPE_CHECKING:
    from redis.asyncio import Redis

_GENS = """
local function generations()
  local gens = redis.call('HMGET', KEYS[2], '!', unpack(ARGV, 1, 8))
  local parts = {gens[1] or ''}
  for i = 1, 8 do parts[i + 1] = gens[i + 1] or '0' end
  return table.concat(parts, ','), gens[1]
end
local current, incarnation = generations()
"""
"""Every script's prologue. KEYS[2]: the bucket's generation hash; ARGV[1..8]: the entry's
8 generation fields. ``current``: the hash's incarnation and their values joined (the
entry's ``g`` when written); ``incarnation``: false when the hash has none (it was lost)."""

BEGIN = (
    _GENS
    + """
if not incarnation then
  redis.call('HSETNX', KEYS[2], '!', ARGV[9])
  current = generations()
end
return current .. '|' .. (redis.call('GET', KEYS[1]) or '')
"""
)
"""KEYS: the key's withdrawal mark, generation hash; ARGV: 8 fields, an incarnation for a
hash that has none. The generations and the key's withdrawal mark now (a write's token)."""

READ = (
    _GENS
    + """
local fields = redis.call('HMGET', KEYS[1], 'g', 'v')
if not fields[2] then return false end
if not incarnation then return 0 end
if fields[1] ~= current then return false end
return fields[2]
"""
)
"""KEYS: entry, generation hash; ARGV: 8 fields. The entry if it was written under the
current generations; 0 when an entry is there but its hash has no incarnation (lost; the
next ``begin`` sets a new one, under which no older entry is live)."""

WRITE = (
    _GENS
    + """
local mark = redis.call('GET', KEYS[3]) or ''
local admitted = incarnation and current .. '|' .. mark == ARGV[9]
local refused = 0
if not incarnation then
  refused = -1
elseif string.match(ARGV[9], '^([^|]*)|') == current then
  refused = -2
end
if ARGV[12] == '1' then
  redis.call('HINCRBY', KEYS[2], ARGV[13], 1)
  current = generations()
end
if not admitted then return refused end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'g', current, 'v', ARGV[10])
if tonumber(ARGV[11]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[11]) end
return 1
"""
)
"""KEYS: entry, generation hash, the key's withdrawal mark; ARGV: 8 fields, the token of
begin, entry JSON, TTL in ms (0: none), '1' to bump the model name's generation first, that
field (``_:_:h(model)``).

Writes only if no purge covering the entry and no withdrawal of its key happened since begin
(and the hash was not lost meanwhile); a model change bumps the name's generation (every
older answer of it is withdrawn) and this answer is written under the new generations.
Returns 1 written; refused: 0 by a purge, -2 by a withdrawal of the key, -1 because the hash
was lost (no incarnation: what was purged is unknown)."""

#: The write script's refusals, by its return value.
REFUSALS = {0: Refusal.PURGED, -1: Refusal.FENCE_MISSING, -2: Refusal.WITHDRAWN}


class PutResult(NamedTuple):
    """What ``put`` did: ``stored``; ``changed``: the answer's model snapshot differs from
    the last one recorded; ``refused``: why a fence refused it (None when stored, or when
    the entry was already expired and nothing was to be stored)."""

    stored: bool
    changed: bool
    refused: Refusal | None = None


#: How long a key's withdrawal mark is kept: longer than any write takes from its ``begin``
#: (an upstream call) to its ``put``.
WITHDRAWN_TTL_MS = 3_600_000


def is_cluster(client: object) -> bool:
    from redis.asyncio.cluster import RedisCluster

    return isinstance(client, RedisCluster)


def encode_entry(entry: Entry) -> bytes:
    return orjson.dumps(entry.payload())


def decode_entry(data: bytes) -> Entry:
    return Entry.from_payload(orjson.loads(data))


class RedisExact:
    """Get, put and purge stored answers in Redis (``client`` is a ``redis.asyncio.Redis``).

    Every method raises :class:`~semcache.errors.StoreError` on a Redis failure; the stages
    degrade that to a miss through ``FailOpen``.
    """

    def __init__(
        self,
        client: Redis,
        keys: KeySpace,
        clock: Callable[[], float],
        *,
        failopen: FailOpen | None = None,
    ) -> None:
        self._failopen = failopen
        self._client = client
        self._keys = keys
        self._clock = clock
        self._begin = client.register_script(BEGIN)
        self._read = client.register_script(READ)
        self._write = client.register_script(WRITE)

    async def begin(self, exact: str, *, tenant: str, namespace: str, model: str) -> bytes:
        """The generations and the key's withdrawal mark now, for a write of ``exact`` that
        may land later (``put``'s ``token``)."""
        ks = self._keys
        keys = [ks.withdrawn(exact, tenant=tenant), ks.generation_hash(tenant)]
        fields = ks.generations(tenant=tenant, namespace=namespace, model=model)
        async with mapped():
            token = await self._begin(keys=keys, args=[*fields, uuid.uuid4().hex])
        return token if isinstance(token, bytes) else str(token).encode()

    async def get(self, exact: str, *, tenant: str, namespace: str, model: str) -> Entry | None:
        """The live entry for the key, or None (absent, expired, or withdrawn by a purge)."""
        ks = self._keys
        keys = [ks.entry(exact, tenant=tenant, namespace=namespace, model=model)]
        keys.append(ks.generation_hash(tenant))
        fields = ks.generations(tenant=tenant, namespace=namespace, model=model)
        async with mapped():
            data = await self._read(keys=keys, args=fields)
        if data == 0:  # fail closed: counted by the caller's FailOpen, served as a miss
            raise StoreError(
                f"redis generations {keys[1]!r} were lost (deleted, evicted or a master back "
                "empty): every entry in that bucket is withdrawn"
            )
        if data is None:
            return None
        entry = decode_entry(data)
        return entry if entry.expires_at > self._clock() else None

    async def put(
        self, entry: Entry, token: bytes, *, snapshot: str | None = None, invalidate: bool = True
    ) -> PutResult:
        """Store ``entry`` unless a purge covering it happened since ``token``, and record the
        answer's model ``snapshot``."""
        ttl_ms = 0
        if entry.expires_at < NEVER_EXPIRES:
            ttl_ms = max(0, int((entry.expires_at - self._clock()) * 1000))
        ks, tenant, model = self._keys, entry.tenant, entry.model
        keys = [
            ks.entry(entry.key, tenant=tenant, namespace=entry.namespace, model=model),
            ks.generation_hash(tenant),
            ks.withdrawn(entry.key, tenant=tenant),
        ]
        expired = ttl_ms == 0 and entry.expires_at < NEVER_EXPIRES
        if expired:
            keys[0] = ks.discard(tenant)  # already expired: record the snapshot, store nothing
            token = b"-"
        model_field = ks.purge_generation(tenant=None, namespace=None, model=model)
        changed = await self._record_snapshot(model, snapshot) if snapshot else False
        async with mapped():
            bump = changed and invalidate
            args: list[bytes | str | int] = [
                *ks.generations(tenant=tenant, namespace=entry.namespace, model=model),
                token,
                encode_entry(entry),
                ttl_ms,
                "1" if bump else "0",
                model_field,
            ]
            written = await self._write(keys=keys, args=args)
            if bump:  # the tenant's bucket is bumped; every other bucket too (cluster)
                await self._bump(ks.other_generation_hashes(tenant), model_field)
        if written == 1:
            return PutResult(True, changed)
        return PutResult(False, changed, None if expired else REFUSALS.get(int(written)))

    async def _record_snapshot(self, model: str, snapshot: str) -> bool:
        """Record the answer's snapshot; True when it differs from the last one recorded.

        The key is the model name's, on a slot of its own: on a cluster its master may be
        down while the entry's is up. With ``failopen`` the write then goes on without
        deciding a change (counted as kind ``redis_snapshot``) rather than failing too."""

        async def record() -> bytes | None:
            async with mapped():
                key = self._keys.snapshot(model)
                previous = await self._client.set(key, snapshot, get=True)
            return previous if isinstance(previous, bytes) else None

        if self._failopen is None:
            previous = await record()
        else:
            previous = await self._failopen.call("redis_snapshot", record, None)
        return previous is not None and previous != snapshot.encode()

    async def _bump(self, hashes: list[str], field: str) -> None:
        """One generation field in each hash: one command on a single Redis (one bucket); on a
        cluster one pipeline, a batch per master, not atomic across them (a transaction
        cannot span slots), so a purge is complete, everywhere, when it returns."""
        if len(hashes) <= 1:
            for name in hashes:
                await self._client.hincrby(name, field, 1)
            return
        pipe = self._client.pipeline(transaction=False)
        for name in hashes:
            pipe.hincrby(name, field, 1)
        await pipe.execute()

    async def withdraw(self, exact: str, *, tenant: str, namespace: str, model: str) -> int:
        """Remove the one entry stored under ``exact`` in this partition; returns 0 or 1.
        First a new withdrawal mark of the key (kept ``WITHDRAWN_TTL_MS``), so a write of it
        that began before never lands after."""
        entry = self._keys.entry(exact, tenant=tenant, namespace=namespace, model=model)
        mark = self._keys.withdrawn(exact, tenant=tenant)
        async with mapped():
            await self._client.set(mark, uuid.uuid4().hex, px=WITHDRAWN_TTL_MS)
            return int(await self._client.unlink(entry))

    async def purge(self, purge: PurgeFilter) -> int:
        """Withdraw every covered entry at once, then unlink them; returns how many."""
        ks, client = self._keys, self._client
        fields = {"tenant": purge.tenant, "namespace": purge.namespace, "model": purge.model}
        removed = 0
        async with mapped():
            await self._bump(ks.purge_hashes(purge.tenant), ks.purge_generation(**fields))
            batch: list[bytes] = []
            scan: dict[str, Any] = {"match": ks.purge_pattern(**fields), "count": 1000}
            if purge.tenant is not None and is_cluster(client):
                # the tenant's entries are on its bucket's slot: scan that master only, so
                # another master being down does not fail this purge
                cluster: Any = client
                scan["target_nodes"] = cluster.get_node_from_key(ks.generation_hash(purge.tenant))
            async for key in client.scan_iter(**scan):
                batch.append(key)
                if len(batch) >= 1000:
                    removed += await client.unlink(*batch)
                    batch = []
            if batch:
                removed += await client.unlink(*batch)
        return removed
