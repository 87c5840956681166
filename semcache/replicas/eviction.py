"""Is the shared Redis allowed to evict the keys that withdrawals rely on?

Generations, the purge log and fences have no TTL; an ``allkeys-*`` policy may evict them.
semcache then fails closed (correct, but answers lost and purges slow), so an operator is
told at start and in ``health()``.
"""

from __future__ import annotations

from typing import Any

#: Policies that may evict keys without a TTL.
UNSAFE_PREFIX = "allkeys-"


async def eviction_warning(client: Any) -> str | None:
    """What to tell an operator about the server's ``maxmemory-policy`` (None: safe, or
    unknown because ``INFO`` is not allowed). On a cluster every master is asked."""
    from redis.asyncio.cluster import RedisCluster
    from redis.exceptions import ResponseError

    try:
        if isinstance(client, RedisCluster):
            replies = await client.info("memory", target_nodes=RedisCluster.PRIMARIES)
        else:
            replies = await client.info("memory")
    except ResponseError:
        return None
    infos = [replies] if "maxmemory_policy" in replies else list(replies.values())
    policies = sorted({str(i.get("maxmemory_policy")) for i in infos if isinstance(i, dict)})
    unsafe = [p for p in policies if p.startswith(UNSAFE_PREFIX)]
    if not unsafe:
        return None
    return (
        f"Redis maxmemory-policy {unsafe[0]} may evict generations, fences and the purge log: "
        "withdrawals still hold (semcache fails closed) but cached answers are lost and purges "
        "wait; use noeviction or a volatile-* policy"
    )
