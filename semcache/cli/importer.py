"""``semcache import FILE.jsonl``: bulk-load answers into the deployment's store.

One JSON object a line, as ``SemanticCache.store_many`` takes. Every line is validated before
anything is stored (a bad line: an error naming it, exit 2). Exit 0 when every storable line
was written, 1 when some failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from semcache.cli import OneLineParser, UsageError

PROG = "semcache import"
#: Failure reasons printed in the summary (the rest are counted).
SHOWN_FAILURES = 5


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG)
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``semcache import``'s options."""
    parser.description = "Store question/answer pairs from a JSONL file."
    parser.add_argument("file", type=Path, help="JSONL file, one object per line.")
    parser.add_argument("--model", help="Model of lines that name none (default: semcache-direct).")
    parser.add_argument("--tenant", help="Tenant of lines that name none (default: the default).")
    parser.add_argument(
        "--chunk", type=int, default=256, help="Items written concurrently (default 256)."
    )


def read_items(path: Path) -> list[dict[str, Any]]:
    """The file's objects; a ValueError naming the line when one is not a JSON object."""
    items = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(item, dict):
                raise ValueError(f"{path}:{number}: expected a JSON object")
            items.append(item)
    return items


def run(args: argparse.Namespace) -> int:
    """Import the file; 0 every item landed, 1 some failed or the store refused."""
    if args.chunk < 1:
        raise UsageError("--chunk must be >= 1")
    try:
        items = read_items(args.file)
    except OSError as exc:
        raise UsageError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    from semcache.cache import SemanticCache
    from semcache.errors import InvalidRequest, StoreError

    def progress(done: int, total: int) -> None:
        sys.stderr.write(f"{PROG}: {done}/{total}\n")

    try:
        with SemanticCache() as cache:
            report = cache.store_many(
                items,
                model=args.model,
                tenant=args.tenant,
                chunk=args.chunk,
                on_progress=progress,
            )
    except InvalidRequest as exc:
        raise UsageError(f"{exc.field}: {exc.problem}") from None
    except StoreError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    print(
        f"{PROG}: {report.written} written, {report.skipped} skipped by the policy, "
        f"{len(report.failed)} failed, of {report.total}"
    )
    for failure in report.failed[:SHOWN_FAILURES]:
        print(f"{PROG}: item {failure.index}: {failure.reason}", file=sys.stderr)
    return 0 if report.ok else 1
