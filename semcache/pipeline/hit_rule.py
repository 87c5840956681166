"""The hit rule: which of a question's candidates, if any, answers it.

Every path that serves one question's answer to another asks :func:`choose`: the semantic
lookup (stored entries), the in-process merge (questions in flight here), the cross-replica
merge (questions in flight in other replicas) and ``check()``. For candidates ordered
closest first:

- each is judged by the rule of the question's lane (:meth:`Lanes.lane`) for one candidate,
  :class:`OneCandidate`: without a scorer, its cosine is >= the namespace's threshold and
  the answer guard accepts it; with a scorer (the file ``semcache calibrate --save`` wrote),
  exactly the calibrated rule (cosine >= the band's ``lo`` and either >= its ``hi`` or the
  learned score >= the saved threshold) and neither the global threshold nor the verifier:
  the guard's rules are model features and the guarantee is for this rule alone. A namespace
  override is then an extra cosine floor: it can only remove hits, never serve one the scorer
  rejects;
- the nearest is judged first; while the guard vetoes (``Verdict.rejected``), the next is
  judged, up to ``extra_candidates`` after the nearest; the first the rule accepts is chosen;
- the first plain miss ends the search: the candidates after it are farther, so under the
  threshold too;
- a candidate the lane calls a plain miss with no work (:meth:`Rule.under`) is dismissed
  without an await, so a caller that must not yield meanwhile (the in-process merge) need
  not; every other judgement runs through the caller's ``through`` (its fail-open boundary).

Why one function: a rule written once per path drifts; here a routed question gets its
lane's rule, and a veto passes over as many candidates, on every path.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from semcache.guard.base import EmbeddingVerifier
from semcache.pipeline.lookup_result import Verdict

if TYPE_CHECKING:
    from semcache.guard import HitVerifier
    from semcache.scoring.decide import ScoredDecision

T = TypeVar("T")

#: Runs one judgement (the caller's fail-open boundary); None: the judgement failed.
Through = Callable[[Callable[[], Awaitable[Verdict]]], Awaitable[Verdict | None]]


@dataclass(frozen=True, slots=True)
class OneCandidate:
    """The rule for one candidate in one namespace (see the module docstring).

    ``threshold``: the namespace's cosine threshold, a hit when >= (without a scorer);
    ``floor``: the namespace's override, an extra cosine floor (with a scorer); ``scored``:
    a scorer is configured, and ``decision`` is it once set up (until then nothing is served,
    never by the uncalibrated cosine rule)."""

    threshold: float
    floor: float | None
    verifier: HitVerifier
    decision: ScoredDecision | None
    scored: bool

    def under(self, similarity: float) -> bool:
        """Whether :meth:`judge` calls a candidate at ``similarity`` a plain miss with no
        work (under the threshold or the scorer's band)."""
        if not self.scored:
            return similarity < self.threshold
        decision, floor = self.decision, self.floor
        below_floor = floor is not None and similarity < floor
        return decision is None or below_floor or similarity < decision.search_threshold

    def scores(self, question: str | None, similarity: float) -> bool:
        """Whether :meth:`judge` runs the scorer's model (blocking work: a worker thread)."""
        decision = self.decision
        return decision is not None and question is not None and decision.needs_score(similarity)

    def blocks(self, prompt: str, question: str | None, similarity: float) -> bool:
        """Whether :meth:`judge` does blocking work for this candidate (the scorer's model, or
        a guard that embeds): callers on the event loop run it in a worker thread."""
        if self.scores(question, similarity):
            return True
        verifier = self.verifier
        return (
            question is not None
            and not self.scored
            and not self.under(similarity)
            and isinstance(verifier, EmbeddingVerifier)
            and verifier.embeds(prompt, question)
        )

    def judge(self, prompt: str, question: str | None, similarity: float) -> Verdict:
        """May an answer to ``question`` (found at cosine ``similarity``) serve ``prompt``?"""
        if self.scored:
            return self._scored(prompt, question, similarity)
        if similarity < self.threshold:
            return Verdict(hit=False)
        # Without a stored question (store_question=False) there is nothing to check against.
        if question is not None and not self.verifier.verify(prompt, question):
            return Verdict(hit=False, rejected=True)
        return Verdict(hit=True)

    def _scored(self, prompt: str, question: str | None, similarity: float) -> Verdict:
        decision = self.decision
        if decision is None or (self.floor is not None and similarity < self.floor):
            return Verdict(hit=False)
        result = decision.decide(prompt, question, similarity)
        vetoed = result.outcome == "vetoed"  # Outcome.VETOED: the scorer file's guard rejected
        return Verdict(hit=result.hit, rejected=vetoed, score=result.score, outcome=result.outcome)


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


class GuardedRule(Rule, Protocol):
    """A lane's rule with its answer guard (a :class:`SemanticTier`)."""

    @property
    def verifier(self) -> HitVerifier: ...


class PerCallRule:
    """The hit rule with this call's ``threshold`` (a hit when cosine >= it) on top of
    ``lane``'s: a candidate must pass both; ``looser``: the call's threshold replaces the
    lane's rule by the plain cosine rule with the lane's answer guard (never a calibrated
    scorer: its guarantee is for the served rule). Which candidates are judged is
    :func:`choose`'s."""

    def __init__(self, lane: GuardedRule, threshold: float | None, *, looser: bool) -> None:
        self._lane = lane
        self._threshold = threshold
        self._loose: OneCandidate | None = None
        if looser and threshold is not None:
            self._loose = OneCandidate(
                threshold=threshold, floor=None, verifier=lane.verifier, decision=None, scored=False
            )

    @property
    def extra_candidates(self) -> int:
        return self._lane.extra_candidates

    def lane(self, text: str | None) -> PerCallRule:
        return self

    def under(self, similarity: float, namespace: str) -> bool:
        if self._loose is not None:
            return self._loose.under(similarity)
        return self._stricter(similarity) or self._lane.under(similarity, namespace)

    def judge(
        self, prompt: str, question: str | None, similarity: float, namespace: str
    ) -> Verdict:
        if self._loose is not None:
            return self._loose.judge(prompt, question, similarity)
        if self._stricter(similarity):
            return Verdict(hit=False)
        return self._lane.judge(prompt, question, similarity, namespace)

    async def ajudge(
        self, prompt: str, question: str | None, similarity: float, namespace: str
    ) -> Verdict:
        if self._loose is not None or self._stricter(similarity):
            return self.judge(prompt, question, similarity, namespace)
        return await self._lane.ajudge(prompt, question, similarity, namespace)

    def _stricter(self, similarity: float) -> bool:
        """Under this call's threshold."""
        return self._threshold is not None and similarity < self._threshold
