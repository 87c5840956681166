"""The shipped prompt corpus: its shape, and the rules' acceptance figures on it.

Rules are deterministic, so the "done when" of issue 12 is checked here exactly: on the verbose
half rules alone cut >= 15% of input tokens (LiteLLM's gpt-4o-mini tokenizer) and no used
compression loses a listed detail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from semcache.compress import RuleCompressor, lost_details
from semcache.compress.ab import Prompt, details_lost

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    text = resources.files("semcache").joinpath("data/compress_prompts.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_shape(corpus) -> None:
    assert len(corpus) >= 200
    assert sum(r["verbose"] for r in corpus) == len(corpus) // 2
    assert {r["lang"] for r in corpus} == {"en", "zh"}
    assert {r["kind"] for r in corpus} == {
        "system_prompt",
        "support_template",
        "rag_context",
        "coding_task",
    }
    assert len({r["id"] for r in corpus}) == len(corpus)
    for record in corpus:
        text = "\n".join(m["content"] for m in record["messages"]).casefold()
        assert record["details"], record["id"]
        assert all(d["text"].casefold() in text for d in record["details"]), record["id"]


def test_the_builder_reproduces_the_shipped_file() -> None:
    script = ROOT / "scripts" / "build_compress_prompts.py"
    assert subprocess.run([sys.executable, str(script), "--check"]).returncode == 0


async def test_rules_cut_15_percent_of_the_verbose_half_and_lose_nothing(corpus) -> None:
    compressor = RuleCompressor(min_tokens=0)
    before = after = let_through = 0
    for record in corpus:
        details = tuple((d["kind"], d["text"]) for d in record["details"])
        prompt = Prompt(record["id"], tuple(record["messages"]), details=details)
        result = await compressor.compress(record["messages"], model="gpt-4o-mini")
        if result.used:
            let_through += bool(details_lost(prompt, result.messages))
            for old, new in zip(record["messages"], result.messages, strict=True):
                assert lost_details(old["content"], new["content"]) == []
        if record["verbose"]:
            before += result.tokens_before
            after += result.tokens_after
    assert let_through == 0
    assert 1 - after / before >= 0.15
