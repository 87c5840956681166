"""``semcache misses``: a running proxy's frequent near misses, and a file to label.

Prints the clusters from ``GET /admin/misses`` and writes ``--out``: one JSONL row per
(query, stored question) with ``label`` null, the format ``semcache calibrate --labels`` reads.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from semcache.cli import OneLineParser, standalone
from semcache.errors import ConfigError


def _parser() -> OneLineParser:
    parser = OneLineParser(prog="semcache misses")
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``semcache misses``' options."""
    parser.description = "Group a running proxy's recent near misses and export them for labeling."
    parser.add_argument("--url", required=True, help="the proxy, e.g. http://127.0.0.1:8080")
    parser.add_argument(
        "--admin-key-env", required=True, help="variable holding the proxy's admin key"
    )
    parser.add_argument("--tenant", help="only this tenant's misses")
    parser.add_argument("--min-count", type=int, default=1, help="smallest cluster shown")
    parser.add_argument("--top", type=int, default=20, help="clusters printed (default 20)")
    parser.add_argument("--out", type=Path, help="JSONL file of pairs to label")


def fetch(url: str, admin_key: str, tenant: str | None, min_count: int) -> dict[str, Any]:
    import httpx

    params: dict[str, str | int] = {"min_count": min_count}
    if tenant is not None:
        params["tenant"] = tenant
    try:
        response = httpx.get(
            url.rstrip("/") + "/admin/misses",
            params=params,
            headers={"authorization": f"Bearer {admin_key}"},
            timeout=30,
        )
    except httpx.HTTPError as exc:
        raise ConfigError(f"cannot reach {url}: {exc}") from exc
    if response.status_code != 200:
        raise ConfigError(f"{url} refused: HTTP {response.status_code} {response.text}")
    body: dict[str, Any] = response.json()
    return body


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def misses_main(argv: list[str]) -> int:
    """``semcache misses`` on its own parser."""
    return standalone(_parser(), run, argv)


def run(args: argparse.Namespace) -> int:
    """Fetch, print and export the near misses; the exit status."""
    admin_key = os.environ.get(args.admin_key_env)
    if not admin_key:
        raise ConfigError(f"set {args.admin_key_env} to the proxy's admin key")
    body = fetch(args.url, admin_key, args.tenant, args.min_count)
    clusters = body["clusters"]
    out = sys.stdout
    out.write(f"{len(clusters)} clusters of near misses ({len(body['rows'])} distinct pairs)\n")
    for cluster in clusters[: args.top]:
        out.write(
            f"{cluster['count']:>5}  near {cluster['question']!r} "
            f"(ns {cluster['namespace']}, max cosine {cluster['max_similarity']:.3f})\n"
        )
        for query, similarity in cluster["examples"]:
            out.write(f"         {similarity:.3f}  {query!r}\n")
    if args.out is not None:
        write_rows(args.out, body["rows"])
        out.write(f"wrote {len(body['rows'])} rows to {args.out} (fill in each 'label')\n")
    return 0
