"""Which in-flight question a miss follows: the merge stage's judging of its candidates.

See :mod:`semcache.pipeline.merge`; one event loop, not thread-safe.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from semcache.pipeline.in_flight import InFlight, InFlightQuestion, Partition
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats

if TYPE_CHECKING:
    from semcache.pipeline.base import Request
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
        """The in-flight question to follow, by the semantic lookup's own rule
        (:meth:`SemanticTier.settle`): the nearest, and when the guard vetoes it, the next
        nearest over the threshold, up to ``semantic.guard_candidates`` more (none with a
        scorer). Judging the nearest alone let a question that differs in one detail hide
        the paraphrase asked beside it.

        Judging awaits, and paraphrases asked together reach this point together: each
        judged what was in flight before any of them led, and all of them led (in a
        144-question stream, 8 at a time, on one process, 7 of 24 paraphrase pairs). So when
        a leader began during the judging, the ones not judged yet are looked at too (at
        most ``MAX_LOOKS`` rounds); the caller leads with no await after the last look.
        A candidate under the threshold is dismissed with no await (``tier.under``): when
        each round awaited, a burst's other leaders registered meanwhile, the rounds ran out
        and both of a simultaneous paraphrase pair led (9 of 10 pairs, cold burst of 150)."""
        prompt = request.keys.prompt or ""
        namespace = request.control.namespace
        judged: set[object] = set()
        for _ in range(MAX_LOOKS):
            seen = self.in_flight.added
            budget = 1 + tier.extra_candidates
            near = self.in_flight.nearest_k(partition, vector, budget + len(judged))
            for leader, similarity in [n for n in near if n[0].key not in judged][:budget]:
                if tier.under(similarity, namespace):
                    break  # so is every one after it; decided with no await (see above)
                judged.add(leader.key)
                judge = partial(tier.ajudge, prompt, leader.prompt, similarity, namespace)
                # a failing scorer: no merge, counted
                verdict = await self._failopen.call("merge_judge", judge, None)
                if verdict is None:
                    return None
                if verdict.hit:
                    return leader, similarity
                if not verdict.rejected:
                    break  # under the threshold: so is every one after it
                self._stats.count("merge_rejections")
            if self.in_flight.added == seen:
                return None  # nobody began meanwhile: lead (registered with no await between)
        return None
