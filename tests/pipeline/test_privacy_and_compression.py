"""The private-data gate and prompt compression as stages of the real request path."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.privacy.corpus import load_privacy_corpus
from semcache.stats import Tier
from semcache.testing import FakeEmbedder, FakeUpstream

CARD = "4111 1111 1111 1111"  # a Luhn-valid test card number


def ask(content: str, **extra):
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}], **extra}


def make(tmp_path: Path, upstream: FakeUpstream, **sections) -> SemanticCache:
    settings = CacheSettings(
        semantic={"threshold": 0.5, "verifier": "none", "max_batch_wait_ms": 0},
        store={"backend": "edge", "path": str(tmp_path / "store")},
        **sections,
    )
    cache = SemanticCache(settings, embedder=FakeEmbedder(), upstream=upstream)
    cache.ready()  # the store opens in the background: its counts are known once it is up
    return cache


def test_a_private_question_is_answered_but_never_stored_by_default(tmp_path):
    upstream = FakeUpstream()
    with make(tmp_path, upstream) as cache:
        question = ask(f"Why was my card {CARD} declined yesterday?")
        info = cache_info(cache.completion(**question))
        assert info.tier == Tier.MISS and info.private_data == ("card",)
        cache.flush()
        assert cache_info(cache.completion(**question)).tier == Tier.MISS
        assert upstream.call_count == 2
        stats = cache.stats()
        assert stats.store_entries == 0 and stats.memory_entries == 0
        assert stats.privacy is not None and stats.privacy.findings == {"card": 2}
        assert stats.privacy.not_stored == 2


def test_a_private_question_is_never_served_from_the_semantic_tier(tmp_path):
    upstream = FakeUpstream()
    with make(tmp_path, upstream, privacy={"policy": "off"}) as cache:
        cache.completion(**ask(f"Why was my card {CARD} declined yesterday?"))
        cache.flush()
        paraphrase = ask(f"why was my card {CARD} declined yesterday please")
        assert cache_info(cache.completion(**paraphrase)).tier == Tier.SEMANTIC
        strict = ask(
            f"why was my card {CARD} declined yesterday please", cache={"privacy": "no-store"}
        )
        assert cache_info(cache.completion(**strict)).tier == Tier.MISS


def test_a_request_may_tighten_but_not_loosen_its_namespace_policy(tmp_path):
    upstream = FakeUpstream()
    with make(tmp_path, upstream) as cache:
        loosened = ask(f"card {CARD} declined", cache={"privacy": "off"})
        cache.completion(**loosened)
        cache.flush()
        assert cache.stats().store_entries == 0  # the default no-store stood


def test_an_answer_with_private_data_is_not_stored(tmp_path):
    upstream = FakeUpstream(answer=lambda params: "Write to alice.smith@example.org for refunds.")
    with make(tmp_path, upstream) as cache:
        cache.completion(**ask("Who handles refunds?"))
        cache.flush()
        assert cache_info(cache.completion(**ask("Who handles refunds?"))).tier == Tier.MISS
        assert cache.stats().privacy.answers_not_stored == 2


def test_redact_stores_masked_text_and_still_answers_exact_repeats(tmp_path):
    upstream = FakeUpstream()  # echoes the question into the answer
    with make(tmp_path, upstream, privacy={"policy": "redact"}) as cache:
        question = ask(f"Why was my card {CARD} declined yesterday?")
        fresh = cache.completion(**question)
        assert CARD in fresh.choices[0].message.content  # this caller gets the real answer
        cache.flush()
        repeat = cache.completion(**question)
        assert cache_info(repeat).tier == Tier.EXACT
        assert CARD not in repeat.choices[0].message.content
        assert "[CARD]" in repeat.choices[0].message.content
        [entry] = cache.recent_entries()
        assert entry.question is not None and CARD not in entry.question
        other = ask("Why was my card 5500 0000 0000 0004 declined yesterday?")
        assert cache_info(cache.completion(**other)).tier == Tier.MISS  # masked texts never match


@pytest.mark.parametrize("policy", ["no-store", "redact"])
def test_no_private_span_ever_reaches_the_store_directory(tmp_path, policy):
    """Randomized: private prompts (the shipped corpus) through the cache, then every byte of
    the store directory is searched for every private span."""
    rng = random.Random(7)
    examples = [e for e in load_privacy_corpus() if e["spans"]]
    sample = rng.sample(examples, 60)
    upstream = FakeUpstream()
    with make(tmp_path, upstream, privacy={"policy": policy}) as cache:
        for example in sample:
            content = example["text"]
            if rng.random() < 0.3:
                content = f"{content}\nPlease answer briefly."
            cache.completion(**ask(content, tenant=rng.choice(["a", "b"])))
        cache.flush()
    blobs = b"".join(p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file())
    assert blobs  # the store really wrote something (entries or at least its files)
    for example in sample:
        for start, end, _kind in example["spans"]:
            span = example["text"][start:end]
            assert span.encode() not in blobs, (example["id"], policy)


VERBOSE = (
    "Please note that I want you to act as a helpful assistant. Please note that you should "
    "answer in English. I want you to be concise. Please note that you should answer in "
    "English.\n\n\n\nWhat is the boiling point of water at sea level in Celsius?"
)


def test_compression_cuts_the_upstream_prompt_but_not_the_key(tmp_path):
    upstream = FakeUpstream()
    with make(tmp_path, upstream, compression={"mode": "rules", "min_tokens": 0}) as cache:
        first = cache.completion(**ask(VERBOSE))
        info = cache_info(first)
        assert info.tier == Tier.MISS and info.compression_saved_tokens > 0
        sent = upstream.calls[0]["messages"][0]["content"]
        assert len(sent) < len(VERBOSE)  # shorter ...
        assert "boiling point of water at sea level in Celsius" in sent  # ... details kept
        cache.flush()
        assert cache_info(cache.completion(**ask(VERBOSE))).tier == Tier.EXACT  # original key
        totals = cache.stats().compression
        assert totals is not None and totals.used == 1
        assert totals.tokens_saved == info.compression_saved_tokens


def test_compression_is_opt_in_per_namespace_and_per_request(tmp_path):
    upstream = FakeUpstream()
    sections = {"compression": {"namespace_modes": {"docs": "rules"}, "min_tokens": 0}}
    with make(tmp_path, upstream, **sections) as cache:
        cache.completion(**ask(VERBOSE, cache={"no-store": True}))
        assert upstream.calls[-1]["messages"][0]["content"] == VERBOSE  # default: off
        cache.completion(**ask(VERBOSE, cache={"namespace": "docs"}))
        assert upstream.calls[-1]["messages"][0]["content"] != VERBOSE
        cache.completion(
            **ask(VERBOSE, cache={"namespace": "docs", "compress": "off", "no-cache": True})
        )
        assert upstream.calls[-1]["messages"][0]["content"] == VERBOSE


def test_a_compressor_that_cannot_be_built_sends_the_original(tmp_path):
    upstream = FakeUpstream()
    with make(tmp_path, upstream) as cache:
        response = cache.completion(**ask(VERBOSE, cache={"compress": "model"}))  # no model set
        assert cache_info(response).tier == Tier.MISS
        assert upstream.calls[-1]["messages"][0]["content"] == VERBOSE
        assert cache.stats().errors == {"compression_setup": 1}
