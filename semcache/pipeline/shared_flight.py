"""Cross-replica coalescing: one upstream call per request key among replicas sharing Redis.

Sits right after the in-process coalescer, so only one request per key and replica (the
local leader) takes part; see ``semcache.replicas.flights`` for the protocol. A follower's
answer is tagged ``coalesced`` with the leader's tier as its origin, as in-process. Redis
trouble never fails a call: a claim that cannot be made runs the request alone.

A question the private-data gate flagged never takes part: a flight's stream holds the
question's answer (and its chunks, live, before any answer scan could mask them) in Redis for
other replicas, so such a request runs alone in its replica (counted ``shared_flight_private``;
the in-process coalescer still merges its local repeats). A clean question's answer that may
not be stored (the answer scan found private data in it) still reaches the followers of its
flight, who asked the same question, but its stream is deleted as the flight ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import orjson

from semcache.core.answer import Answer, is_complete
from semcache.errors import SharedFlightFailed
from semcache.pipeline.base import Found, Next, Request
from semcache.replicas.exact import decode_entry
from semcache.replicas.flights import Claim, Followed, Role, SharedFlights
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats, Tier
from semcache.stores.base import Entry

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream

#: A follower's FailOpen timeout: following lasts as long as the leader's upstream call;
#: a dead Redis is noticed by each command's own timeout.
_FOLLOW_TIMEOUT_S = 24 * 3600.0

PRIVATE = "shared_flight_private"
"""Counted when a flagged question runs alone instead of in a cross-replica flight."""


class SharedFlightStage:
    def __init__(
        self,
        flights: SharedFlights,
        failopen: FailOpen,
        stats: Stats,
        *,
        max_wait_s: float | None,
        fresh: Callable[[Entry], bool] | None = None,
    ) -> None:
        self._fresh = fresh
        self._flights = flights
        self._failopen = failopen
        self._stats = stats
        self._max_wait_s = max_wait_s

    async def __call__(self, request: Request, call_next: Next) -> Found:
        if not request.decision.coalesce:
            return await call_next(request)
        if request.privacy is not None and request.privacy.private:
            self._stats.count(PRIVATE)
            return await call_next(request)
        loop = asyncio.get_running_loop()
        deadline = None if self._max_wait_s is None else loop.time() + self._max_wait_s
        keys, flights = request.keys, self._flights
        while True:
            claim = await self._failopen.call(
                "redis_claim",
                lambda: flights.claim(
                    keys.exact,
                    tenant=request.tenant,
                    namespace=request.control.namespace,
                    model=keys.model,
                ),
                None,
            )
            if claim is None:
                return await call_next(request)
            if claim.role is Role.HIT and claim.entry is not None:
                entry = decode_entry(claim.entry)
                if self._fresh is None or self._fresh(entry):
                    return Found(Answer.of(entry), Tier.EXACT)
                return await call_next(request)  # stale snapshot, and no flight to join
            if claim.role is Role.LEADER:
                return await self._lead(flights, claim, request, call_next)
            result, passed_on = await self._follow(flights, claim, request, deadline)
            followed = result if result is not None else Followed()
            if followed.done is not None:
                return _followed(followed.done)
            if passed_on:
                raise SharedFlightFailed(
                    "the replica streaming this answer failed midway; nothing was stored"
                )
            if result is None or followed.timed_out:
                self._stats.count("shared_alone")
                return await call_next(request)
            self._stats.count("shared_takeovers")

    async def _follow(
        self, flights: SharedFlights, claim: Claim, request: Request, deadline: float | None
    ) -> tuple[Followed | None, int]:
        """How following ended (None: Redis failed) and how many chunks were passed on."""
        # Chunks are passed on only to a streaming request, as in-process: a request that
        # does not stream gets the answer whole, so it can still take over a failed flight.
        emit = request.emit if request.stream else None
        passed_on = 0

        def on_chunk(data: bytes) -> None:
            nonlocal passed_on
            if emit is not None:
                passed_on += 1
                emit(_chunk(data))

        result = await self._failopen.call(
            "redis_follow",
            lambda: flights.follow(claim, on_chunk, deadline),
            None,
            timeout_s=_FOLLOW_TIMEOUT_S,
        )
        return result, passed_on

    async def _lead(
        self, flights: SharedFlights, claim: Claim, request: Request, call_next: Next
    ) -> Found:
        leader = flights.lead(claim)
        inner = request.emit

        def emit(chunk: ModelResponseStream) -> None:
            if inner is not None:
                inner(chunk)
            leader.chunk(chunk.model_dump_json().encode())

        try:
            found = await call_next(replace(request, emit=emit))
        except BaseException:
            await leader.finish(None)
            raise
        response = found.response
        complete = response is None or is_complete(response)
        # an answer that may not be stored (private data in it) leaves nothing behind in Redis
        await leader.finish(_outcome(found) if complete else None, keep=found.storable)
        if leader.lease_lost:
            self._stats.count("shared_leases_lost")
        return found


def _outcome(found: Found) -> dict[str, Any]:
    return {
        "entry": found.answer.entry.payload(),
        "tier": (found.origin or found.tier).value,
        "similarity": found.similarity,
    }


def _followed(outcome: dict[str, Any]) -> Found:
    answer = Answer.of(Entry.from_payload(outcome["entry"]))
    return Found(
        answer, Tier.COALESCED, similarity=outcome["similarity"], origin=Tier(outcome["tier"])
    )


#: Marks a chunk that another replica's call produced (read by :func:`from_other_replica`).
_MARK = "semcache_shared_flight"


def _chunk(data: bytes) -> ModelResponseStream:
    from litellm.types.utils import ModelResponseStream

    chunk = ModelResponseStream(**orjson.loads(data))
    chunk._hidden_params = {**(getattr(chunk, "_hidden_params", None) or {}), _MARK: True}
    return chunk


def from_other_replica(chunk: Any) -> bool:
    """True for a chunk of another replica's call passed on by a cross-replica follower (its
    streaming caller is a follower, ``coalesced``, not a miss of its own)."""
    hidden = getattr(chunk, "_hidden_params", None)
    return isinstance(hidden, dict) and hidden.get(_MARK) is True
