"""One exception tree for everything semcache raises.

Callers can catch ``SemcacheError`` for all of it, or the builtin they already expect:
request validation errors are also ``ValueError``/``TypeError`` so code written against
LiteLLM's own validation keeps working.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from semcache.config.check import SettingProblem


class SemcacheError(Exception):
    """Root of every error semcache raises itself (never of upstream LLM errors)."""


class ConfigError(SemcacheError, ValueError):
    """A setting or constructor argument is invalid."""


class SettingsError(ConfigError):
    """Settings are unknown or invalid; ``problems`` holds one entry per bad setting.

    Each problem names the setting as the user spelled it (an argument's dotted path, an
    environment variable or a ``.env`` key), the value given and what was expected; ``str()``
    of the error is one line per problem.
    """

    def __init__(self, problems: Sequence[SettingProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(problem.line() for problem in self.problems))

    def __reduce__(self) -> tuple[type[SettingsError], tuple[tuple[SettingProblem, ...]]]:
        return type(self), (self.problems,)


class UnknownSettingWarning(UserWarning):
    """A ``SEMCACHE_*`` environment variable or ``.env`` key names no setting.

    A warning rather than an error because other tools may share the prefix; under
    ``CacheSettings(strict=True)`` (``SEMCACHE_STRICT=1``) it is a :class:`SettingsError`.
    """


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


class UnknownServe(InvalidRequest, LookupError):
    """Feedback named an answer this cache did not serve to the caller's tenant recently
    (an unknown id or key, one served to another tenant, or one too old to remember)."""


class StoreError(SemcacheError):
    """A vector store operation failed; the facade degrades it to a miss."""


class StoreUnreachable(StoreError, ConnectionError):
    """The store's server could not be reached: connection refused or lost, no answer in
    time, or no master serving the key's cluster slot. Health grades it *degraded*, never
    *down*: every replica shares the outage and each still answers upstream, so taking them
    out of rotation would turn a cache outage into a service outage."""


class StoreBackpressure(StoreError, TimeoutError):
    """``store()`` waited its timeout for room among pending store writes and gave up; the
    answer was not accepted (nothing is dropped in silence: raise, or retry later)."""


class WriteRefused(StoreError):
    """A write the caller asked for (``store()``, an item of ``store_many``) was refused by a
    fence: a purge or withdrawal since it began, or a purge history that was lost. ``reason``
    names which (``stats().write_refused`` counts them); the answer is neither in memory nor
    in the store (the shared Redis exact tier decides by its own fences). Storing it again
    keeps it."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


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
            f"{package!r} is not installed; install it with: pip install 'semcache-llm[{extra}]'"
        )


class ScanLimitExceeded(SemcacheError):
    """A private-data detector stopped before the end of a text: it would have cost more than
    its work budget. What was not scanned may hold private data, so the gate treats the text
    as private."""


class ScanTimedOut(ScanLimitExceeded):
    """A private-data scan passed the deadline set for it (see ``privacy.deadline``)."""


class SharedFlightFailed(SemcacheError):
    """A streamed answer this caller was reading from another replica's flight failed or was
    lost midway (the leader's upstream call failed, or the leader died). The chunks already
    received cannot be taken back, so the stream ends with this error; nothing was stored."""
