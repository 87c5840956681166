"""Embedders say what they read; the semantic tier never matches a question outside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.embedders import load_embedder
from semcache.embedders.readability import (
    ANY,
    E5_MULTILINGUAL,
    ENGLISH,
    USE_MULTILINGUAL,
    readability_of,
)
from semcache.embedders.registry import readability_for
from semcache.testing import FakeUpstream, InMemoryStore

PAIRS = Path(__file__).parents[2] / "benchmarks" / "data" / "multilingual_pairs.jsonl"
ROWS = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
LANGS = ("zh", "ja", "ko", "ar", "hi", "th", "ru")


def test_the_pair_file_has_fifty_unrelated_ten_hard_and_twenty_paraphrase_pairs_per_language():
    for lang in LANGS:
        rows = [r for r in ROWS if r["lang"] == lang]
        labels = [r["label"] for r in rows]
        assert labels.count("unrelated") >= 50 and labels.count("paraphrase") >= 20
        assert sum(bool(r.get("hard")) and r["label"] == "unrelated" for r in rows) >= 10
        assert len({(r["a"], r["b"]) for r in rows}) == len(rows)  # no pair twice


@pytest.mark.parametrize("lang", LANGS)
def test_declared_scripts(lang):
    text = next(r["a"] for r in ROWS if r["lang"] == lang)
    assert not ENGLISH.reads(text)
    assert E5_MULTILINGUAL.reads(text) and ANY.reads(text)
    assert USE_MULTILINGUAL.reads(text) is (lang != "hi")  # USE has no Hindi


def test_english_with_a_little_else_is_read_and_mostly_foreign_is_not():
    assert ENGLISH.reads("How do I reset my password?")
    assert ENGLISH.reads("Où est la gare, s'il vous plaît ?")  # accented Latin
    assert ENGLISH.reads("Explain the β coefficient of a linear regression model")
    assert not ENGLISH.reads("What does 你好世界 mean?")  # 4 of 15 letters are Han
    assert ENGLISH.reads("12345 ?! 🙂")  # no letters


def test_each_embedder_declares_its_scripts_and_the_registry_agrees():
    for name, expected in [
        ("minilm", ENGLISH),
        ("use-multilingual", USE_MULTILINGUAL),
        ("e5-small-4bit", E5_MULTILINGUAL),
        ("org/other-model", ANY),
    ]:
        assert readability_of(load_embedder(name)) is expected
        assert readability_for(name) is expected
    assert readability_of(object()) is ANY


class Undeclared:
    """MiniLM without its declaration: the cache before readability existed."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts):
        return self._inner.embed(texts)


def ask(cache, text, tenant):
    return cache.completion(
        model="gpt-4o-mini", messages=[{"role": "user", "content": text}], tenant=tenant
    )


def wrong_answers(embedder, pairs) -> tuple[int, SemanticCache]:
    settings = CacheSettings(store={"backend": "edge"})
    cache = SemanticCache(
        settings, embedder=embedder, store=InMemoryStore(), upstream=FakeUpstream()
    )
    wrong = 0
    for i, row in enumerate(pairs):
        stored = ask(cache, row["a"], f"t{i}").choices[0].message.content
        cache.flush()
        wrong += ask(cache, row["b"], f"t{i}").choices[0].message.content == stored
    return wrong, cache


def test_unreadable_questions_are_exact_only_and_never_served_another_answer(minilm):
    pairs = [r for lang in LANGS for r in [x for x in ROWS if x["lang"] == lang][:3]]
    before, old = wrong_answers(Undeclared(minilm), pairs[:3])
    old.close()
    assert before >= 1  # the bug: MiniLM serves 怎么重置密码？'s answer to 怎么删除账户？
    wrong, cache = wrong_answers(minilm, pairs)
    try:
        assert wrong == 0
        assert cache.stats().counts["unreadable"] == 2 * len(pairs)
        again = ask(cache, pairs[0]["a"], "t0")  # an exact repeat is still served
        info = cache_info(again)
        assert info.tier == "exact"
        fresh = cache_info(ask(cache, "怎么联系客服？", "t0"))
        assert fresh.tier == "miss" and fresh.unreadable and fresh.nearest_similarity is None
        assert fresh.miss_reason == "unreadable"
    finally:
        cache.close()
