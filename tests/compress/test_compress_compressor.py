"""CheckedCompressor and its three shapes: min_tokens, roles, refusals, chain fallback."""

from __future__ import annotations

import pytest

from semcache.compress import (
    ChainCompressor,
    CheckedCompressor,
    ModelCompressor,
    Refusal,
    Rewrite,
    RuleCompressor,
)
from semcache.compress.testing import fake_llm_responder
from semcache.testing import FakeOpenAIServer

VERBOSE = (
    "Hi there! I hope you're doing well. I want you to summarise the report in 3 bullet "
    "points. Please note that the report covers 2024. You need to answer in English. "
    "Please make sure you do not invent numbers in the summary. Again, do not invent "
    "numbers in the summary. Thanks in advance!"
)


class Scripted:
    """A Rewriter double answering a fixed text (or refusal) and recording its inputs."""

    def __init__(self, answer: Rewrite, name: str = "scripted") -> None:
        self.answer, self._name, self.seen = answer, name, []

    @property
    def name(self) -> str:
        return self._name

    async def rewrite(self, text: str, *, model: str) -> Rewrite:
        self.seen.append(text)
        return self.answer


async def test_rules_shorten_a_long_message_and_keep_the_callers_list(counter) -> None:
    messages = [{"role": "user", "content": VERBOSE}]
    result = await RuleCompressor(min_tokens=10, counter=counter).compress(messages, model="m")
    assert result.used and result.refused is None
    assert result.tokens_after < result.tokens_before
    assert result.messages[0]["content"].startswith("Summarise the report in 3 bullet points.")
    assert messages == [{"role": "user", "content": VERBOSE}]  # not mutated


async def test_below_min_tokens_nothing_happens(counter) -> None:
    messages = [{"role": "user", "content": VERBOSE}]
    result = await RuleCompressor(min_tokens=10_000, counter=counter).compress(messages, model="m")
    assert result.refused is Refusal.BELOW_MIN_TOKENS
    assert result.messages is messages and result.saved_tokens == 0


async def test_only_chosen_roles_and_string_contents_are_touched(counter) -> None:
    messages = [
        {"role": "assistant", "content": VERBOSE},
        {"role": "user", "content": [{"type": "text", "text": VERBOSE}]},
    ]
    result = await RuleCompressor(min_tokens=0, counter=counter).compress(messages, model="m")
    assert result.refused is Refusal.BELOW_MIN_TOKENS and result.messages is messages


async def test_a_rewrite_that_loses_a_detail_is_refused(counter) -> None:
    lossy = Scripted(Rewrite("Summarise the report."))
    compressor = CheckedCompressor([lossy], name="t", min_tokens=0, counter=counter)
    result = await compressor.compress([{"role": "user", "content": VERBOSE}], model="m")
    assert result.refused is Refusal.LOST_DETAIL
    assert result.rejections[0].reason is Refusal.LOST_DETAIL
    assert "number" in result.rejections[0].lost and "negation" in result.rejections[0].lost


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (Rewrite("   "), Refusal.EMPTY),
        (Rewrite(VERBOSE + " And more."), Refusal.NOT_SHORTER),
        (Rewrite(None, Refusal.MODEL_ERROR, note="Timeout"), Refusal.MODEL_ERROR),
    ],
)
async def test_unusable_rewrites_are_refused(counter, answer: Rewrite, reason: Refusal) -> None:
    compressor = CheckedCompressor([Scripted(answer)], name="t", min_tokens=0, counter=counter)
    result = await compressor.compress([{"role": "user", "content": VERBOSE}], model="m")
    assert result.refused is reason and not result.used


async def test_chain_falls_back_to_the_rules_output(counter) -> None:
    lossy = Scripted(Rewrite("Summarise."), name="model")
    compressor = CheckedCompressor(
        [RuleCompressor(min_tokens=0)._rewriters[0], lossy],
        name="chain",
        min_tokens=0,
        counter=counter,
    )
    result = await compressor.compress([{"role": "user", "content": VERBOSE}], model="m")
    assert result.used
    assert lossy.seen[0] == result.messages[0]["content"]  # the model got the rules' output
    assert [r.reason for r in result.rejections] == [Refusal.LOST_DETAIL]


async def test_model_compressor_through_a_real_litellm_call(counter) -> None:
    with FakeOpenAIServer(responder=fake_llm_responder(drop_every=10_000)) as server:
        compressor = ModelCompressor(
            "openai/gpt-4o-mini",
            min_tokens=0,
            counter=counter,
            model_options={"completion_kwargs": {"api_base": server.api_base, "api_key": "sk-x"}},
        )
        text = "Hi. Summarise the report in 3 points. Summarise the report in 3 points."
        result = await compressor.compress([{"role": "user", "content": text}], model="m")
        request = server.requests[-1]
    assert result.used, result.rejections
    assert result.messages[0]["content"] == "Hi. Summarise report in 3 points."
    assert request["messages"][0]["content"].startswith("You compress prompts.")
    assert request["temperature"] == 0 and request["max_tokens"] >= 16
    assert result.overhead_tokens > 0


async def test_model_errors_and_truncation_are_refusals_not_exceptions(counter) -> None:
    with FakeOpenAIServer(responder=lambda body: "") as server:
        options = {"completion_kwargs": {"api_base": server.api_base, "api_key": "sk-x"}}
        compressor = ModelCompressor(
            "openai/gpt-4o-mini", min_tokens=0, counter=counter, model_options=options
        )
        messages = [{"role": "user", "content": VERBOSE}]
        assert (await compressor.compress(messages, model="m")).refused is Refusal.EMPTY
        server.fail_next = [400]
        failed = await compressor.compress(messages, model="m")
    assert failed.refused is Refusal.MODEL_ERROR
    assert failed.rejections[0].note == "BadRequestError"


async def test_chain_with_the_fake_rewrite_model(counter) -> None:
    with FakeOpenAIServer(responder=fake_llm_responder()) as server:
        options = {"completion_kwargs": {"api_base": server.api_base, "api_key": "sk-x"}}
        chain = ChainCompressor(
            "openai/gpt-4o-mini", min_tokens=0, counter=counter, model_options=options
        )
        result = await chain.compress([{"role": "user", "content": VERBOSE}], model="m")
    assert result.used and result.compressor == "chain"
    assert "3 bullet points" in result.messages[0]["content"]
