"""Helpers of the proxy tests: the app on loopback (uvicorn in a thread)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai
import uvicorn
from fastapi import FastAPI

from semcache.server.config import ProxyConfig, parse_config

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
