"""``semcache serve``: run the caching proxy with uvicorn."""

from __future__ import annotations

import argparse
import gc
import sys

from semcache.cli import OneLineParser, report_config_error, standalone
from semcache.errors import ConfigError


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="semcache serve")
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``semcache serve``'s options."""
    parser.description = "Run the OpenAI-compatible caching proxy."
    parser.add_argument(
        "--host", default="127.0.0.1", help="Interface to bind (default: %(default)s)."
    )
    parser.add_argument("--port", type=int, default=8080, help="TCP port (default: %(default)s).")
    parser.add_argument("--config", required=True, help="Proxy config file (.toml, .yaml or .yml).")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="Processes sharing the port, each with its own cache; more than 1 needs "
        'store.backend = "redis" and redis.url (default: %(default)s).',
    )


def serve_main(argv: list[str]) -> int:
    """Entry point of ``semcache serve``; returns the process exit status.

    SIGINT/SIGTERM stop accepting connections; in-flight requests get
    ``server.graceful_shutdown_s`` seconds to finish, then the cache is closed. With
    ``--workers N`` every worker does so (see :mod:`semcache.server.workers`).
    """
    return standalone(_parser(), run, argv)


def run(args: argparse.Namespace) -> int:
    """Serve until stopped; the exit status (see :func:`serve_main`)."""
    from semcache.server.access_log import configure_json_logging
    from semcache.server.config import load_config
    from semcache.server.workers import check_workers, run_workers

    try:
        config = load_config(args.config)
        check_workers(config, args.workers)
        # the app imports LiteLLM (seconds): a bad config is reported before that
        from semcache.server.app import check_app_config, create_app

        if args.workers > 1:  # each worker builds its own app and cache; this one only checks
            check_app_config(config)
        else:
            app = create_app(config, settings_source=lambda: load_config(args.config).cache)
    except ConfigError as exc:  # also bad SEMCACHE_* values: the config layers over them
        report_config_error("semcache serve", exc, sys.stderr)
        return 2

    import litellm

    try:
        import uvicorn
    except ModuleNotFoundError:
        sys.stderr.write(
            'semcache serve: the proxy needs uvicorn: pip install "semcache-llm[proxy]"\n'
        )
        return 2

    if args.workers > 1:
        return run_workers(
            config, args.config, host=args.host, port=args.port, workers=args.workers
        )
    litellm.suppress_debug_info = True  # its "Give Feedback" banner is not a log line
    configure_json_logging()
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=args.host,
            port=args.port,
            log_config=None,
            access_log=False,  # the app writes its own JSON request line
            timeout_graceful_shutdown=config.server.graceful_shutdown_s,
            timeout_keep_alive=config.server.keep_alive_s,
        )
    )
    if config.server.gc_freeze:
        freeze_startup_heap()
    server.run()
    return 0


def freeze_startup_heap() -> None:
    """Collect once, then exempt every surviving object from later collections.

    What is alive now (LiteLLM, FastAPI, the app) lives as long as the process, and a full
    collection walking it stalls every request in flight; ``gc.freeze()`` is the remedy the
    ``gc`` docs give for long-lived start-up state.
    """
    gc.collect()
    gc.freeze()
