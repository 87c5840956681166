"""The shared exact tier: exact key -> stored answer in Redis, with purge generations.

Why generations and not only deletes: a purge must win over writes that began before it,
on every replica. Each write carries the generations its writer read before calling
upstream (``begin``) and lands only if they are unchanged (checked atomically in a Lua
script); a read returns an entry only if the generations it was written under are still
current. A purge bumps one generation (instantly withdrawing every covered entry, on every
replica) and then unlinks the entries with one ``SCAN`` so memory is freed and counted.
Expiry is Redis's own TTL; the byte bound is Redis's ``maxmemory`` policy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import orjson

from semcache.pipeline.fence import PurgeFilter
from semcache.replicas.connect import mapped
from semcache.replicas.keys import KeySpace
from semcache.stores.base import NEVER_EXPIRES, Entry

if TYPE_CHECKING:
    from redis.asyncio import Redis

_GENS = """
local gens = redis.call('MGET', unpack(KEYS, %d, %d))
local parts = {}
for i = 1, 8 do parts[i] = gens[i] or '0' end
local current = table.concat(parts, ',')
"""

READ = (
    _GENS % (2, 9)
    + """
local fields = redis.call('HMGET', KEYS[1], 'g', 'v')
if not fields[2] or fields[1] ~= current then return false end
return fields[2]
"""
)
"""KEYS: entry, 8 generations. The entry if it was written under the current generations."""

WRITE = (
    _GENS % (2, 9)
    + """
local admitted = current == ARGV[1]
local changed = 0
if ARGV[4] ~= '' then
  local previous = redis.call('GET', KEYS[10])
  redis.call('SET', KEYS[10], ARGV[4])
  if previous and previous ~= ARGV[4] then
    changed = 1
    if ARGV[5] == '1' then
      redis.call('INCR', KEYS[11])
      local after = redis.call('MGET', unpack(KEYS, 2, 9))
      for i = 1, 8 do parts[i] = after[i] or '0' end
      current = table.concat(parts, ',')
    end
  end
end
if not admitted then return {0, changed} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'g', current, 'v', ARGV[2])
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {1, changed}
"""
)
"""KEYS: entry, 8 generations, the model name's snapshot, its generation; ARGV: generations at
begin, entry JSON, TTL in ms (0: none), the answer's snapshot ('' unknown), '1' to invalidate.

Writes only if no purge covering the entry happened since begin. A snapshot other than the
last one recorded for the model name is a model change: under '1' the name's generation is
bumped (every older answer of it is withdrawn for every replica) and this answer is written
under the new generations. Returns {written, changed}."""


def encode_entry(entry: Entry) -> bytes:
    return orjson.dumps(entry.payload())


def decode_entry(data: bytes) -> Entry:
    return Entry.from_payload(orjson.loads(data))


class RedisExact:
    """Get, put and purge stored answers in Redis (``client`` is a ``redis.asyncio.Redis``).

    Every method raises :class:`~semcache.errors.StoreError` on a Redis failure; the stages
    degrade that to a miss through ``FailOpen``.
    """

    def __init__(self, client: Redis, keys: KeySpace, clock: Callable[[], float]) -> None:
        self._client = client
        self._keys = keys
        self._clock = clock
        self._read = client.register_script(READ)
        self._write = client.register_script(WRITE)

    def _entry_keys(self, exact: str, tenant: str, namespace: str, model: str) -> list[str]:
        ks = self._keys
        entry = ks.entry(exact, tenant=tenant, namespace=namespace, model=model)
        return [entry, *ks.generations(tenant=tenant, namespace=namespace, model=model)]

    async def begin(self, *, tenant: str, namespace: str, model: str) -> bytes:
        """The generations now, for a write that may land later (``put``'s ``token``)."""
        gens = self._keys.generations(tenant=tenant, namespace=namespace, model=model)
        async with mapped():
            values = await self._client.mget(gens)
        return b",".join(b"0" if v is None else str(int(v)).encode() for v in values)

    async def get(self, exact: str, *, tenant: str, namespace: str, model: str) -> Entry | None:
        """The live entry for the key, or None (absent, expired, or withdrawn by a purge)."""
        async with mapped():
            data = await self._read(keys=self._entry_keys(exact, tenant, namespace, model))
        if data is None:
            return None
        entry = decode_entry(data)
        return entry if entry.expires_at > self._clock() else None

    async def put(
        self, entry: Entry, token: bytes, *, snapshot: str | None = None, invalidate: bool = True
    ) -> tuple[bool, bool]:
        """Store ``entry`` unless a purge covering it happened since ``token``, and record the
        answer's model ``snapshot``; returns (stored, the snapshot changed)."""
        ttl_ms = 0
        if entry.expires_at < NEVER_EXPIRES:
            ttl_ms = max(0, int((entry.expires_at - self._clock()) * 1000))
        ks = self._keys
        keys = [
            *self._entry_keys(entry.key, entry.tenant, entry.namespace, entry.model),
            ks.snapshot(entry.model),
            ks.purge_generation(tenant=None, namespace=None, model=entry.model),
        ]
        if ttl_ms == 0 and entry.expires_at < NEVER_EXPIRES:
            keys[0] = ks.discard  # already expired: record the snapshot, store nothing
            token = b"-"
        args: list[bytes | str | int] = [
            token, encode_entry(entry), ttl_ms, snapshot or "", "1" if invalidate else "0"
        ]  # fmt: skip
        async with mapped():
            written, changed = await self._write(keys=keys, args=args)
        return bool(written), bool(changed)

    async def withdraw(self, exact: str, *, tenant: str, namespace: str, model: str) -> int:
        """Remove the one entry stored under ``exact`` in this partition; returns 0 or 1."""
        entry = self._keys.entry(exact, tenant=tenant, namespace=namespace, model=model)
        async with mapped():
            return int(await self._client.unlink(entry))

    async def purge(self, purge: PurgeFilter) -> int:
        """Withdraw every covered entry at once, then unlink them; returns how many."""
        ks, client = self._keys, self._client
        fields = {"tenant": purge.tenant, "namespace": purge.namespace, "model": purge.model}
        removed = 0
        async with mapped():
            await client.incr(ks.purge_generation(**fields))
            batch: list[bytes] = []
            async for key in client.scan_iter(match=ks.purge_pattern(**fields), count=1000):
                batch.append(key)
                if len(batch) >= 1000:
                    removed += await client.unlink(*batch)
                    batch = []
            if batch:
                removed += await client.unlink(*batch)
        return removed
