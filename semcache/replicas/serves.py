"""Serve records in the shared Redis, so feedback works on any replica or worker.

A semantic hit's serve id is made by the process that served it, but the client may send its
feedback to any other (``semcache serve --workers``, replicas behind a load balancer). So each
serve is also written to Redis (``P:serve:{b}:<serve id>``: the record as JSON, kept
``SERVE_TTL_S``) before the answer is returned, and a process that does not know an id reads
it there. An entry key (an exact hit's ``x-semcache-key``) is found in the shared exact tier.
Under an ``allkeys-*`` eviction policy a record may be evicted sooner: its feedback is then
refused as unknown, never applied to another answer.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import orjson

from semcache.errors import StoreError
from semcache.replicas.connect import mapped
from semcache.replicas.exact import RedisExact, decode_entry, is_cluster
from semcache.replicas.keys import KeySpace
from semcache.runtime.failopen import FailOpen
from semcache.stores.base import Entry
from semcache.tuning.records import Served

if TYPE_CHECKING:
    from redis.asyncio import Redis

#: How long a serve record is kept: a day of feedback on an answer.
SERVE_TTL_S = 86_400
#: What a serve id or an entry key looks like (hex digests): anything else is never looked up.
_REF = re.compile(r"[0-9a-f]{16,128}")


class SharedServes:
    """Write and read serve records (``client``: ``redis.asyncio``)."""

    def __init__(
        self,
        client: Redis,
        keys: KeySpace,
        exact: RedisExact,
        failopen: FailOpen,
        *,
        ttl_s: int = SERVE_TTL_S,
    ) -> None:
        self._client = client
        self._keys = keys
        self._exact = exact
        self._failopen = failopen
        self._ttl_s = ttl_s

    async def put(self, served: Served) -> None:
        """Record ``served``; a Redis failure is counted (kind ``redis_serve``) and the hit is
        served anyway (its feedback then works only where it was served)."""

        async def write() -> None:
            key = self._keys.serve(served.serve_id, tenant=served.tenant)
            async with mapped():
                await self._client.set(key, orjson.dumps(asdict(served)), ex=self._ttl_s)

        await self._failopen.call("redis_serve", write, None)

    async def find(self, ref: str, tenant: str) -> Served | None:
        """The serve ``ref`` names for ``tenant``: a recorded serve id, else the live entry
        stored under that key; None when neither. Redis errors are raised (the caller asked)."""
        if not _REF.fullmatch(ref):
            return None
        async with mapped():
            data = await self._client.get(self._keys.serve(ref, tenant=tenant))
        if data is not None:
            served = Served(**orjson.loads(data))
            return served if served.tenant == tenant else None
        entry = await self._entry(ref, tenant)
        if entry is None:
            return None
        return Served.of_entry(entry, at=entry.created_at)

    async def _entry(self, exact: str, tenant: str) -> Entry | None:
        """The tenant's live entry stored under ``exact`` in any namespace and model, or None.
        One ``SCAN`` of the tenant's bucket (every key on one Redis): feedback is rare."""
        ks, client = self._keys, self._client
        scan: dict[str, Any] = {"match": ks.entries_of(exact, tenant=tenant), "count": 1000}
        if is_cluster(client):
            cluster: Any = client
            scan["target_nodes"] = cluster.get_node_from_key(ks.generation_hash(tenant))
        async with mapped():
            names = [name async for name in client.scan_iter(**scan)]
            for name in names:
                data = await client.hget(name, "v")
                if data is None:
                    continue
                stored = decode_entry(data if isinstance(data, bytes) else data.encode())
                try:
                    live = await self._exact.get(
                        exact, tenant=tenant, namespace=stored.namespace, model=stored.model
                    )
                except StoreError:  # its generations were lost: withdrawn
                    continue
                if live is not None:
                    return live
        return None
