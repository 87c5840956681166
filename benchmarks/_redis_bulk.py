"""Bulk-load a fresh Redis vector-set store for benchmarks: what ``upsert`` writes, faster.

``RedisVectorStore.upsert`` runs its WRITE script per entry, and a script runs VADD on Redis's
main thread: ~550 entries/s at 100k on this shared machine, past 20 minutes for the two 100k
loads. Outside a script ``VADD ... CAS`` does the neighbour search on a thread and only links
on the main thread. In an empty Redis no fence exists (WRITE's fence check and ``w:<key>``
mark never apply) and entries that never expire have no payload TTL, so WRITE reduces to
VADD + HSET + two ZADDs with the same arguments: ``bulk_load`` sends exactly those, in
pipelines of ``batch``. ``same_as_upsert`` checks it on a sample: every key, attribute,
payload, score and stored vector equal to what ``upsert`` wrote under another prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from semcache.stores import NEVER_EXPIRES, Entry
from semcache.stores.redis_vectors import RedisVectorStore


def bulk_load(
    store: RedisVectorStore, client: Any, entries: Sequence[Entry], batch: int = 1000
) -> None:
    if any(e.expires_at < NEVER_EXPIRES for e in entries):
        raise ValueError("bulk_load writes entries that never expire only (no payload TTL)")
    if client.exists(store._layout.fence):
        raise ValueError("bulk_load is for a store without fences (WRITE would check them)")
    for lo in range(0, len(entries), batch):
        chunk = entries[lo : lo + batch]
        pids = store._register(client, chunk)
        pipe = client.pipeline(transaction=False)
        for entry, pid in zip(chunk, pids, strict=True):
            assert entry.vector is not None
            v, p, x, c, _ = store._layout.partition(pid)
            args = store._write_args(entry, store._vector(entry.vector), 0.0, float("-inf"))
            key, blob, attrs, payload, created, expires = args[:6]
            pipe.execute_command("VADD", v, "FP32", blob, key, "CAS", "NOQUANT", "SETATTR", attrs)
            pipe.hset(p, key, payload)
            pipe.zadd(x, {key: float(expires)})
            pipe.zadd(c, {key: float(created)})
        pipe.execute()


def _dump(client: Any, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for raw in client.scan_iter(match=f"{prefix}:*"):
        name = raw.decode()
        suffix = name[len(prefix) :]
        kind = client.type(name).decode()
        if kind == "hash":
            value: Any = client.hgetall(name)
        elif kind == "zset":
            value = client.zrange(name, 0, -1, withscores=True)
        elif kind == "vectorset":
            elements = sorted(client.execute_command("VRANDMEMBER", name, -1_000_000))
            elements = sorted(set(elements))
            value = [
                (
                    e,
                    client.execute_command("VGETATTR", name, e),
                    client.execute_command("VEMB", name, e),
                )
                for e in elements
            ]
            value.append(client.execute_command("VDIM", name))
        else:
            value = client.get(name)
        out[suffix] = (kind, value)
    return out


def same_as_upsert(client: Any, make_store: Any, entries: Sequence[Entry]) -> bool:
    """Write ``entries`` with ``upsert`` under one prefix and ``bulk_load`` under another;
    True when both prefixes hold the same keys with the same contents."""
    a, b = make_store("cmp-upsert"), make_store("cmp-bulk")
    a.upsert(list(entries))
    bulk_load(b, client, entries)
    same = _dump(client, "cmp-upsert") == _dump(client, "cmp-bulk")
    for prefix in ("cmp-upsert", "cmp-bulk"):
        for name in client.scan_iter(match=f"{prefix}:*"):
            client.delete(name)
    return same
