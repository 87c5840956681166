"""Shadow verification: sampled semantic hits re-asked in the background, never delaying the
caller, bounded, counted, and never stored; the judges."""

from __future__ import annotations

import asyncio
import random
import time

import pytest
from tuning_helpers import OTHER, PARAPHRASE, QUESTION, ask, city_answer, make_cache

from semcache import cache_info
from semcache.runtime.failopen import FailOpen
from semcache.stats import Stats
from semcache.testing import FakeUpstream
from semcache.tuning.compare import EmbeddingJudge, LLMJudge, same_text
from semcache.tuning.records import Served, Source
from semcache.tuning.sampling import Sampler, SamplingPolicy
from semcache.tuning.shadow import ShadowVerifier

ALWAYS = {"sample_rate": 1.0, "seed": 0, "answer_similarity": 0.9}


def test_a_false_hit_is_caught_labeled_and_counted():
    cache, upstream, store = make_cache(verify=ALWAYS)
    with cache:
        ask(cache, QUESTION)
        cache.flush()
        response = ask(cache, OTHER)  # 'spain' served France's answer: a false hit
        assert cache_info(response).tier == "semantic"
        assert response.choices[0].message.content == "Paris."
        cache.drain_tuning()
        assert upstream.call_count == 2  # the question, then the shadow call
        [pair] = cache.labeled_pairs()
        assert (pair.text_a, pair.text_b, pair.label) == (OTHER, QUESTION, 0)
        assert pair.source is Source.SHADOW and pair.sample_probability == 1.0
        t = cache.stats().tuning
        assert t is not None
        assert (t.shadow_calls, t.shadow_disagree, t.shadow_agree) == (1, 1, 0)
        assert t.shadow_tokens > 0
        est = t.estimates["default"]
        assert est.rate == 1.0 and est.verdicts == 1 and est.alert
        assert store.count() == 1  # the fresh answer was not stored


def test_an_agreeing_answer_is_a_right_label():
    cache, _, _ = make_cache(verify=ALWAYS)
    with cache:
        ask(cache, QUESTION)
        cache.flush()
        ask(cache, PARAPHRASE)
        cache.drain_tuning()
        assert [p.label for p in cache.labeled_pairs()] == [1]
        assert cache.stats().tuning.estimates["default"].rate == 0.0


def test_the_caller_gets_the_cached_answer_at_cache_speed():
    slow = FakeUpstream(city_answer)
    cache, _, _ = make_cache(upstream=slow, verify=ALWAYS)
    with cache:
        ask(cache, QUESTION)
        cache.flush()
        slow.delay_s = 1.0
        started = time.perf_counter()
        response = ask(cache, PARAPHRASE)
        elapsed = time.perf_counter() - started
        assert cache_info(response).tier == "semantic"
        assert elapsed < 0.5  # the shadow call (1 s) runs behind
        cache.drain_tuning()
        assert slow.call_count == 2


def test_sampling_off_makes_no_shadow_call():
    cache, upstream, _ = make_cache()
    with cache:
        ask(cache, QUESTION)
        cache.flush()
        ask(cache, PARAPHRASE)
        cache.drain_tuning()
        assert upstream.call_count == 1 and cache.labeled_pairs() == []


def test_a_failed_shadow_call_is_counted_and_records_nothing():
    cache, upstream, _ = make_cache(verify=ALWAYS)
    with cache:
        ask(cache, QUESTION)
        cache.flush()
        upstream.fail_next.append(RuntimeError("upstream down"))
        assert cache_info(ask(cache, PARAPHRASE)).tier == "semantic"
        cache.drain_tuning()
        assert cache.stats().errors.get("shadow_verify") == 1
        assert cache.labeled_pairs() == []


def _served(i: int) -> Served:
    return Served(f"id{i}", "t", "ns", "s", f"k{i}", f"q{i}", "question", 0.9, None, 0.0)


class _Agree:
    async def judge(self, question: str, cached: str, fresh: str):
        from semcache.tuning.compare import Judgement

        return Judgement(True)


async def test_concurrency_and_pending_are_bounded_and_close_cancels():
    upstream = FakeUpstream(lambda p: "x", delay_s=0.2)
    stats = Stats()
    verdicts: list[bool] = []

    async def on_verdict(served, wrong, probability):
        verdicts.append(wrong)

    shadow = ShadowVerifier(
        upstream,
        _Agree(),
        Sampler(SamplingPolicy(1.0), random.Random(0)),
        on_verdict,
        FailOpen(stats, timeout_s=5.0),
        stats,
        max_concurrency=2,
        max_pending=3,
    )
    for i in range(5):
        shadow.consider(_served(i), {"model": "m", "messages": []}, lambda: "x", 0.8)
    assert shadow.pending == 3
    assert stats.snapshot().counts["verify_skipped"] == 2
    await asyncio.sleep(0.05)
    assert upstream.call_count == 2  # the third waits for a slot
    await shadow.close(0.0)  # cancels what is still running
    assert shadow.pending == 0 and verdicts == []


async def test_close_waits_for_running_checks_within_its_timeout():
    upstream = FakeUpstream(lambda p: "x", delay_s=0.05)
    stats = Stats()
    verdicts: list[bool] = []

    async def on_verdict(served, wrong, probability):
        verdicts.append(wrong)

    shadow = ShadowVerifier(
        upstream,
        _Agree(),
        Sampler(SamplingPolicy(1.0), random.Random(0)),
        on_verdict,
        FailOpen(stats, timeout_s=5.0),
        stats,
        max_concurrency=4,
        max_pending=4,
    )
    shadow.consider(_served(0), {"model": "m", "messages": []}, lambda: "x", 0.8)
    await shadow.close(5.0)
    assert verdicts == [False]


async def test_embedding_judge():
    async def embed(text: str):
        import numpy as np

        return np.array([1.0, 0.0]) if "paris" in text.lower() else np.array([0.0, 1.0])

    judge = EmbeddingJudge(embed, min_cosine=0.9)
    assert (await judge.judge("q", "Paris.", " Paris. ")).agree  # same text
    assert (await judge.judge("q", "Paris.", "It is Paris")).agree
    assert not (await judge.judge("q", "Paris.", "Madrid.")).agree
    assert same_text("a  b\n", "a b")


@pytest.mark.parametrize(("reply", "agree"), [("YES", True), ("No.", False), ("maybe", None)])
async def test_llm_judge_through_litellm(reply, agree):
    judge = LLMJudge("gpt-4o-mini", params={"mock_response": reply})
    judgement = await judge.judge("capital of France?", "Paris.", "The capital is Paris.")
    assert judgement.agree is agree
    assert judgement.tokens > 0


@pytest.mark.parametrize("rate", [0.0, 0.25])
def test_the_loop_is_built_with_its_verifier(rate: float):
    """The composition root hands the verifier to the loop's constructor: there is no
    window in which a loop exists without it, and it cannot be swapped afterwards."""
    from semcache import CacheSettings
    from semcache.compose import assemble

    parts = assemble(
        CacheSettings(store={"backend": "none"}, verify={"sample_rate": rate}),
        upstream=FakeUpstream(),
    )
    assert (parts.tuning.shadow is not None) == (rate > 0)
    with pytest.raises(AttributeError):
        parts.tuning.shadow = None  # type: ignore[misc]
