"""Shadow verification: re-ask upstream for a sample of semantic hits, off the caller's path.

For a sampled hit (:mod:`.sampling`) a background task asks upstream again and an
:class:`~semcache.tuning.compare.AnswerJudge` whether the fresh answer agrees; the verdict
goes to ``on_verdict``. :meth:`ShadowVerifier.consider` never awaits nor raises; concurrency
and backlog are bounded (skips counted as ``verify_skipped``); a failed call records no
verdict; nothing a shadow call returns is stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from semcache.core.answer import response_cost
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats
from semcache.tuning.compare import AnswerJudge, Judgement
from semcache.tuning.records import Served
from semcache.tuning.sampling import Sampler

if TYPE_CHECKING:
    from semcache.runtime.upstream import Upstream

OnVerdict = Callable[[Served, bool, float], Awaitable[None]]
"""``(served, wrong, sampling probability)``: where a decided verdict goes."""

ShadowFactory = Callable[[OnVerdict], "ShadowVerifier"]
"""Builds a verifier reporting to the given ``on_verdict``: how the composition root hands
shadow verification to :class:`~semcache.tuning.loop.TuningLoop`, whose own ``on_verdict``
receives the verdicts (so the loop is never built without its verifier, nor the verifier
without its loop)."""


@dataclass(slots=True)
class ShadowCost:
    """What shadow verification spent: upstream calls, their and the judge's tokens and USD."""

    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0


class ShadowVerifier:
    def __init__(
        self,
        upstream: Upstream,
        judge: AnswerJudge,
        sampler: Sampler,
        on_verdict: OnVerdict,
        failopen: FailOpen,
        stats: Stats,
        *,
        max_concurrency: int,
        max_pending: int,
    ) -> None:
        self._upstream = upstream
        self._judge = judge
        self._sampler = sampler
        self._on_verdict = on_verdict
        self._failopen = failopen
        self._stats = stats
        self._gate = asyncio.Semaphore(max_concurrency)
        self._max_pending = max_pending
        self._tasks: set[asyncio.Task[None]] = set()
        self.cost = ShadowCost()

    @property
    def pending(self) -> int:
        return len(self._tasks)

    def consider(
        self,
        served: Served,
        params: Mapping[str, Any],
        cached_text: Callable[[], str | None],
        threshold: float,
    ) -> float | None:
        """Maybe start a background check of ``served``; returns its sampling probability
        when sampled (and started), else None. ``cached_text`` is only called when sampled
        (decoding the cached answer costs more than the draw)."""
        probability = self._sampler.draw(served.similarity, threshold)
        if probability is None or served.query is None:
            return None
        cached = cached_text()
        if cached is None:
            self._stats.count("verify_undecided")
            return None
        if len(self._tasks) >= self._max_pending:
            self._stats.count("verify_skipped")
            return None
        self._stats.count("verify_sampled")
        request = dict(params)
        task = asyncio.get_running_loop().create_task(
            self._failopen.call(
                "shadow_verify", lambda: self._check(served, request, cached, probability), None
            )
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return probability

    async def _check(
        self, served: Served, params: dict[str, Any], cached: str, probability: float
    ) -> None:
        async with self._gate:
            response = await self._upstream.complete({**params, "stream": False})
        usage = getattr(response, "usage", None)
        self.cost.calls += 1
        self.cost.tokens += int(getattr(usage, "total_tokens", 0) or 0)
        self.cost.cost_usd += response_cost(response)
        self._stats.count("verify_calls")
        fresh = response.choices[0].message.content
        if not isinstance(fresh, str):
            self._stats.count("verify_undecided")
            return
        judgement: Judgement = await self._judge.judge(served.query or "", cached, fresh)
        self.cost.tokens += judgement.tokens
        self.cost.cost_usd += judgement.cost_usd
        if judgement.agree is None:
            self._stats.count("verify_undecided")
            return
        self._stats.count("verify_agree" if judgement.agree else "verify_disagree")
        await self._on_verdict(served, not judgement.agree, probability)

    async def drain(self) -> None:
        """Wait for every check started so far (tests and benchmarks read verdicts after)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for running checks, then cancel what is left."""
        tasks = list(self._tasks)
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=timeout_s)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
