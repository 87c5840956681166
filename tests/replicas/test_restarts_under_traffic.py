"""Restarts lose nothing and bring nothing back, on real ``semcache serve`` processes sharing one
Redis 8 (the vector-set store and the exact tier): a rolling restart of three processes while a
client keeps asking, and a ``--workers 2`` child killed with SIGKILL and respawned. Every entry
present before (its question and its paraphrase served from the cache) is present after, and no
purged or "wrong" answer is served at any time after its withdrawal returned."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from semcache.testing import FakeOpenAIServer
from semcache.testing._redis_server import free_port

ADMIN = "restart-admin"
KEEP = "key-keep"  # tenant team-k: the entries that must survive
PURGED = "key-purge"  # tenant team-p: purged before the restarts
#: (question, paraphrase): the kept entries; the first two get a "wrong" verdict instead.
PAIRS = [
    ("How do I reset my password?", "How can I reset my password?"),
    ("How do I change my email address?", "How can I change my email address?"),
    ("How do I delete my account?", "How can I delete my account?"),
    ("How do I cancel my subscription?", "How can I cancel my subscription?"),
    ("How do I track my order?", "How can I track my order?"),
    ("How do I enable two-factor authentication?", "How can I enable two-factor authentication?"),
    ("How do I update my billing information?", "How can I update my billing information?"),
    ("How do I contact customer support?", "How can I contact customer support?"),
    ("How do I export my data?", "How can I export my data?"),
    ("How do I upgrade my plan?", "How can I upgrade my plan?"),
    ("How do I apply a promo code?", "How can I apply a promo code?"),
    ("How do I invite a team member?", "How can I invite a team member?"),
]
WRONG = PAIRS[:2]
KEPT = PAIRS[2:]
PURGE = [
    ("How do I print a shipping label?", "How can I print a shipping label?"),
    ("How do I set a spending limit?", "How can I set a spending limit?"),
    ("How do I block a user?", "How can I block a user?"),
    ("How do I archive old messages?", "How can I archive old messages?"),
]
ENVIRON = {
    "UPSTREAM_KEY": "sk-restarts",
    "SEMCACHE_TEST_ADMIN": ADMIN,
    "HF_HUB_OFFLINE": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
}
CONFIG = """
[[model_list]]
model_name = "fast"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{api_base}"
litellm_params.api_key = "os.environ/UPSTREAM_KEY"
litellm_params.max_retries = 0
[[clients]]
key = "{keep}"
tenant = "team-k"
[[clients]]
key = "{purged}"
tenant = "team-p"
[server]
admin_key = "os.environ/SEMCACHE_TEST_ADMIN"
graceful_shutdown_s = 5
[cache.semantic]
threshold = 0.9
[cache.store]
backend = "redis"
[cache.redis]
url = "{redis_url}"
"""


class Versioned:
    """The fake upstream's answers carry a version, bumped after each withdrawal: a withdrawn
    text can then only come from a cache."""

    def __init__(self, server: FakeOpenAIServer) -> None:
        self.version = 1
        server.responder = self.answer

    def answer(self, body: dict[str, Any]) -> str:
        return f"v{self.version} answer to: {body['messages'][-1]['content']}"


@dataclass
class Serve:
    """One ``semcache serve`` (``workers`` > 1: a supervisor and its workers) on a fixed port."""

    config: Path
    workers: int = 1
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.config.parent / f"serve-{self.port}.log"

    def start(self) -> None:
        command = [sys.executable, "-m", "semcache", "serve", "--port", str(self.port)]
        if self.workers > 1:
            command += ["--workers", str(self.workers)]
        self.process = subprocess.Popen(
            [*command, "--config", str(self.config)],
            env={**os.environ, **ENVIRON},
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("ab"),
        )

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def wait_ready(
        self, count: int | None = None, exclude: frozenset[str] = frozenset()
    ) -> set[str]:
        """Until ``count`` distinct workers (default: all) outside ``exclude`` answer
        ``/readyz`` with 200 (four minutes at most); returns their ids."""
        want = self.workers if count is None else count
        ready: set[str] = set()
        deadline = time.monotonic() + 240
        while len(ready) < want:
            assert self.process is not None and self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, f"not ready within 240 s: {ready}"
            try:  # a fresh connection each time: the kernel picks the worker
                r = httpx.get(f"{self.url}/readyz", headers={"connection": "close"}, timeout=5)
                worker = r.headers.get("x-semcache-worker", "")
                if r.status_code == 200 and worker not in exclude:
                    ready.add(worker)
                    continue
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        return ready


def ask(url: str, key: str, question: str, *, store: bool = True) -> tuple[str, str, str]:
    """(tier, answer text, entry key) of one chat completion; a miss's tier is
    ``miss:<reason>``."""
    headers = {"authorization": f"Bearer {key}", "connection": "close"}
    if not store:
        headers["x-semcache-no-store"] = "true"
    r = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "fast", "messages": [{"role": "user", "content": question}]},
        headers=headers,
        timeout=120,
    )
    r.raise_for_status()
    text = r.json()["choices"][0]["message"]["content"]
    tier = r.headers.get("x-semcache-tier", "miss")
    if tier == "miss":
        tier = f"miss:{r.headers.get('x-semcache-miss-reason')}"
    return tier, text, r.headers.get("x-semcache-key", "")


#: Misses that say the cache could not look in time (a loaded machine), not that the entry
#: is gone: asked again, without storing the upstream's answer meanwhile.
PASSING_MISSES = {"miss:shed", "miss:warming", "miss:failed"}


def from_cache(url: str, question: str) -> str | None:
    """The text the cache serves for ``question`` (``KEEP``'s tenant), None on a miss that
    says no entry answered it."""
    for _ in range(10):
        tier, text, _ = ask(url, KEEP, question, store=False)
        if tier not in PASSING_MISSES:
            return None if tier.startswith("miss") else text
        time.sleep(0.5)
    return None


def stored_keys(url: str, tenant: str) -> set[str]:
    r = httpx.get(
        f"{url}/admin/entries",
        params={"tenant": tenant, "limit": 1000},
        headers={"authorization": f"Bearer {ADMIN}"},
        timeout=60,
    )
    r.raise_for_status()
    return {e["key"] for e in r.json()["data"]}


def wait_stored(url: str, tenant: str, count: int, timeout_s: float = 120.0) -> set[str]:
    """The tenant's stored keys once there are ``count`` (write-behind lands off the path)."""
    deadline = time.monotonic() + timeout_s
    while len(keys := stored_keys(url, tenant)) < count:
        assert time.monotonic() < deadline, f"{len(keys)} of {count} entries stored"
        time.sleep(0.2)
    return keys


class Traffic:
    """A client that keeps asking every question and paraphrase (kept and withdrawn) on the
    live processes, round robin, until stopped; a process that is down is skipped, as a
    load balancer would. Records every withdrawn text served; stores nothing (its misses
    would store the upstream's new version over what the restart must keep)."""

    def __init__(self, urls: list[str], withdrawn: set[str]) -> None:
        self.urls = urls
        self.withdrawn = withdrawn
        self.served_withdrawn: list[tuple[str, str]] = []
        self.tiers: Counter[str] = Counter()
        self.refused = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Traffic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=180)

    def _run(self) -> None:
        asks = [(KEEP, q) for pair in PAIRS for q in pair] + [(PURGED, q) for p in PURGE for q in p]
        i = 0
        while not self._stop.is_set():
            key, question = asks[i % len(asks)]
            url = self.urls[i % len(self.urls)]
            i += 1
            try:
                # not stored: a miss a loaded machine sheds would store the new version
                tier, text, _ = ask(url, key, question, store=False)
            except (httpx.TransportError, httpx.HTTPStatusError):
                self.refused += 1  # that process is restarting (or draining)
                continue
            self.tiers[tier.split(":")[0]] += 1
            if text in self.withdrawn:
                self.served_withdrawn.append((question, text))


