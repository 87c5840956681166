"""``semcache compress-eval`` offline: the loopback fake server answers, rewrites and judges."""

from __future__ import annotations

import json

import pytest

from semcache.cli import main
from semcache.compress import RuleCompressor
from semcache.compress.ab import ABRunner, Prompt, load_prompts, summarise
from semcache.compress.judge import parse_verdict
from semcache.compress.testing import fake_llm_responder
from semcache.errors import ConfigError
from semcache.testing import FakeOpenAIServer, hash_embedding

VERBOSE = (
    "Hi there! I hope you're doing well. I want you to summarise the report in 3 bullet "
    "points. Please note that the report covers 2024. Please make sure you do not invent "
    "numbers. Again, do not invent numbers. Thanks in advance!"
)


class HashEmbedder:
    """A tiny Embedder double (bag-of-words hashing), so the test loads no model."""

    name, dim = "hash", 64

    def embed(self, texts):
        import numpy as np

        return np.asarray([hash_embedding(t, 64) for t in texts], dtype=np.float32)


@pytest.fixture
def prompts_file(tmp_path):
    path = tmp_path / "prompts.jsonl"
    rows = [
        {
            "id": "v",
            "lang": "en",
            "verbose": True,
            "prompt": VERBOSE,
            "details": [{"kind": "number", "text": "3 bullet points"}],
        },
        {
            "id": "p",
            "lang": "en",
            "verbose": False,
            "messages": [{"role": "user", "content": "Summarise the report in 3 bullet points."}],
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


async def test_runner_sends_both_versions_to_the_same_model(prompts_file) -> None:
    with FakeOpenAIServer(responder=fake_llm_responder()) as server:
        runner = ABRunner(
            RuleCompressor(min_tokens=0),
            model="openai/gpt-4o-mini",
            embedder=HashEmbedder(),
            judge="openai/gpt-4o",
            completion_kwargs={"api_base": server.api_base, "api_key": "sk-x"},
        )
        results = await runner.run(load_prompts(prompts_file))
        models = [r["model"] for r in server.requests]
    verbose, plain = results
    assert verbose.used and not plain.used and plain.refused == "nothing_removed"
    assert verbose.tokens_after < verbose.tokens_before
    assert verbose.similarity == pytest.approx(1.0) and verbose.verdict == "same"
    assert verbose.details_lost == ()
    assert models.count("gpt-4o-mini") == 3 and models.count("gpt-4o") == 1
    summary = summarise(results)
    assert (summary.prompts, summary.used, summary.let_through) == (2, 1, 0)
    assert summary.judged_same == 1 and 0 < summary.saved_ratio < 1


async def test_a_lost_listed_detail_is_reported_as_let_through() -> None:
    class Dropper:
        name = "dropper"

        async def compress(self, messages, *, model):
            from semcache.compress import Compressed

            new = [{"role": "user", "content": "Summarise the report."}]
            return Compressed(new, 20, 5, "dropper")

    prompt = Prompt(
        "x", ({"role": "user", "content": VERBOSE},), details=(("number", "3 bullet points"),)
    )
    with FakeOpenAIServer(responder=fake_llm_responder()) as server:
        kwargs = {"api_base": server.api_base, "api_key": "sk-x"}
        runner = ABRunner(Dropper(), model="openai/gpt-4o-mini", completion_kwargs=kwargs)
        [result] = await runner.run([prompt])
    assert result.details_lost == ("number:3 bullet points",)
    assert summarise([result]).let_through == 1


def test_cli_end_to_end_writes_results_and_plot(prompts_file, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=fake_llm_responder()) as server:
        status = main(
            [
                "compress-eval",
                "--data",
                str(prompts_file),
                "--model",
                "openai/gpt-4o-mini",
                "--judge",
                "openai/gpt-4o-mini",
                "--rewrite-model",
                "openai/gpt-4o-mini",
                "--mode",
                "chain",
                "--api-base",
                server.api_base,
                "--api-key",
                "sk-x",
                "--embedder",
                "none",
                "--out",
                str(out),
            ]
        )
    assert status == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["v", "p"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["all"]["prompts"] == 2
    assert (out / "compress_eval.png").stat().st_size > 1000
    assert "compress-eval" in capsys.readouterr().out


def test_cli_bad_data_is_exit_2(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n')
    assert main(["compress-eval", "--data", str(bad), "--model", "m", "--embedder", "none"]) == 2
    assert main(["compress-eval", "--model", "m"]) == 2


def test_load_prompts_names_the_bad_line(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "ok"}\nnot json\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl:2"):
        load_prompts(bad)


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("SAME", "same"),
        ("same.", "same"),
        ("**DIFFERENT**", "different"),
        ("", "unclear"),
        ("Maybe", "unclear"),
    ],
)
def test_parse_verdict(reply: str, verdict: str) -> None:
    assert parse_verdict(reply) == verdict
