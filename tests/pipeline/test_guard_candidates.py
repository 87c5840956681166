"""``semantic.guard_candidates``: a near question the guard vetoes does not hide a paraphrase.

The nearest stored question differs from the new one in one detail (a dose), so the answer
guard vetoes it; the next nearest is a paraphrase over the threshold and is served. Bag-of-
words vectors (``FakeEmbedder``) make the order certain: the vetoed one shares every word.
"""

from __future__ import annotations

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

NEAR = "can i take 800mg of ibuprofen in a single dose"  # differs in the dose only
PARAPHRASE = "can i take 400mg of ibuprofen in one single dose please"
NEGATED = "can i not take 400mg of ibuprofen in a single dose"  # nearer still, negated
QUESTION = "can i take 400mg of ibuprofen in a single dose"


def make(guard_candidates: int, threshold: float = 0.7, **semantic) -> SemanticCache:
    settings = CacheSettings(
        semantic={"threshold": threshold, "guard_candidates": guard_candidates, **semantic},
        store={"backend": "edge"},
    )
    return SemanticCache(
        settings, embedder=FakeEmbedder(dim=256), store=InMemoryStore(), upstream=FakeUpstream()
    )


def ask(cache: SemanticCache, text: str):
    return cache.completion(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])


def fill(cache: SemanticCache, *texts: str) -> dict[str, str]:
    answers = {t: ask(cache, t).choices[0].message.content for t in texts}
    cache.flush()
    return answers


def test_the_next_candidate_is_served_when_the_guard_vetoes_the_nearest():
    with make(3) as cache:
        answers = fill(cache, NEAR, PARAPHRASE)
        response = ask(cache, QUESTION)
        info = cache_info(response)
        assert info.tier == "semantic"
        assert response.choices[0].message.content == answers[PARAPHRASE]
        # the reported similarity is the served candidate's, below the vetoed nearest's
        assert info.similarity is not None and info.nearest_similarity is not None
        assert info.similarity < info.nearest_similarity
        counts = cache.stats().counts
        assert counts["verifier_next_hits"] == 1


def test_nearest_only_when_set_to_zero():
    with make(0) as cache:
        fill(cache, NEAR, PARAPHRASE)
        info = cache_info(ask(cache, QUESTION))
        assert info.tier == "miss" and info.miss_reason == "rejected"


def test_a_next_candidate_under_the_threshold_is_never_served():
    with make(3, threshold=0.88) as cache:  # cosines: near 0.90, paraphrase 0.86
        fill(cache, NEAR, PARAPHRASE)
        info = cache_info(ask(cache, QUESTION))
        assert info.tier == "miss" and info.miss_reason == "rejected"


def test_a_next_candidate_the_guard_also_vetoes_is_not_served():
    with make(3) as cache:  # negated 0.95 and near 0.90: both vetoed
        fill(cache, NEAR, NEGATED)
        info = cache_info(ask(cache, QUESTION))
        assert info.tier == "miss" and info.miss_reason == "rejected"


@pytest.mark.parametrize(("extra", "served"), [(1, False), (2, True)])
def test_the_setting_says_how_many_more_are_judged(extra, served):
    with make(extra) as cache:  # negated, then near, then the paraphrase
        answers = fill(cache, NEGATED, NEAR, PARAPHRASE)
        response = ask(cache, QUESTION)
        assert (cache_info(response).tier == "semantic") is served
        if served:
            assert response.choices[0].message.content == answers[PARAPHRASE]


@pytest.mark.parametrize("value", [-1, 33])
def test_the_setting_is_bounded(value):
    with pytest.raises(Exception, match="guard_candidates"):
        CacheSettings(semantic={"guard_candidates": value})


def test_with_a_scorer_only_the_nearest_is_searched():
    """The calibrated guarantee is for the nearest candidate's rule: no others to judge."""
    import asyncio
    import time

    from semcache.pipeline.semantic_tier import SemanticTier
    from semcache.scoring.decide import ScoreBand, ScoredDecision
    from semcache.stores.base import Entry

    class Half:
        name = "half"

        def score(self, query: str, candidate: str, similarity: float) -> float:
            return 0.5

    embedder = FakeEmbedder(dim=256)
    store = InMemoryStore()

    def tier(scorer: bool) -> SemanticTier:
        decision = ScoredDecision(Half(), 0.5, ScoreBand(0.0, 2.0))
        return SemanticTier(
            embedder=lambda: embedder,
            store=lambda: store,
            verifier=FakeEmbedderVerifier(),
            threshold=0.5,
            scorer=(lambda: decision) if scorer else None,
            guard_candidates=3,
        )

    async def others(scorer: bool) -> int:
        t = tier(scorer)
        await t.setup()
        now = time.time()
        entries = [
            Entry(
                f"k{i}",
                "t",
                "default",
                "m",
                "s",
                "{}",
                now,
                now + 60,
                embedder.name,
                text,
                embedder.embed([text])[0],
            )
            for i, text in enumerate((NEAR, PARAPHRASE, NEGATED))
        ]
        store.upsert(entries)
        found = await t.search(QUESTION, tenant="t", namespace="default", scope="s", now=now)
        return len(found.others)

    assert asyncio.run(others(scorer=False)) == 2
    assert asyncio.run(others(scorer=True)) == 0


class FakeEmbedderVerifier:
    name = "accept"

    def verify(self, query: str, candidate: str) -> bool:
        return True
