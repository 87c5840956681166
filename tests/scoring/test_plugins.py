"""Optional scorer plug-ins, offline: a cross-encoder built locally, and an LLM judge asked
through LiteLLM's real client against the loopback fake upstream."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from semcache.errors import ScorerError
from semcache.scoring import HitScorer, Outcome, ScoreBand, ScoredDecision
from semcache.scoring.cross_encoder import CrossEncoderScorer
from semcache.scoring.judge import LLMJudgeScorer
from semcache.testing import FakeOpenAIServer


def test_cross_encoder_scores_with_the_models_own_predict(tiny_cross_encoder: Path):
    from sentence_transformers import CrossEncoder

    scorer = CrossEncoderScorer(str(tiny_cross_encoder))
    assert isinstance(scorer, HitScorer) and scorer.name.startswith("cross-encoder:")
    pairs = [("reset my password", "how do I reset my password"), ("a", "b")]
    expected = CrossEncoder(str(tiny_cross_encoder), device="cpu").predict(pairs)
    got = [scorer.score(q, c, 0.9) for q, c in pairs]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert got[0] != got[1]
    decision = ScoredDecision(scorer, threshold=-math.inf, band=ScoreBand(0.8, math.inf))
    assert decision.decide("a", "b", 0.9).outcome is Outcome.SCORED_HIT


def test_a_missing_cross_encoder_is_a_scorer_error(tmp_path: Path):
    with pytest.raises(ScorerError, match="cannot load cross-encoder"):
        CrossEncoderScorer(str(tmp_path / "nothing-here")).score("a", "b", 0.9)


def _judge_answer(body: dict) -> str:
    """'yes' when the two quoted questions share their last word, else 'no'."""
    text = body["messages"][-1]["content"]
    a = text.split("Question A: ")[1].split("\n")[0]
    b = text.split("Question B: ")[1].split("\n")[0]
    return "Yes." if a.split()[-1] == b.split()[-1] else "no"


def test_llm_judge_is_asked_only_inside_the_band_and_its_cost_is_counted():
    with FakeOpenAIServer(responder=_judge_answer) as server:
        judge = LLMJudgeScorer(
            "openai/gpt-4o-mini",
            completion_kwargs={"api_base": server.api_base, "api_key": "test-key"},
        )
        decision = ScoredDecision(judge, threshold=0.5, band=ScoreBand(0.85, math.inf))
        assert decision.decide("cancel my order", "please cancel my order", 0.9).hit
        refused = decision.decide("cancel my order", "cancel my subscription", 0.9)
        assert (refused.hit, refused.outcome, refused.score) == (False, Outcome.SCORED_MISS, 0.0)
        assert not decision.decide("cancel my order", "weather today", 0.3).hit  # not asked
        assert server.chat_calls == 2
        assert judge.cost.calls == 2 and judge.cost.prompt_tokens > 0
        assert judge.cost.usd > 0 or judge.cost.unpriced_calls == 2
        sent = server.requests[-1]
        assert sent["temperature"] == 0 and sent["max_tokens"] == 3


def test_llm_judge_upstream_failure_is_a_scorer_error():
    with FakeOpenAIServer(responder=_judge_answer) as server:
        server.fail_next.extend([500, 500, 500])
        judge = LLMJudgeScorer(
            "openai/gpt-4o-mini",
            completion_kwargs={
                "api_base": server.api_base,
                "api_key": "k",
                "num_retries": 0,
                "max_retries": 0,
            },
        )
        with pytest.raises(ScorerError, match="judge"):
            judge.score("a", "b", 0.9)
