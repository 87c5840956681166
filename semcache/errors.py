"""One exception tree for everything semcache raises.

Callers can catch ``SemcacheError`` for all of it, or the builtin they already expect:
request validation errors are also ``ValueError``/``TypeError`` so code written against
LiteLLM's own validation keeps working.
"""

from __future__ import annotations


class SemcacheError(Exception):
    """Root of every error semcache raises itself (never of upstream LLM errors)."""


class ConfigError(SemcacheError, ValueError):
    """A setting or constructor argument is invalid."""


class InvalidRequest(SemcacheError, ValueError):
    """A completion request is malformed; nothing was stored and no upstream call was made.

    ``field`` names the offending request field (dotted path, e.g. ``messages[2].role``).
    """

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"invalid request field {field!r}: {problem}")


class InvalidRequestType(InvalidRequest, TypeError):
    """A request field has the wrong type (also a ``TypeError``)."""


class StoreError(SemcacheError):
    """A vector store operation failed; the facade degrades it to a miss."""


class StoreLockedError(StoreError):
    """The embedded store directory is held by another process."""


class EmbedderMismatchError(StoreError, ConfigError):
    """A collection was created with another embedder (name or dimension)."""


class EmbedderError(SemcacheError):
    """An embedder failed to load or to embed; the facade degrades it to a miss."""


class ScorerError(SemcacheError):
    """A hit scorer (cross-encoder, LLM judge) failed to load or to score; the semantic
    stage degrades it to a miss."""


class MissingDependency(SemcacheError, ImportError):
    """An optional dependency is not installed; the message names the pip extra."""

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{package!r} is not installed; install it with: pip install 'semcache[{extra}]'"
        )
