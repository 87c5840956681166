"""``responses`` / ``aresponses`` and ``messages`` / ``amessages``; mixed into ``SemanticCache``.

Each call is translated by its protocol's adapter and answered by the path ``completion``
takes (the memory tier's peek, then the pipeline on semcache's loop, or the same streaming
delivery), with the protocol's name in its keys; the answer comes back in the protocol's
own shape: a :class:`ProtocolReply` (the response body, a ``dict``) or an iterator of its
stream events (dicts with a ``type``), each carrying ``cache_info`` as ``completion``'s do.
Each call is recorded and traced as ``completion`` is, under its protocol's name
(``semcache.responses``, ``semcache.messages``).
A request asking the provider to hold state (the adapter's ``stateful``) is answered by the
provider past every tier instead, and counted as a bypass (reason ``stateful``).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from semcache.facade.streams import (
    AsyncBatchStream,
    AsyncCacheStream,
    ReplayStream,
    SyncBatchStream,
    unwound,
)
from semcache.protocols.base import Protocol, Translated
from semcache.protocols.messages import MESSAGES
from semcache.protocols.responses import RESPONSES
from semcache.protocols.stateful import (
    STATEFUL_INFO,
    Forward,
    forwarded_events,
    forwarded_reply,
)
from semcache.stats import CacheInfo, Tier, cache_info

if TYPE_CHECKING:
    from litellm import ModelResponse
    from litellm.types.utils import ModelResponseStream

    from semcache.compose import Assembly
    from semcache.facade.delivery import Delivery
    from semcache.pipeline.base import Request
    from semcache.runtime.loop import LoopThread


class ProtocolReply(dict[str, Any]):
    """A protocol's response body; ``cache_info`` says how it was served."""

    cache_info: CacheInfo