def learn_and_withdraw(urls: list[str], upstream: Versioned) -> tuple[set[str], set[str]]:
    """Store every pair's answer via the first process, withdraw some (a purge of team-p, a
    "wrong" verdict on two team-k entries), bump the upstream's version; returns the kept keys
    and the withdrawn texts."""
    first = urls[0]
    for key, pairs in ((KEEP, PAIRS), (PURGED, PURGE)):
        for question, _ in pairs:
            assert ask(first, key, question)[0].startswith("miss")
    keys = wait_stored(first, "team-k", len(PAIRS))
    wait_stored(first, "team-p", len(PURGE))
    withdrawn = {f"v1 answer to: {q}" for q, _ in WRONG + PURGE}
    for question, _ in WRONG:
        # one connection for the hit and its verdict (feedback on another worker is
        # test_feedback_any_worker.py's)
        with httpx.Client(timeout=60) as http:
            r = http.post(
                f"{urls[1 % len(urls)]}/v1/chat/completions",
                json={"model": "fast", "messages": [{"role": "user", "content": question}]},
                headers={"authorization": f"Bearer {KEEP}"},
            )
            r.raise_for_status()
            assert r.headers["x-semcache-tier"] == "exact"
            entry = r.headers["x-semcache-key"]
            r = http.post(
                f"{urls[1 % len(urls)]}/v1/feedback",
                json={"id": entry, "correct": False},
                headers={"authorization": f"Bearer {KEEP}"},
            )
            r.raise_for_status()
        keys.discard(entry)
    r = httpx.post(
        f"{first}/admin/purge",
        json={"tenant": "team-p"},
        headers={"authorization": f"Bearer {ADMIN}"},
        timeout=120,
    )
    r.raise_for_status()
    upstream.version = 2
    return keys, withdrawn


