"""The request path: the exact key's flight, then the lookup phase, then the answer phase.

``RequestPath.run(request)`` is what ``completion`` (sync, async, streams, batches) and the
proxy run. Concurrent identical requests share one flight (:class:`Coalescer`, keyed by the
exact key): the lookup and, on a miss, the answer run once for all of them. A streaming
caller reads the flight's chunks live through its ``sink``; a follower gets the leader's
answer tagged ``coalesced``, with the tier the leader was served from. Requests that may not
share (``decision.coalesce`` off, or coalescing disabled) run in a private flight: the same
path, under a key nobody else can join.

Each caller passes the lookup's gates (private data, readability) itself, before joining:
its own verdict is counted and reported. Memory is checked right before joining, with no
await in between: a flight for this key may
have finished while the caller waited, and its answer is then in memory. So a request either
joins a flight or finds its answer, never neither.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

from semcache.core.coalesce import Coalescer, Role
from semcache.pipeline.base import Emit, Found, Pipeline, Request
from semcache.pipeline.lookup import Lookup, learned
from semcache.stats import Tier

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream


class RequestPath:
    """``lookup``, then (on a miss) ``answer``: the stages from the shared flight to the
    upstream call; inside the flight of ``coalescer``."""

    def __init__(
        self,
        lookup: Lookup,
        answer: Pipeline,
        coalescer: Coalescer[Found, ModelResponseStream],
        *,
        enabled: bool = True,
    ) -> None:
        self.lookup = lookup
        self.answer = answer
        self.coalescer = coalescer
        self._enabled = enabled

    async def run(self, request: Request) -> Found:
        request = await self.lookup.gate(request)  # every caller's own verdict, counted
        found = self.lookup.peek(request)
        if found is not None:
            return learned(request, found)
        key: object = request.keys.exact
        if not (request.decision.coalesce and self._enabled):
            key = (key, uuid.uuid4())

        async def execute(emit: Emit) -> Found:
            return await self.find(replace(request, sink=None, emit=emit))

        async with self.coalescer.subscribe(key, execute) as flight:
            sink = request.sink
            if sink is not None:
                async for chunk in flight:
                    sink(chunk, flight.role is Role.FOLLOWER)
            found = await flight.result()
            if flight.role is not Role.FOLLOWER:
                return found
        follower = Found(
            found.answer,
            Tier.COALESCED,
            similarity=found.similarity,
            nearest=found.nearest,
            origin=found.origin or found.tier,
        )
        return learned(request, follower)

    async def find(self, request: Request) -> Found:
        """The lookup's hit, else the answer phase's answer to the miss."""
        looked = await self.lookup(request)
        if isinstance(looked, Found):
            return looked
        return learned(looked.request, await self.answer.run(looked.request))
