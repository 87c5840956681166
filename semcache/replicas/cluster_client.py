"""The async Redis Cluster client semcache uses (imported only with ``redis.cluster = true``).

Why a subclass: redis-py's async ``ClusterPubSub`` looks up the channel's slot in the
client's slot table without loading it first, so a subscription made before any other
command (the purge broadcast subscribes on a cache's first request) fails with a
``KeyError``. Its commands here load the table first (a no-op once loaded). Pub/sub and
``PUBLISH`` both go to the master of the channel's slot, so the number of subscribers that
``PUBLISH`` reports counts every replica's subscription.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio.cluster import ClusterNode, ClusterPubSub, RedisCluster


class _PubSub(ClusterPubSub):
    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        await self.cluster.initialize()
        return await super().execute_command(*args, **kwargs)


class Cluster(RedisCluster):
    def pubsub(
        self,
        node: ClusterNode | None = None,
        host: str | None = None,
        port: int | None = None,
        **kwargs: Any,
    ) -> ClusterPubSub:
        return _PubSub(self, node=node, host=host, port=port, **kwargs)
