"""The hit rule over a question's candidates: which one, if any, answers it.

Every path that serves one question's answer to another asks :func:`choose`: the semantic
lookup (stored entries), the in-process merge (questions in flight here), the cross-replica
merge (questions in flight in other replicas) and ``check()``. The contract, for candidates
ordered closest first:

- each candidate is judged by the rule of the question's lane (:meth:`Lanes.lane`), one
  candidate at a time: the cosine threshold or its namespace override, the answer guard, or
  the calibrated scorer's band and score with the namespace override as a floor;
- the nearest is judged first; while the guard vetoes (``Verdict.rejected``), the next is
  judged, up to ``extra_candidates`` after the nearest; the first the rule accepts is chosen;
- the first plain miss ends the search: the candidates after it are farther, so under the
  threshold too;
- a candidate the lane calls a plain miss with no work (:meth:`Rule.under`) is dismissed
  without an await, so a caller that must not yield meanwhile (the in-process merge) need
  not; every other judgement runs through the caller's ``through`` (its fail-open boundary).

Why one function: the walk over the candidates was written once per path, and the copies
drifted (which rule a routed question gets, how many candidates a veto passes over).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Generic, Protocol, TypeVar

from semcache.pipeline.lookup_result import Verdict

T = TypeVar("T")

#: Runs one judgement (the caller's fail-open boundary); None: the judgement failed.
Through = Callable[[Callable[[], Awaitable[Verdict]]], Awaitable[Verdict | None]]


class Rule(Protocol):
    """One lane's rule for a single candidate (a :class:`SemanticTier`)."""

    @property
    def extra_candidates(self) -> int:
        """How many candidates after the nearest a veto lets be judged."""
        ...

    def under(self, similarity: float, namespace: str) -> bool:
        """Whether :meth:`judge` calls a candidate at ``similarity`` a plain miss with no work."""
        ...

    def judge(
        self, prompt: str, question: str | None, similarity: float, namespace: str
    ) -> Verdict: ...

    async def ajudge(
        self, prompt: str, question: str | None, similarity: float, namespace: str
    ) -> Verdict: ...


class Lanes(Protocol):
    def lane(self, text: str | None) -> Rule:
        """The lane whose embedder, store and rule serve ``text``."""
        ...


@dataclass(frozen=True, slots=True)
class Candidate(Generic[T]):
    """``item`` (an entry's match, an in-flight question) found at cosine ``similarity``;
    ``question``: the text it answers (None: not stored, nothing for the guard to check)."""

    item: T
    question: str | None
    similarity: float


@dataclass(frozen=True, slots=True)
class Choice(Generic[T]):
    """What :func:`choose` made of the candidates.

    ``chosen``: the candidate served (None: a miss); ``verdicts``: one per candidate judged,
    in order, so the first is the nearest's and, when one was chosen, the last is its;
    ``failed``: a judgement failed (nothing chosen; it has no verdict)."""

    chosen: Candidate[T] | None
    verdicts: tuple[Verdict, ...] = ()
    failed: bool = False

    @property
    def nearest(self) -> Verdict | None:
        """The nearest candidate's verdict (None: no candidate, or its judgement failed)."""
        return self.verdicts[0] if self.verdicts else None

    @property
    def vetoed(self) -> int:
        """How many candidates the guard vetoed (a rejection each, for the caller to count)."""
        return sum(verdict.rejected for verdict in self.verdicts)


async def direct(judge: Callable[[], Awaitable[Verdict]]) -> Verdict:
    """Runs a judgement with no boundary of its own (its errors propagate)."""
    return await judge()


def span(tiers: Lanes, prompt: str) -> int:
    """How many candidates :func:`choose` may judge for ``prompt``: fetch this many."""
    return 1 + tiers.lane(prompt).extra_candidates


async def choose(
    tiers: Lanes,
    prompt: str,
    namespace: str,
    candidates: Sequence[Candidate[T]],
    *,
    through: Through = direct,
) -> Choice[T]:
    """The candidate (closest first) that serves ``prompt`` in ``namespace``, by the rule in
    the module docstring; at most :func:`span` of them are judged."""
    rule = tiers.lane(prompt)
    verdicts: list[Verdict] = []
    for candidate in candidates[: 1 + rule.extra_candidates]:
        question, similarity = candidate.question, candidate.similarity
        if rule.under(similarity, namespace):  # a comparison: no await, cannot fail
            verdicts.append(rule.judge(prompt, question, similarity, namespace))
            break
        verdict = await through(partial(rule.ajudge, prompt, question, similarity, namespace))
        if verdict is None:
            return Choice(None, tuple(verdicts), failed=True)
        verdicts.append(verdict)
        if verdict.hit:
            return Choice(candidate, tuple(verdicts))
        if not verdict.rejected:
            break  # a plain miss: so is every candidate after it
    return Choice(None, tuple(verdicts))
