"""The OpenAI-compatible caching proxy (``semcache serve``).

``create_app(config, cache=None)`` builds the FastAPI app; ``load_config(path)`` reads a
TOML/YAML config file into a :class:`ProxyConfig`; ``serve_main(argv)`` runs it with uvicorn.
"""

from __future__ import annotations

from semcache.server.app import create_app
from semcache.server.cli import serve_main
from semcache.server.config import ProxyConfig, load_config, parse_config

__all__ = ["ProxyConfig", "create_app", "load_config", "parse_config", "serve_main"]