def served_from_cache(urls: list[str]) -> dict[str, set[str]]:
    """Per process: the kept questions and paraphrases it serves from the cache with the
    stored (version 1) answer."""
    out = {}
    for url in urls:
        out[url] = {
            q
            for question, paraphrase in KEPT
            for q in (question, paraphrase)
            if from_cache(url, q) == f"v1 answer to: {question}"
        }
    return out


@pytest.fixture
def written(tmp_path: Path, redis_url: str) -> Iterator[tuple[Path, Versioned]]:
    with FakeOpenAIServer() as server:
        config = tmp_path / "serve.toml"
        config.write_text(
            CONFIG.format(
                api_base=server.api_base,
                keep=KEEP,
                purged=PURGED,
                redis_url=redis_url,
            )
        )
        yield config, Versioned(server)


@pytest.mark.timeout(900)
def test_a_rolling_restart_under_traffic_loses_nothing_and_revives_nothing(written, raw) -> None:
    config, upstream = written
    fleet = [Serve(config) for _ in range(3)]
    urls = [s.url for s in fleet]
    try:
        for serve in fleet:
            serve.start()
        for serve in fleet:
            serve.wait_ready()
        keys, withdrawn = learn_and_withdraw(urls, upstream)
        before = served_from_cache(urls)
        assert all(len(found) >= len(KEPT) for found in before.values()), before
        with Traffic(urls, withdrawn) as traffic:
            for serve in fleet:  # one at a time, the others keep serving
                serve.stop()
                serve.start()
                serve.wait_ready()
        after = served_from_cache(urls)
        assert stored_keys(urls[0], "team-k") >= keys  # no entry wiped from the shared store
        for url in urls:
            assert before[url] <= after[url], (url, before[url] - after[url])
        assert traffic.served_withdrawn == [], traffic.served_withdrawn
        assert sum(traffic.tiers.values()) > 0 and traffic.tiers["miss"] < sum(
            traffic.tiers.values()
        ), traffic.tiers
        for url in urls:  # and after the restarts, nothing withdrawn anywhere
            for question, paraphrase in WRONG + PURGE:
                key = KEEP if (question, paraphrase) in WRONG else PURGED
                for q in (question, paraphrase):
                    assert ask(url, key, q)[1] not in withdrawn, (url, q)
    finally:
        for serve in fleet:
            serve.stop()


@pytest.mark.timeout(900)
def test_a_killed_worker_is_respawned_and_loses_nothing(written, raw) -> None:
    config, upstream = written
    serve = Serve(config, workers=2)
    try:
        serve.start()
        workers = serve.wait_ready()
        keys, withdrawn = learn_and_withdraw([serve.url], upstream)
        before = served_from_cache([serve.url])[serve.url]
        assert len(before) >= len(KEPT), before
        victim = int(next(iter(workers)))
        with Traffic([serve.url], withdrawn) as traffic:
            os.kill(victim, signal.SIGKILL)
            # the supervisor spawns a new worker in its place, which becomes ready
            respawned = serve.wait_ready(count=1, exclude=frozenset(workers))
            assert str(victim) not in respawned
        assert serve.process is not None and serve.process.poll() is None
        assert stored_keys(serve.url, "team-k") >= keys
        after: set[str] = set()
        for _ in range(4):  # fresh connections: both workers answer some
            after |= served_from_cache([serve.url])[serve.url]
        assert before <= after, before - after
        assert traffic.served_withdrawn == [], traffic.served_withdrawn
    finally:
        serve.stop()
