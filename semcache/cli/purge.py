"""``semcache purge``: withdraw stored answers by tenant, namespace and/or model.

Uses the deployment's settings (``SEMCACHE_*``, ``.env``), so it purges the same store and
Redis the replicas use; with Redis, every running replica drops its in-process copies too.
"""

from __future__ import annotations

import argparse
import sys

from semcache.cli import OneLineParser, UsageError


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="semcache purge")
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``semcache purge``'s options."""
    parser.description = "Delete stored answers matching every given filter (all tiers)."
    parser.add_argument("--tenant", help="Only this tenant's answers.")
    parser.add_argument("--namespace", help="Only this namespace's answers.")
    parser.add_argument(
        "--model", help="Only answers of this model (any name LiteLLM resolves, e.g. gpt-4o-mini)."
    )
    parser.add_argument("--all", action="store_true", help="Required to purge without any filter.")


def run(args: argparse.Namespace) -> int:
    """Purge; 0 done, 1 the store refused."""
    filters = {"tenant": args.tenant, "namespace": args.namespace, "model": args.model}
    if all(value is None for value in filters.values()) and not args.all:
        raise UsageError("give --tenant, --namespace or --model, or --all to purge everything")
    for name, value in filters.items():
        if value is not None and not value.strip():
            raise UsageError(f"--{name} must not be empty")
    from semcache.cache import SemanticCache
    from semcache.errors import StoreError

    with SemanticCache() as cache:
        try:
            removed = cache.purge(**filters)
        except StoreError as exc:  # e.g. the embedded store is open in a running process
            print(f"semcache purge: error: nothing purged from the store: {exc}", file=sys.stderr)
            return 1
    print(f"semcache purge: purged {removed} answer(s)")
    return 0
