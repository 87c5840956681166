"""Helpers of the proxy tests: the app on loopback (uvicorn in a thread), a memory store."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import openai
import uvicorn
from fastapi import FastAPI

from semcache.server.config import ProxyConfig, parse_config
from semcache.stores.base import Entry, Match

UPSTREAM_KEY = "sk-upstream-7f3a9c2e-do-not-leak"
ADMIN_KEY = "admin-key-1"
CLIENT_KEYS = {"team-a": "key-a", "team-b": "key-b"}
ENVIRON = {"UPSTREAM_KEY": UPSTREAM_KEY, "ADMIN_KEY": ADMIN_KEY}


def proxy_config(api_base: str, **cache: Any) -> ProxyConfig:
    """Two tenants, one public model 'fast' on the fake upstream, no retries."""
    return parse_config(
        {
            "model_list": [
                {
                    "model_name": "fast",
                    "litellm_params": {
                        "model": "openai/gpt-4o-mini",
                        "api_base": api_base,
                        "api_key": "os.environ/UPSTREAM_KEY",
                        "max_retries": 0,
                    },
                }
            ],
            "clients": [{"key": key, "tenant": tenant} for tenant, key in CLIENT_KEYS.items()],
            "server": {"admin_key": "os.environ/ADMIN_KEY", "graceful_shutdown_s": 5},
            "cache": {"store": {"backend": "none"}, **cache},
        }
    )


def wait_until(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


class LiveServer:
    """A uvicorn server for ``app`` on 127.0.0.1 with an OS-chosen port."""

    def __init__(self, app: FastAPI, *, graceful_shutdown_s: int = 5) -> None:
        self.app = app
        self.server = uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=0,
                log_config=None,
                access_log=False,
                lifespan="on",
                timeout_graceful_shutdown=graceful_shutdown_s,
            )
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    @property
    def port(self) -> int:
        return self.server.servers[0].sockets[0].getsockname()[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


@dataclass
class Proxy:
    """A running proxy, its cache and a way to make OpenAI clients for it."""

    server: LiveServer
    cache: Any
    clients: list[openai.OpenAI] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def client(self, key: str = CLIENT_KEYS["team-a"]) -> openai.OpenAI:
        client = openai.OpenAI(base_url=f"{self.base_url}/v1", api_key=key, max_retries=0)
        self.clients.append(client)
        return client


class MemoryStore:
    """A brute-force in-memory VectorStore that keeps every entry it was given.

    It lets the proxy tests run the semantic tier with the real MiniLM embedder and inspect
    exactly what was stored (for the provider-key leak check).
    """

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.upserted: list[Entry] = []
        self._lock = threading.Lock()

    def setup(self, embedder: str, dim: int) -> None:
        return None

    def upsert(self, entries: Sequence[Entry]) -> None:
        with self._lock:
            for entry in entries:
                self.entries[entry.key] = entry
                self.upserted.append(entry)

    def retrieve(self, key: str, *, tenant: str, namespace: str, now: float) -> Entry | None:
        entry = self.entries.get(key)
        if entry is None or entry.tenant != tenant or entry.namespace != namespace:
            return None
        return entry if entry.expires_at > now else None

    def search(
        self,
        vector: np.ndarray,
        *,
        tenant: str,
        namespace: str,
        scope: str,
        now: float,
        threshold: float,
        limit: int = 1,
    ) -> list[Match]:
        with self._lock:
            live = [
                e
                for e in self.entries.values()
                if (e.tenant, e.namespace, e.scope) == (tenant, namespace, scope)
                and e.expires_at > now
                and e.vector is not None
            ]
        matches = [Match(e, float(np.dot(vector, e.vector))) for e in live]
        matches = [m for m in matches if m.similarity >= threshold]
        return sorted(matches, key=lambda m: m.similarity, reverse=True)[:limit]

    def delete(self, keys: Sequence[str]) -> None:
        with self._lock:
            for key in keys:
                self.entries.pop(key, None)

    def purge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        with self._lock:
            doomed = [
                k
                for k, e in self.entries.items()
                if (tenant is None or e.tenant == tenant)
                and (namespace is None or e.namespace == namespace)
                and (model is None or e.model == model)
            ]
            for key in doomed:
                del self.entries[key]
        return len(doomed)

    def purge_expired(self, now: float) -> int:
        with self._lock:
            doomed = [k for k, e in self.entries.items() if e.expires_at <= now]
            for key in doomed:
                del self.entries[key]
        return len(doomed)

    def count(self) -> int:
        return len(self.entries)

    def recent(self, *, tenant: str | None = None, limit: int = 50) -> list[Entry]:
        with self._lock:
            entries = [e for e in self.entries.values() if tenant is None or e.tenant == tenant]
        return sorted(entries, key=lambda e: e.created_at, reverse=True)[:limit]

    def close(self) -> None:
        return None
