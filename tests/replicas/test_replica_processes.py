"""Four ``semcache serve`` processes on one Redis, as behind a load balancer.

1,000 concurrent identical requests spread over the replicas cost one upstream call; when the
replica leading a flight is killed mid-flight, a follower takes over: every caller is
answered (callers of the dead replica retry on the next one, as a load balancer would) and
nothing partial is stored.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from semcache.testing import FakeOpenAIServer, RedisServer
from semcache.testing._redis_server import free_port

REPLICAS = 4
CLIENT_KEY = "replica-test-key"
ADMIN_KEY = "replica-admin-key"


@dataclass
class Replica:
    index: int
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _config(path: Path, api_base: str, redis_url: str) -> Path:
    path.write_text(
        f"""
[[model_list]]
model_name = "fast"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{api_base}"
litellm_params.api_key = "os.environ/UPSTREAM_KEY"
litellm_params.max_retries = 0

[[clients]]
key = "{CLIENT_KEY}"
tenant = "team-a"

[server]
admin_key = "os.environ/ADMIN_KEY"

[cache.store]
backend = "none"

[cache.redis]
url = "{redis_url}"
lease_ms = 3000
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def fleet(
    tmp_path_factory, redis_server: RedisServer
) -> Iterator[tuple[list[Replica], FakeOpenAIServer]]:
    import redis

    redis.Redis.from_url(redis_server.url).flushall()
    config = tmp_path_factory.mktemp("replicas") / "proxy.toml"
    with FakeOpenAIServer() as upstream:
        _config(config, upstream.api_base, redis_server.url)
        replicas = []
        for i in range(REPLICAS):
            env = {
                **os.environ,
                "UPSTREAM_KEY": f"sk-replica-{i}",  # tells the upstream which replica called
                "ADMIN_KEY": ADMIN_KEY,
                "HF_HUB_OFFLINE": "1",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            }
            port = free_port()
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "semcache",
                    "serve",
                    "--config",
                    str(config),
                    "--port",
                    str(port),
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            replicas.append(Replica(i, port, process))
        try:
            _wait_healthy(replicas)
            yield replicas, upstream
        finally:
            for replica in replicas:
                if replica.process.poll() is None:
                    replica.process.send_signal(signal.SIGTERM)
            for replica in replicas:
                try:
                    replica.process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    replica.process.kill()
                    replica.process.wait()


def _wait_healthy(replicas: list[Replica], timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    for replica in replicas:
        while True:
            if replica.process.poll() is not None:
                raise RuntimeError(f"replica {replica.index} exited at startup")
            try:
                if httpx.get(f"{replica.url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica {replica.index} did not start")
            time.sleep(0.1)


def _diagnose(replicas: list[Replica]) -> str:
    """Each live replica's cache errors and counters, for a failure message."""
    lines = []
    for replica in replicas:
        if replica.process.poll() is None:
            stats = httpx.get(
                f"{replica.url}/admin/stats", headers={"authorization": f"Bearer {ADMIN_KEY}"}
            ).json()
            lines.append(f"replica {replica.index}: {stats['errors']} {stats['counts']}")
    return "\n".join(lines)


def _body(question: str) -> dict:
    return {"model": "fast", "messages": [{"role": "user", "content": question}]}


async def _ask_all(replicas: list[Replica], question: str, n: int) -> list[tuple[str, str]]:
    """``n`` concurrent requests, request i to replica i mod N; a request whose replica is
    gone is retried on the next live one. Returns (tier header, answer) per request.
    aiohttp rather than httpx: a third of the client CPU, and this box has two cores."""
    import aiohttp

    headers = {"authorization": f"Bearer {CLIENT_KEY}"}
    connector = aiohttp.TCPConnector(limit=n)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(
        connector=connector, timeout=timeout, headers=headers
    ) as session:

        async def one(i: int) -> tuple[str, str]:
            for attempt in range(len(replicas)):
                replica = replicas[(i + attempt) % len(replicas)]
                url = f"{replica.url}/v1/chat/completions"
                try:
                    async with session.post(url, json=_body(question)) as r:
                        r.raise_for_status()
                        body = await r.json()
                        tier = r.headers["x-semcache-tier"]
                except aiohttp.ClientConnectionError:
                    continue  # that replica died: the load balancer tries the next
                return tier, body["choices"][0]["message"]["content"]
            raise AssertionError("no replica answered")

        return await asyncio.gather(*(one(i) for i in range(n)))


@pytest.mark.timeout(600)  # the fixture starts 4 processes that import LiteLLM
def test_a_thousand_requests_over_four_replicas_make_one_upstream_call(fleet):
    replicas, upstream = fleet
    upstream.reset()
    upstream.delay_s = 1.5
    results = asyncio.run(_ask_all(replicas, "What is the tallest mountain?", 1000))
    assert upstream.chat_calls == 1, _diagnose(replicas)
    assert {answer for _, answer in results} == {
        "[gpt-4o-mini] answer to: What is the tallest mountain?"
    }
    tiers = Counter(tier for tier, _ in results)
    assert tiers["miss"] == 1 and set(tiers) <= {"miss", "coalesced", "exact"}, tiers


@pytest.mark.timeout(300)
def test_when_the_leading_replica_dies_a_follower_takes_over(fleet, raw):
    replicas, upstream = fleet
    upstream.reset()
    upstream.delay_s = 2.0
    question = "Which river is the longest?"

    async def scenario() -> list[tuple[str, str]]:
        asking = asyncio.ensure_future(_ask_all(replicas, question, 200))
        while upstream.chat_calls == 0:
            await asyncio.sleep(0.01)
        leader_key = upstream.headers[0]["authorization"].removeprefix("Bearer ")
        leader = replicas[int(leader_key.rsplit("-", 1)[1])]
        leader.process.kill()  # mid-flight: its upstream call is still running
        leader.process.wait()
        return await asyncio.wait_for(asking, 30)

    results = asyncio.run(scenario())
    answer = f"[gpt-4o-mini] answer to: {question}"
    assert [a for _, a in results] == [answer] * 200  # every caller answered, in full
    assert upstream.chat_calls == 2  # the dead leader's call and the one taking over
    keys = raw.keys("semcache:e:*")
    stored = [json.loads(json.loads(raw.hget(k, "v"))["response"]) for k in keys]
    questions = {s["response"]["choices"][0]["message"]["content"] for s in stored}
    assert answer in questions
    assert all(s["response"]["choices"][0]["finish_reason"] == "stop" for s in stored)
