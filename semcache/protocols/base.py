"""What every protocol adapter provides, and the checks and usage rules they share.

An adapter has three jobs, one method each: ``translate`` (protocol request → the chat
request the path answers, raising :class:`InvalidRequest` naming the field), ``reply`` (the
chat answer → the protocol's response body) and ``events`` (chat chunks → the protocol's
stream events). Two helpers go with them: ``answer`` reads a provider's response body back as
the chat answer (answers that arrive in the protocol, as in LiteLLM's cache slot), and
``stateful`` picks out a request the provider must answer past every tier (it asks for state
the provider holds). Arguments that are not the protocol's body fields are LiteLLM call
options (``api_base``, ``api_key``, ``tenant``, ``cache``, ...) and pass through unchanged, as
they do for ``completion``.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from typing import Protocol as TypingProtocol

import orjson

from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.stats import CacheInfo

if TYPE_CHECKING:
    from litellm import ModelResponse
    from litellm.types.utils import ModelResponseStream

    from semcache.protocols.stateful import Forward

#: The ``usage`` field naming who served a replayed answer (``{"tier": ..., "billed": false}``).
SERVED_BY = "semcache"
#: The largest integer a body field may hold: I-JSON's (RFC 7493) exact range, so what the
#: client wrote is what is read (a larger JSON number may arrive as an inexact float).
MAX_SAFE_INTEGER = 2**53 - 1


@dataclass(frozen=True, slots=True)
class Translated:
    """One protocol request: its ``body`` as asked (echoed back in the reply), the ``chat``
    keyword arguments ``completion`` takes for it (call options included), and ``names``:
    tool names LiteLLM shortened on the way, mapped back to the client's."""

    body: dict[str, Any]
    chat: dict[str, Any]
    names: dict[str, str] = field(default_factory=dict)

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


class Protocol(TypingProtocol):
    """A wire protocol answered by the chat request path."""

    name: str
    fields: frozenset[str]
    """The protocol's body fields besides ``model`` and ``stream``."""

    def stateful(self, kwargs: Mapping[str, Any]) -> Forward | None:
        """The request as the provider gets it past every tier when it asks the provider to
        hold state; None when the cache answers it."""
        ...

    def translate(self, kwargs: Mapping[str, Any]) -> Translated: ...

    def reply(self, response: ModelResponse, asked: Translated, info: CacheInfo) -> dict[str, Any]:
        """The protocol's response body for a chat answer (hit usage rules applied)."""
        ...

    def answer(self, body: Mapping[str, Any], asked: Translated) -> ModelResponse:
        """The chat answer a provider's response body in this protocol stands for (``reply``'s
        inverse); ``ValueError`` for a body that holds none."""
        ...

    def events(
        self, chunks: AsyncIterator[ModelResponseStream | CacheInfo], asked: Translated
    ) -> AsyncIterator[list[dict[str, Any]] | CacheInfo]:
        """The protocol's stream events in batches: the events each chat chunk makes (and the
        closing ones) as one non-empty list; a ``CacheInfo`` passes through where it arrives."""
        ...


