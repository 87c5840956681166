"""The OpenAI-compatible caching proxy (``semcache serve``).

``create_app(config, cache=None)`` builds the FastAPI app; ``load_config(path)`` reads a
TOML/YAML config file into a :class:`ProxyConfig`; ``serve_main(argv)`` runs it with uvicorn.
The names load on first use, so ``semcache serve --help`` never waits for LiteLLM.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from semcache.server.app import create_app
    from semcache.server.cli import serve_main
    from semcache.server.config import ProxyConfig, load_config, parse_config

__all__ = ["ProxyConfig", "create_app", "load_config", "parse_config", "serve_main"]

_HOME = {
    "ProxyConfig": "semcache.server.config",
    "create_app": "semcache.server.app",
    "load_config": "semcache.server.config",
    "parse_config": "semcache.server.config",
    "serve_main": "semcache.server.cli",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # once: later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
