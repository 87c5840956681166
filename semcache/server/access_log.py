"""Structured logging: one JSON line per request, and a formatter that writes JSON lines.

The request line carries who (tenant), what happened (tier, similarity, status, upstream
status) and how long it took, never the message text unless ``server.log_content`` asks for
it. Library code only emits records; :func:`configure_json_logging` (called by the CLI)
decides where they go.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from typing import Any, TextIO

ACCESS_LOGGER = "semcache.server.access"

access_logger = logging.getLogger(ACCESS_LOGGER)


def log_request(fields: Mapping[str, Any]) -> None:
    """Emit the request's line; ``fields`` end up as top-level JSON keys."""
    access_logger.info("request", extra={"fields": dict(fields)})


class JsonFormatter(logging.Formatter):
    """Each record as one JSON object: ts, level, logger, msg, plus a record's ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, Mapping):
            line.update(fields)
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str, separators=(",", ":"))


def configure_json_logging(level: int = logging.INFO, stream: TextIO | None = None) -> None:
    """Send semcache's and uvicorn's records to ``stream`` (stderr) as JSON lines."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name in ("semcache", "uvicorn", "uvicorn.error"):
        target = logging.getLogger(name)
        target.handlers[:] = [handler]
        target.setLevel(level)
        target.propagate = False
