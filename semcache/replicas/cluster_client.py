"""The async Redis Cluster client semcache uses (imported only with ``redis.cluster = true``).

A subclass because redis-py's async ``ClusterPubSub`` looks up a channel's slot before the
slot table is loaded, so a subscription made before any other command fails; its commands
here load the table first.
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
