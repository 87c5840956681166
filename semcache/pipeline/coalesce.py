"""The coalescer stage: concurrent identical requests share one execution of the rest.

Everything after this stage (semantic lookup, upstream call, write-behind) runs once per
flight. A streaming caller reads the flight's chunks live through its ``sink``; a follower
gets the leader's answer tagged ``coalesced``, with the tier the leader was served from.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from semcache.core.coalesce import Coalescer, Role
from semcache.pipeline.base import Emit, Found, Next, Request
from semcache.stats import Tier

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream


class CoalesceStage:
    """Join the flight for the request's exact key, or start it.

    ``recheck`` runs right before joining, with no await in between: a flight for this key
    may have finished while earlier stages awaited the store, and its answer is then in
    memory. So a request either joins a flight or finds its answer, never neither. Requests
    that may not share (``decision.coalesce`` off, or ``enabled`` False) run in a private
    flight: the same path, under a key nobody else can join.
    """

    def __init__(
        self,
        coalescer: Coalescer[Found, ModelResponseStream],
        recheck: Callable[[Request], Found | None],
        *,
        enabled: bool = True,
    ) -> None:
        self.coalescer = coalescer
        self._recheck = recheck
        self._enabled = enabled

    async def __call__(self, request: Request, call_next: Next) -> Found:
        found = self._recheck(request)
        if found is not None:
            return found
        key: object = request.keys.exact
        if not (request.decision.coalesce and self._enabled):
            key = (key, uuid.uuid4())

        async def execute(emit: Emit) -> Found:
            return await call_next(replace(request, sink=None, emit=emit))

        async with self.coalescer.subscribe(key, execute) as flight:
            sink = request.sink
            if sink is not None:
                async for chunk in flight:
                    sink(chunk, flight.role is Role.FOLLOWER)
            found = await flight.result()
            if flight.role is not Role.FOLLOWER:
                return found
        return Found(
            found.answer,
            Tier.COALESCED,
            similarity=found.similarity,
            nearest=found.nearest,
            origin=found.origin or found.tier,
        )
