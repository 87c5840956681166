"""The one yes/no reader and the one pricing function both LLM judges share."""

from __future__ import annotations

import asyncio

import litellm
import pytest

from semcache.core.answer import response_cost
from semcache.core.llm_reply import price, reply_text, token_usage, yes_no
from semcache.scoring.judge import LLMJudgeScorer
from semcache.tuning.compare import LLMJudge

UNMAPPED = "openai/no-such-model-in-the-price-map"


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("yes", True),
        (" Yes.", True),
        ("YES, they agree", True),
        ("**Yes**", True),
        ('"yes"', True),
        ("no", False),
        ("No.", False),
        ("NO", False),
        ("maybe", None),
        ("", None),
        (None, None),
        ("I think yes", None),
    ],
)
def test_yes_no(text, verdict):
    assert yes_no(text) is verdict


def _mock(model: str, answer: str = "yes"):
    return litellm.completion(
        model=model, messages=[{"role": "user", "content": "q"}], mock_response=answer
    )


def test_price_is_none_only_when_litellm_has_no_price():
    priced = _mock("gpt-4o-mini")
    assert price(priced) == pytest.approx(priced._hidden_params["response_cost"]) and price(priced)
    assert price(_mock(UNMAPPED)) is None
    # a response rebuilt from a dict carries no computed cost: priced from its model and usage
    rebuilt = litellm.ModelResponse(**priced.model_dump())
    assert "response_cost" not in (rebuilt._hidden_params or {})
    assert price(rebuilt) == pytest.approx(price(priced))
    assert price(litellm.ModelResponse()) is None  # no model at all


def test_the_upstream_envelope_books_unpriced_as_zero():
    assert response_cost(_mock(UNMAPPED)) == 0.0
    assert response_cost(_mock("gpt-4o-mini")) == pytest.approx(price(_mock("gpt-4o-mini")))


def test_reply_text_and_usage():
    response = _mock("gpt-4o-mini", "No.")
    assert reply_text(response) == "No."
    prompt, completion = token_usage(response)
    assert prompt > 0 and completion > 0
    assert reply_text(litellm.ModelResponse(choices=[])) is None


def test_both_judges_read_and_price_alike():
    """Shadow verification's answer judge and the hit scorer's question judge: the same
    verdict for the same reply; an unpriced call is 0.0 in the first, apart in the second."""
    for answer, agree in (("Yes.", True), ("no", False), ("unsure", None)):
        answers = LLMJudge("gpt-4o-mini", params={"mock_response": answer})
        judgement = asyncio.run(answers.judge("q", "a", "b"))
        assert judgement.agree is agree and judgement.cost_usd > 0 and judgement.tokens > 0
        questions = LLMJudgeScorer("gpt-4o-mini", completion_kwargs={"mock_response": answer})
        assert questions.score("q", "c", 0.9) == (1.0 if agree else 0.0)
        assert questions.cost.usd == pytest.approx(judgement.cost_usd)
    unpriced = LLMJudge(UNMAPPED, params={"mock_response": "yes"})
    assert asyncio.run(unpriced.judge("q", "a", "b")).cost_usd == 0.0
    scorer = LLMJudgeScorer(UNMAPPED, completion_kwargs={"mock_response": "yes"})
    scorer.score("q", "c", 0.9)
    assert (scorer.cost.calls, scorer.cost.unpriced_calls, scorer.cost.usd) == (1, 1, 0.0)


def test_an_unroutable_model_is_priced_once_not_printed_on_every_call(capsys):
    """LiteLLM prints "Provider List" on stdout whenever it cannot route a model name; a
    streamed answer of a self-hosted model was printing it three times per call."""
    unroutable = litellm.ModelResponse(model="my-self-hosted-model")
    assert price(unroutable) is None
    capsys.readouterr()
    for _ in range(3):
        assert price(litellm.ModelResponse(model="my-self-hosted-model")) is None
    assert "Provider List" not in capsys.readouterr().out


def test_probing_an_unroutable_model_prints_nothing_and_keeps_litellms_setting(capsys):
    """Not even the first probe prints: a self-hosted model's name is no caller error, and
    the caller's own ``suppress_debug_info`` is left as it was."""
    from semcache.core.fingerprint import resolve_model

    before = litellm.suppress_debug_info
    litellm.suppress_debug_info = False
    try:
        assert price(litellm.ModelResponse(model="another-self-hosted-model")) is None
        assert resolve_model("yet-another-self-hosted-model") == (
            "unresolved/yet-another-self-hosted-model"
        )
        assert "Provider List" not in capsys.readouterr().out
        assert litellm.suppress_debug_info is False
    finally:
        litellm.suppress_debug_info = before
