"""Errors as clients of the OpenAI API expect them, and the one place exceptions are mapped.

Every error the proxy sends has OpenAI's body ``{"error": {"message", "type", "param",
"code"}}`` so official clients raise their usual exception classes. Upstream errors keep
their HTTP status; their text is redacted of provider keys before it leaves the process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import openai

from semcache.errors import InvalidRequest, SemcacheError

logger = logging.getLogger("semcache.server")

_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


class ApiError(Exception):
    """An HTTP error in OpenAI's format. ``kind`` labels it in metrics and logs."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        kind: str,
        type: str | None = None,
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.type = type or _TYPE_BY_STATUS.get(status, "api_error")
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


def unauthorized() -> ApiError:
    return ApiError(
        401,
        "Incorrect or missing API key. Send 'Authorization: Bearer <key>' with a key "
        "issued for this proxy.",
        kind="auth",
        type="invalid_request_error",
        code="invalid_api_key",
    )


def admin_unauthorized(enabled: bool) -> ApiError:
    if not enabled:
        return ApiError(
            403, "The admin API is disabled: set server.admin_key in the config.", kind="auth"
        )
    return ApiError(401, "Admin key required.", kind="auth", code="invalid_api_key")


def invalid_request(field: str, problem: str) -> ApiError:
    return ApiError(
        400,
        f"Invalid value for {field!r}: {problem}",
        kind="invalid_request",
        param=field,
        code="invalid_value",
    )


def model_not_found(name: str) -> ApiError:
    return ApiError(
        404,
        f"The model {name!r} does not exist or you do not have access to it.",
        kind="invalid_request",
        param="model",
        code="model_not_found",
    )


def _upstream_status(exc: openai.OpenAIError) -> int:
    if isinstance(exc, openai.APITimeoutError):
        return 504
    if isinstance(exc, openai.APIConnectionError):
        return 502
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) and 400 <= status <= 599 else 502


def to_api_error(exc: BaseException, redact: Callable[[str], str]) -> ApiError:
    """Map any exception raised while serving a request to the error the client sees: 400 naming
    the field, 503 for cache errors and for a request the server cancelled (uvicorn cancels
    those still running when its graceful shutdown ends: the client gets an answer it may
    retry, not a reset connection), an upstream error's status and redacted message, else an
    internal error whose details stay in the server log.
    """
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, asyncio.CancelledError):
        return ApiError(
            503,
            "The server shut down before this request was answered; retry it.",
            kind="shutdown",
        )
    if isinstance(exc, InvalidRequest):
        return invalid_request(exc.field, exc.problem)
    if isinstance(exc, SemcacheError):  # only operations that do not fail open get here
        return ApiError(503, f"Cache unavailable: {redact(str(exc))}", kind="cache")
    if isinstance(exc, openai.OpenAIError):
        status = _upstream_status(exc)
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        return ApiError(status, f"Upstream error: {redact(str(message))}", kind="upstream")
    logger.error("internal error serving a request: %s", redact(repr(exc)))
    return ApiError(500, "Internal error in the semcache proxy.", kind="internal")