def split(
    kwargs: Mapping[str, Any], fields: frozenset[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(body, options)``: the protocol's body fields (with ``model`` and ``stream``), and the
    call options for LiteLLM."""
    body: dict[str, Any] = {}
    options: dict[str, Any] = {}
    for name, value in kwargs.items():
        if name in fields or name in ("model", "stream"):
            body[name] = value
        else:
            options[name] = value
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise InvalidRequestType("model", f"expected a model name, got {model!r}")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise InvalidRequestType("stream", f"expected true or false, got {stream!r}")
    return body, options


def check_type(body: Mapping[str, Any], name: str, kinds: tuple[type, ...], what: str) -> None:
    """Raise naming ``name`` when it is present, not None and not of ``kinds`` (no bools for
    numbers)."""
    value = body.get(name)
    if value is None:
        return
    wrong_bool = isinstance(value, bool) and bool not in kinds
    if wrong_bool or not isinstance(value, kinds):
        raise InvalidRequestType(name, f"expected {what}, got {type(value).__name__}")


def check_integer(
    body: Mapping[str, Any], name: str, low: int, high: int = MAX_SAFE_INTEGER
) -> None:
    """Raise naming ``name`` when it is present, not None and not an integer from ``low`` to
    ``high``."""
    check_type(body, name, (int,), "an integer")
    value = body.get(name)
    if value is not None and not low <= value <= high:
        raise InvalidRequest(name, f"expected an integer from {low} to {high}, got {value!r}")


def check_range(body: Mapping[str, Any], name: str, low: float, high: float) -> None:
    check_type(body, name, (int, float), "a number")
    value = body.get(name)
    if value is not None and not low <= value <= high:
        raise InvalidRequest(name, f"expected a number from {low:g} to {high:g}, got {value!r}")


def one_of(value: Any, allowed: frozenset[str]) -> bool:
    """``value in allowed`` for any JSON value (a list or an object is not hashable)."""
    return isinstance(value, str) and value in allowed


def check_objects(body: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    """``body[name]`` as a list of objects (empty when absent), or raise naming the item."""
    value = body.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidRequestType(name, f"expected a list, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise InvalidRequestType(
                f"{name}[{i}]", f"expected an object, got {type(item).__name__}"
            )
    return value


def provider_of(model: str, options: Mapping[str, Any]) -> str | None:
    """The LiteLLM provider a model is sent to (the translators adapt to it), or None."""
    from semcache.core.fingerprint import resolve_model

    given = options.get("custom_llm_provider")
    resolved = resolve_model(model, given if isinstance(given, str) else None)
    provider = resolved.split("/", 1)[0]
    return None if provider == "unresolved" else provider


def served_by(info: CacheInfo) -> dict[str, Any] | None:
    """The ``usage.semcache`` object of a replayed answer: served by semcache, not billed by
    the provider; None for an answer of this request's own upstream call."""
    if not info.hit:
        return None
    return {"tier": str(info.tier), "billed": False}


class JsonMemo:
    """A bounded memo of a pure function over JSON data (LiteLLM's translators, which cost a
    few hundred microseconds a call: more than an exact hit's whole lookup).

    Results are kept as JSON bytes and every caller gets a fresh copy, so no caller can
    change what another receives; a key or result that is not JSON is computed every time.
    """

    def __init__(self, size: int = 2048) -> None:
        self._size = size
        self._entries: dict[bytes, bytes] = {}
        self._lock = threading.Lock()

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        try:
            raw_key = orjson.dumps(key, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            return compute()
        kept = self._entries.get(raw_key)
        if kept is not None:
            return orjson.loads(kept)
        value = compute()
        try:
            encoded = orjson.dumps(value)
        except TypeError:
            return value
        with self._lock:
            if len(self._entries) >= self._size:
                self._entries.pop(next(iter(self._entries)))
            self._entries[raw_key] = encoded
        return orjson.loads(encoded)


def answer_identity(response: Any, *echoed: Any) -> list[Any]:
    """What a reply is a function of: the stored answer (:func:`response_answer`) and the
    request fields the reply echoes."""
    return [response_answer(response), *echoed]


def response_answer(response: Any) -> list[Any]:
    """:func:`answer_of` a chat answer."""
    usage = getattr(response, "usage", None)
    return answer_of(response.id, response.created, response.model, usage)


def answer_of(answer_id: str, created: int, model: str, usage: Any) -> list[Any]:
    """What names a stored answer: its id, creation time, model and token counts (a streamed
    answer is named by its chunks' alike, before it is assembled)."""
    counts = [getattr(usage, n, None) for n in ("prompt_tokens", "completion_tokens")]
    details = getattr(usage, "prompt_tokens_details", None)
    counts.append(getattr(details, "cached_tokens", None))
    return [answer_id, created, model, counts]
