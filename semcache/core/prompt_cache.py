"""Provider prompt caching for misses: which part of an upstream request the provider may reuse.

A miss whose prompt shares a long prefix with a recent request of the same partition (tenant,
namespace, resolved model) is sent so the provider's prompt cache serves that prefix and only
the differing rest is computed: one document, many questions.

- **Anthropic** (``anthropic/`` models, through LiteLLM, which forwards the mark): a
  ``cache_control: {"type": "ephemeral"}`` breakpoint on the last block of the shared prefix.
- **OpenAI** (``openai/`` models, chat completions and Responses): a ``prompt_cache_key``
  derived from the partition (a hash, so no tenant name leaves), on every prompt of at least
  the minimum size, so a partition's long prompts are routed to the same provider cache.

**The shared prefix.** The prompt is read as a run of blocks: ``tools`` first, then each
message's content blocks in order (a string content is one block; a message's other fields,
such as its tool calls, count with its first block). The shared prefix is the longest run of
whole blocks, from the start, that a request of the same partition sent within ``window_s``
also began with, that ends on a text block of a system or user message, and that holds at
least ``min_tokens`` (estimated at four characters a token: the provider ignores a mark on a
shorter prefix, so an estimate costs nothing when it is wrong). That covers a system prompt
holding the document, the document in an earlier message, and document and question as
separate blocks of one user message. A document and question in one string share no whole
block and are left alone: splitting the string would change the request.

**Why only a shared prefix gets a breakpoint** (Anthropic): writing a prefix to its cache
costs more than reading it uncached, so the first request of a document pays nothing extra;
the second writes the prefix and the later ones read it. OpenAI charges no write, so its key
goes on the first long prompt too, which routes it where the later ones will look.

A request that carries its own ``cache_control`` mark or ``prompt_cache_key`` is sent as the
caller made it: its breakpoints are within Anthropic's limit of four, and one more could
break it. The mark goes on the upstream request only; the cache key was computed before it,
and nothing stored or returned holds it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

#: Anthropic's breakpoint, as its Messages API and LiteLLM's chat translation take it.
BREAKPOINT: dict[str, str] = {"type": "ephemeral"}
CHARS_PER_TOKEN = 4
_MARKABLE_ROLES = frozenset({"system", "user"})
_MARK = "cache_control"


@dataclass(frozen=True, slots=True)
class _Boundary:
    """The end of one block: the digest of the prompt up to it, its size in characters, and
    where it is (``block`` -1: a string content)."""

    digest: bytes
    chars: int
    message: int
    block: int
    markable: bool


def partition_key(tenant: str, namespace: str, model: str) -> str:
    """The ``prompt_cache_key`` of a partition: stable, and naming no tenant."""
    raw = orjson.dumps(["semcache-prompt-cache-v1", tenant, namespace, model])
    return "semcache-" + hashlib.sha256(raw).hexdigest()[:32]


class PromptCacheMarks:
    """Remembers the recent long prefixes of each partition (a bounded LRU of digests,
    thread-safe) and marks an upstream request for its provider's prompt cache."""

    def __init__(
        self,
        *,
        min_tokens: int = 1024,
        window_s: float = 300.0,
        max_prefixes: int = 20_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._min_chars = min_tokens * CHARS_PER_TOKEN
        self._window_s = window_s
        self._max_prefixes = max_prefixes
        self._clock = clock
        self._seen: OrderedDict[bytes, float] = OrderedDict()
        self._lock = threading.Lock()

    def mark(
        self, params: Mapping[str, Any], *, tenant: str, namespace: str, model: str
    ) -> dict[str, Any] | None:
        """``params`` as the provider of ``model`` (resolved: ``provider/name``) should get
        them, or None to send them as they are. Never changes ``params``."""
        provider = model.split("/", 1)[0]
        messages = params.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
            return None
        key = partition_key(tenant, namespace, model)
        try:
            if provider == "anthropic":
                return self._breakpoint(params, messages, key)
            if provider == "openai":
                return self._cache_key(params, messages, key)
        except TypeError:  # orjson refuses a value: not plain JSON, sent as it is
            return None
        return None

    def _cache_key(
        self, params: Mapping[str, Any], messages: list[Any], key: str
    ) -> dict[str, Any] | None:
        if params.get("prompt_cache_key") is not None:
            return None
        size = len(orjson.dumps(messages)) + len(orjson.dumps(params.get("tools")))
        return {**params, "prompt_cache_key": key} if size >= self._min_chars else None

    def _breakpoint(
        self, params: Mapping[str, Any], messages: list[Any], key: str
    ) -> dict[str, Any] | None:
        if _has_marks(params.get("tools"), messages):
            return None
        boundaries = _boundaries(key, params.get("tools"), messages)
        long = [b for b in boundaries if b.chars >= self._min_chars]
        if not long:
            return None
        now = self._clock()
        shared = None
        with self._lock:
            for boundary in reversed(long):
                seen = self._seen.get(boundary.digest)
                if boundary.markable and seen is not None and now - seen <= self._window_s:
                    shared = boundary
                    break
            for boundary in long:
                self._seen[boundary.digest] = now
                self._seen.move_to_end(boundary.digest)
            while len(self._seen) > self._max_prefixes:
                self._seen.popitem(last=False)
        if shared is None:
            return None
        return {**params, "messages": _with_breakpoint(messages, shared)}


def _has_marks(tools: Any, messages: list[Mapping[str, Any]]) -> bool:
    for item in tools if isinstance(tools, list) else ():
        if isinstance(item, Mapping) and _MARK in item:
            return True
    for message in messages:
        if _MARK in message:
            return True
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, Mapping) and _MARK in b for b in content
        ):
            return True
    return False


def _blocks(content: Any) -> Iterator[tuple[int, Any]]:
    if isinstance(content, list):
        yield from enumerate(content)
    elif content is not None:
        yield -1, content


def _boundaries(seed: str, tools: Any, messages: list[Mapping[str, Any]]) -> list[_Boundary]:
    """Every block end of the prompt, in order; digests are over the partition and all that
    comes before, so equal digests mean equal prefixes in one partition."""
    running = hashlib.sha256(seed.encode())
    encoded = orjson.dumps(tools)
    running.update(encoded)
    chars = len(encoded) if tools else 0
    out: list[_Boundary] = []
    for i, message in enumerate(messages):
        fields = {k: v for k, v in message.items() if k != "content"}
        running.update(orjson.dumps(fields, option=orjson.OPT_SORT_KEYS))
        role = message.get("role")
        for j, block in _blocks(message.get("content")):
            encoded = orjson.dumps(block, option=orjson.OPT_SORT_KEYS)
            running.update(encoded)
            text = block if isinstance(block, str) else None
            if isinstance(block, Mapping) and block.get("type") == "text":
                text = block.get("text")
            chars += len(text) if isinstance(text, str) else len(encoded)
            markable = role in _MARKABLE_ROLES and isinstance(text, str)
            out.append(_Boundary(running.copy().digest(), chars, i, j, markable))
    return out


def _with_breakpoint(messages: list[Mapping[str, Any]], at: _Boundary) -> list[Any]:
    """A copy of ``messages`` with the breakpoint on the block ``at`` names (the caller's
    messages and blocks are never changed)."""
    out = list(messages)
    message = dict(out[at.message])
    content = message["content"]
    if at.block < 0:
        message["content"] = [{"type": "text", "text": content, _MARK: dict(BREAKPOINT)}]
    else:
        blocks = list(content)
        blocks[at.block] = {**blocks[at.block], _MARK: dict(BREAKPOINT)}
        message["content"] = blocks
    out[at.message] = message
    return out
