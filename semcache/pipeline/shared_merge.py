"""The paraphrase merge across replicas: follow the flight of a question in flight elsewhere.

The in-process merge (:mod:`semcache.pipeline.merge`) lets a paraphrase wait for an upstream
call in flight in its own process. Replicas sharing a Redis each ask upstream otherwise:
with a stream spread round-robin over 4 processes, 17 of 144 paraphrases merged in one
process and none across 4 (``benchmarks/bench_round_robin.py``, before this module), so each
went upstream and was stored as an entry of its own. This closes that gap with the pieces
already shared:

- a leader that may be followed adds its question to the partition's in-flight vector set
  (:class:`~semcache.replicas.inflight.SharedQuestions`) and removes it when its call ends;
- a miss asks for the nearest in-flight question of its partition. When another replica
  asked it and the semantic tier's hit rule (same threshold, guard and scorer) accepts it,
  it looks the leader's request key up (:meth:`SharedFlights.peek`): a stored answer is
  served at once; a flight is followed through its Redis stream (chunks passed on live).

What is served is what a semantic hit would serve had the leader's answer been stored a
moment earlier, and no more: after the flight's ``done`` the leader's answer is served only
when it *is* stored in the Redis exact tier under the current purge generations, so an
answer that was not storable, or that a purge or a model change fenced (in any replica),
is never served to a paraphrase. (A streaming follower that has passed chunks on cannot
take them back; it shares the leader's outcome, as an in-process follower does.) A question
the private-data gate flagged takes no part either way. Redis trouble only costs the merge.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from semcache.core.answer import Answer
from semcache.errors import SharedFlightFailed
from semcache.pipeline import hit_rule
from semcache.pipeline.base import Emit, Found, Request
from semcache.pipeline.hit_rule import Candidate, Lanes
from semcache.pipeline.merge_mark import marked
from semcache.replicas.exact import decode_entry
from semcache.replicas.flights import Claim, Followed, Role, SharedFlights
from semcache.replicas.inflight import Nearest, Published, SharedQuestions
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats, Tier
from semcache.stores.base import Entry

if TYPE_CHECKING:
    import numpy as np
    from litellm.types.utils import ModelResponseStream

    from semcache.pipeline.lookup_result import Verdict

Partition = tuple[str, str, str, str]
T = TypeVar("T")
R = TypeVar("R")

#: Following lasts as long as the leader's call (a dead Redis: each command's own timeout).
_FOLLOW_TIMEOUT_S = 24 * 3600.0
#: Seconds the merge is skipped after one of its Redis commands failed: during an outage a
#: miss should not wait out more timeouts than the exact tier's own for a merge that cannot
#: happen (the in-process merge goes on).
BACKOFF_S = 5.0
_FAILED = object()


class SharedMerge:
    """Publish this replica's followable questions; follow another replica's paraphrase."""

    def __init__(
        self,
        questions: SharedQuestions,
        flights: SharedFlights,
        failopen: FailOpen,
        stats: Stats,
        *,
        max_wait_s: float | None,
        fresh: Callable[[Entry], bool] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._questions = questions
        self._flights = flights
        self._failopen = failopen
        self._stats = stats
        self._max_wait_s = max_wait_s
        self._fresh = fresh
        self._monotonic = monotonic
        self._skip_until = float("-inf")
        self._tasks: set[asyncio.Task[Any]] = set()

    def _takes_part(self, request: Request) -> bool:
        if self._monotonic() < self._skip_until:
            self._stats.count("shared_merge_skipped")
            return False
        # A flagged question never enters Redis (nor has a cross-replica flight to follow).
        return request.privacy is None or not request.privacy.private

    async def _call(self, kind: str, fn: Callable[[], Awaitable[T]], **kw: float) -> T | None:
        """``fn`` through FailOpen; None (and the merge skipped for BACKOFF_S) if it failed."""
        result = await self._failopen.call(kind, fn, _FAILED, **kw)
        if result is _FAILED:
            self._skip_until = self._monotonic() + BACKOFF_S
            return None
        return result  # type: ignore[return-value]

    async def publish(
        self, request: Request, partition: Partition, vector: np.ndarray
    ) -> Published | None:
        if not self._takes_part(request):
            return None
        keys, questions = request.keys, self._questions

        async def add() -> Published:
            return await questions.add(
                partition, vector, prompt=keys.prompt or "", exact=keys.exact, model=keys.model
            )

        return await self._call("redis_merge_publish", add)

    def publish_soon(
        self, request: Request, partition: Partition, vector: np.ndarray
    ) -> asyncio.Task[Published | None]:
        """:meth:`publish` as a background task: a leader's upstream call never waits for
        Redis (a follower arriving in the first round trip simply leads itself)."""
        return self._keep(self.publish(request, partition, vector))

    def withdraw_soon(self, published: asyncio.Task[Published | None]) -> None:
        """Remove the question once it was added, in the background (the leader's caller
        does not wait for Redis; an element left by a crash expires by itself)."""

        async def withdraw() -> None:
            added = await published
            if added is not None:
                await self.withdraw(added)

        self._keep(withdraw())

    def _keep(self, work: Coroutine[Any, Any, R]) -> asyncio.Task[R]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)  # a reference until done (the loop keeps only weak ones)
        task.add_done_callback(self._tasks.discard)
        return task

    async def withdraw(self, published: Published) -> None:
        if self._monotonic() < self._skip_until:
            return  # Redis is failing: the element expires by itself
        questions = self._questions
        await self._call("redis_merge_remove", lambda: questions.remove(published))

    async def follow(
        self,
        request: Request,
        partition: Partition,
        vector: np.ndarray,
        tier: Lanes,
        emit: Emit | None,
    ) -> Found | None:
        """The answer of another replica's paraphrase in flight, or None (lead yourself).

        ``tier``: the semantic tier, whose hit rule (:func:`hit_rule.choose`) picks the
        question to follow; ``emit`` the streaming caller's sink (None: not streaming).
        """
        if not self._takes_part(request):
            return None
        near = await self._choose(request, partition, vector, tier)
        if near is None:
            return None
        claim = await self._peek(request, near.exact, near.model)
        if claim is None:  # neither stored nor in flight: its leader is gone
            await self.withdraw(near.published)
            return None
        similarity = near.similarity
        if claim.role is Role.HIT:
            return self._served(claim, request, similarity)
        followed, passed_on = await self._follow(claim, emit, similarity)
        if followed.done is not None:
            stored = await self._peek(request, near.exact, near.model)
            if stored is not None and stored.role is Role.HIT:
                found = self._served(stored, request, similarity)
                if found is not None:
                    return found
            if passed_on:  # chunks handed out cannot be taken back: the leader's outcome
                entry = Entry.from_payload(followed.done["entry"])
                self._stats.count("shared_merges")
                return Found(Answer.of(entry), Tier.MERGED, similarity=similarity)
        elif passed_on:
            raise SharedFlightFailed(
                "the replica streaming this answer failed midway; nothing was stored"
            )
        self._stats.count("merge_fallbacks")
        return None

    async def _choose(
        self, request: Request, partition: Partition, vector: np.ndarray, tier: Lanes
    ) -> Nearest | None:
        """The nearest question another replica asked that the hit rule accepts (the next
        nearest judged only while the guard vetoes); a failed judgement: none."""
        questions, prompt = self._questions, request.keys.prompt or ""
        k = hit_rule.span(tier, prompt)
        found = await self._call(
            "redis_merge_nearest", lambda: questions.nearest_k(partition, vector, k)
        )
        candidates = [Candidate(near, near.prompt, near.similarity) for near in found or []]
        choice = await hit_rule.choose(
            tier, prompt, request.control.namespace, candidates, through=self._through
        )
        if choice.vetoed:
            self._stats.count("merge_rejections", choice.vetoed)
        return choice.chosen.item if choice.chosen is not None else None

    async def _through(self, judge: Callable[[], Awaitable[Verdict]]) -> Verdict | None:
        return await self._failopen.call("merge_judge", judge, None)

    async def _peek(self, request: Request, exact: str, model: str) -> Claim | None:
        flights, tenant, namespace = self._flights, request.tenant, request.control.namespace
        return await self._call(
            "redis_merge_peek",
            lambda: flights.peek(exact, tenant=tenant, namespace=namespace, model=model),
        )

    def _served(self, claim: Claim, request: Request, similarity: float) -> Found | None:
        assert claim.entry is not None
        entry = decode_entry(claim.entry)
        if self._fresh is not None and not self._fresh(entry):
            return None  # from a replaced model snapshot
        self._stats.count("shared_merges")
        return Found(Answer.of(entry), Tier.MERGED, similarity=similarity, nearest=request.nearest)

    async def _follow(
        self, claim: Claim, emit: Emit | None, similarity: float
    ) -> tuple[Followed, int]:
        """How following ended (a failed Redis reads as a failed flight), and the chunks
        passed on."""
        passed_on = 0

        def on_chunk(data: bytes) -> None:
            nonlocal passed_on
            if emit is not None:
                passed_on += 1
                emit(marked(_chunk(data), similarity))

        flights = self._flights
        deadline = None
        if self._max_wait_s is not None:
            deadline = asyncio.get_running_loop().time() + self._max_wait_s
        followed = await self._call(
            "redis_merge_follow",
            lambda: flights.follow(claim, on_chunk, deadline),
            timeout_s=_FOLLOW_TIMEOUT_S,
        )
        return (followed if followed is not None else Followed(failed=True)), passed_on


def _chunk(data: bytes) -> ModelResponseStream:
    from litellm.types.utils import ModelResponseStream

    return ModelResponseStream(**orjson.loads(data))
