"""Which in-flight question a miss follows: the merge stage's judging of its candidates.

See :mod:`semcache.pipeline.merge`; one event loop, not thread-safe.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import numpy as np

from semcache.pipeline import hit_rule
from semcache.pipeline.hit_rule import Candidate
from semcache.pipeline.in_flight import InFlight, InFlightQuestion, Partition
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats

if TYPE_CHECKING:
    from semcache.pipeline.base import Request
    from semcache.pipeline.lookup_result import Verdict
    from semcache.pipeline.semantic_tier import SemanticTier

#: Rounds of looking at in-flight questions that began while this one's judging awaited.
MAX_LOOKS = 4


class Chooser:
    """``await chooser(tier, request, partition, vector)``: the leader to follow and its
    similarity, or None."""

    def __init__(self, in_flight: InFlight, failopen: FailOpen, stats: Stats) -> None:
        self.in_flight = in_flight
        self._failopen = failopen
        self._stats = stats

    async def __call__(
        self,
        tier: SemanticTier,
        request: Request,
        partition: Partition,
        vector: np.ndarray,
    ) -> tuple[InFlightQuestion, float] | None:
        """The in-flight question to follow, by the one hit rule (:func:`hit_rule.choose`,
        as the semantic lookup): the nearest, and while the guard vetoes, the next nearest.

        Judging awaits, and paraphrases asked together reach this point together: each
        judged what was in flight before any of them led, and all of them led. So when a
        leader began during the judging, the ones not judged yet are looked at too (at most
        ``MAX_LOOKS`` rounds); the caller leads with no await after the last look. A
        candidate under the threshold is dismissed with no await (the rule's ``under``):
        when each round awaited, a burst's other leaders registered meanwhile, the rounds
        ran out and both of a simultaneous paraphrase pair led. A failed judgement (a
        failing scorer, counted) means no merge."""
        prompt = request.keys.prompt or ""
        namespace = request.control.namespace
        budget = hit_rule.span(tier, prompt)
        judged: set[object] = set()
        for _ in range(MAX_LOOKS):
            seen = self.in_flight.added
            near = self.in_flight.nearest_k(partition, vector, budget + len(judged))
            candidates = [
                Candidate(leader, leader.prompt, similarity)
                for leader, similarity in near
                if leader.key not in judged
            ]
            choice = await hit_rule.choose(
                tier, prompt, namespace, candidates, through=self.through
            )
            if choice.vetoed:
                self._stats.count("merge_rejections", choice.vetoed)
            if choice.failed:
                return None
            if choice.chosen is not None:
                return choice.chosen.item, choice.chosen.similarity
            judged.update(c.item.key for c in candidates[: len(choice.verdicts)])
            if self.in_flight.added == seen:
                return None  # nobody began meanwhile: lead (registered with no await between)
        return None

    async def through(self, judge: Callable[[], Awaitable[Verdict]]) -> Verdict | None:
        """Run one judgement of the merge (kind ``merge_judge``): None when it failed (a
        failing scorer: counted, and no merge)."""
        return await self._failopen.call("merge_judge", judge, None)