class ProtocolAPI:
    """The Responses and Messages calls of the cache (see the module docstring)."""

    _parts: Assembly
    _loop: LoopThread
    _delivery: Delivery
    _find: Callable[[Request], Coroutine[Any, Any, ModelResponse]]

    def responses(self, **kwargs: Any) -> ProtocolReply | Iterator[dict[str, Any]]:
        """``litellm.responses`` through the cache: an OpenAI Responses request's body fields
        and LiteLLM call options (``api_base``, ``tenant=``, ``cache=``, ...); ``stream=True``
        returns an iterator of Responses events."""
        return self._sync(RESPONSES, kwargs)

    async def aresponses(self, **kwargs: Any) -> ProtocolReply | AsyncIterator[dict[str, Any]]:
        """``responses`` for async callers."""
        return await self._async(RESPONSES, kwargs)

    def messages(self, **kwargs: Any) -> ProtocolReply | Iterator[dict[str, Any]]:
        """``litellm.anthropic.messages.create`` through the cache: an Anthropic Messages
        request's body fields and LiteLLM call options; ``stream=True`` returns an iterator
        of Messages events."""
        return self._sync(MESSAGES, kwargs)

    async def amessages(self, **kwargs: Any) -> ProtocolReply | AsyncIterator[dict[str, Any]]:
        """``messages`` for async callers."""
        return await self._async(MESSAGES, kwargs)

    def _sync(
        self, protocol: Protocol, kwargs: Mapping[str, Any]
    ) -> ProtocolReply | Iterator[dict[str, Any]]:
        passed = protocol.stateful(kwargs)
        if passed is not None:
            if passed.stream:
                return cast(Iterator[dict[str, Any]], SyncBatchStream(self._forwarded(passed)))
            return self._loop.run(self._forward(passed))
        asked, request = self._prepare(protocol, kwargs)
        if request.stream:
            batches = self._batches(protocol, asked, request)
            return cast(Iterator[dict[str, Any]], SyncBatchStream(batches))
        observer, started = self._parts.observer, time.time_ns()
        answer = self._delivery.from_memory(
            self._parts.path, observer, request, protocol.name, started
        )
        if answer is not None:
            return _reply(protocol, asked, answer)
        with observer.operation(protocol.name, started):
            answer = self._loop.run(self._find(request))
            return _reply(protocol, asked, observer.served(request.tenant, answer))

    async def _async(
        self, protocol: Protocol, kwargs: Mapping[str, Any]
    ) -> ProtocolReply | AsyncIterator[dict[str, Any]]:
        passed = protocol.stateful(kwargs)
        if passed is not None:
            if passed.stream:
                stream = AsyncBatchStream(self._forwarded(passed))
                return cast(AsyncIterator[dict[str, Any]], stream)
            return await self._loop.arun(self._forward(passed))
        asked, request = self._prepare(protocol, kwargs)
        if request.stream:
            batches = self._batches(protocol, asked, request)
            return cast(AsyncIterator[dict[str, Any]], AsyncBatchStream(batches))
        observer, started = self._parts.observer, time.time_ns()
        answer = self._delivery.from_memory(
            self._parts.path, observer, request, protocol.name, started
        )
        if answer is not None:
            return _reply(protocol, asked, answer)
        with observer.operation(protocol.name, started):
            answer = await self._loop.arun(self._find(request))
            return _reply(protocol, asked, observer.served(request.tenant, answer))

    def _prepare(self, protocol: Protocol, kwargs: Mapping[str, Any]) -> tuple[Translated, Request]:
        asked = protocol.translate(kwargs)
        return asked, self._parts.prepare(asked.chat, protocol=protocol.name)

    def _batches(
        self, protocol: Protocol, asked: Translated, request: Request
    ) -> AsyncCacheStream | ReplayStream:
        """The protocol's events, a batch per chat chunk, each crossing from semcache's loop
        in one hand-over; a memory hit's are made here, on the caller's side."""
        replay = self._delivery.replay_from_memory(
            self._parts.path, self._parts.observer, request, time.time_ns(), protocol.name
        )
        if replay is not None:
            return _replayed(protocol, asked, replay)
        found = self._delivery.stream(self._parts.path, request)
        chunks = self._parts.observer.stream(request.tenant, found, protocol.name)
        batches = protocol.events(chunks, asked)
        return AsyncCacheStream(cast(Any, batches), self._loop)

    # -- past every tier (provider-held state) ------------------------------------------------
    async def _forward(self, request: Forward) -> ProtocolReply:
        reply = ProtocolReply(await forwarded_reply(request))
        reply.cache_info = self._passed()
        return reply

    def _forwarded(self, request: Forward) -> AsyncCacheStream:
        async def events() -> AsyncIterator[list[dict[str, Any]] | CacheInfo]:
            async for batch in forwarded_events(request):
                yield batch
            self._passed()

        return AsyncCacheStream(cast(Any, events()), self._loop)

    def _passed(self) -> CacheInfo:
        """Count an answer the provider gave past every tier (a bypass, reason stateful)."""
        stats = self._parts.stats
        stats.count("upstream_calls")
        stats.count("stateful_bypasses")
        self._delivery.record(STATEFUL_INFO)
        return STATEFUL_INFO


def _replayed(protocol: Protocol, asked: Translated, replay: ReplayStream) -> ReplayStream:
    """A memory hit's chunks as the protocol's event batches, all made now."""
    info = replay.cache_info

    async def chunks() -> AsyncIterator[ModelResponseStream | CacheInfo]:
        if info is not None:
            yield info
        for chunk in replay.drain():
            yield chunk

    made = unwound(protocol.events(chunks(), asked))
    return ReplayStream((batch for batch in made if not isinstance(batch, CacheInfo)), info)


def _reply(protocol: Protocol, asked: Translated, response: ModelResponse) -> ProtocolReply:
    info = cache_info(response) or CacheInfo(tier=Tier.MISS)
    reply = ProtocolReply(protocol.reply(response, asked, info))
    reply.cache_info = info
    return reply
