"""``semcache serve --workers N``: N processes on one listening socket, each with its own cache.

uvicorn's supervisor binds once and spawns N interpreters (``spawn``: LiteLLM's and the
embedder's threads do not survive a fork); each builds its own app from :func:`worker_app`
and drains on SIGTERM. Workers share nothing in memory, so :func:`check_workers` requires a
shared store and the shared Redis tier, for purges and withdrawals to reach every worker.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from semcache.errors import ConfigError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from semcache.server.config import ProxyConfig

#: The config file a spawned worker reads (no ``SEMCACHE_`` prefix: not a cache setting).
CONFIG_VARIABLE = "_SEMCACHE_WORKER_CONFIG"
#: Store backends every worker reaches in common ("none" keeps only the per-worker memory
#: tier, in front of the shared Redis exact tier).
SHARED_BACKENDS = ("redis", "qdrant", "none")


def check_workers(config: ProxyConfig, workers: int) -> None:
    """Raise :class:`ConfigError` (one line, naming the fix) if ``workers`` processes cannot
    share this configuration's cache."""
    if workers < 1:
        raise ConfigError(f"--workers: expected 1 or more, got {workers}")
    if workers == 1:
        return
    backend = config.cache.store.backend
    if backend not in SHARED_BACKENDS or config.cache.redis.url is None:
        raise ConfigError(
            f'--workers {workers} needs a shared store: set store.backend = "redis" and '
            f"redis.url (store.backend is {backend!r}, redis.url is "
            f"{'set' if config.cache.redis.url else 'unset'})"
        )


def worker_app() -> FastAPI:
    """The app of one worker (uvicorn's factory): its own cache, from the supervisor's file."""
    import litellm

    from semcache.server.access_log import configure_json_logging
    from semcache.server.app import create_app
    from semcache.server.cli import freeze_startup_heap
    from semcache.server.config import load_config

    path = os.environ[CONFIG_VARIABLE]
    config = load_config(path)
    app = create_app(config, settings_source=lambda: load_config(path).cache)
    litellm.suppress_debug_info = True
    configure_json_logging()
    if config.server.gc_freeze:
        freeze_startup_heap()
    return app


def run_workers(config: ProxyConfig, path: str, *, host: str, port: int, workers: int) -> int:
    """Serve with ``workers`` processes until SIGTERM/SIGINT has drained all of them; the
    exit status: 130 after SIGINT (the shell's Ctrl-C convention), else 0. The supervisor
    builds no cache and loads no model: it only holds the socket and watches the workers."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from semcache.server.access_log import configure_json_logging

    class Supervisor(Multiprocess):
        interrupted = False

        def handle_int(self) -> None:
            self.interrupted = True
            super().handle_int()

    configure_json_logging()
    os.environ[CONFIG_VARIABLE] = os.path.abspath(path)
    uvicorn_config = uvicorn.Config(
        "semcache.server.workers:worker_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=config.server.graceful_shutdown_s,
        timeout_keep_alive=config.server.keep_alive_s,
    )
    supervisor = Supervisor(uvicorn_config, sockets=[uvicorn_config.bind_socket()])
    supervisor.run()
    return 130 if supervisor.interrupted else 0
