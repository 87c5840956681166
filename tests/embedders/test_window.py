"""An embedder reports what it reads; a question longer than that is never matched."""

from __future__ import annotations

import random

import numpy as np
import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.embedders import load_embedder
from semcache.embedders.window import (
    UNDECLARED,
    ByteWindow,
    TokenWindow,
    Unlimited,
    unseen,
    window_of,
)
from semcache.guard import DetailGuard, NoGuard
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

WORDS = [
    "revenue",
    "margin",
    "supplier",
    "contract",
    "region",
    "quarter",
    "customer",
    "churn",
    "pipeline",
    "forecast",
    "audit",
    "warehouse",
    "shipment",
    "invoice",
    "pricing",
    "discount",
    "renewal",
    "headcount",
    "budget",
    "variance",
    "compliance",
]
QUESTIONS = (
    "Question: what was the total revenue?",
    "Question: list every risk the report names.",
    "Question: translate the first section into German.",
    "Question: who signed the supplier contract?",
    "Question: summarise the audit findings in two sentences.",
)


def document(seed: int, lines: int = 40) -> str:
    """A long shared context: ``lines`` lines of plausible report text."""
    rng = random.Random(seed)
    return "\n".join(
        f"Line {i}: the {rng.choice(WORDS)} {rng.choice(WORDS)} moved with the "
        f"{rng.choice(WORDS)} in {rng.choice(WORDS)} {i}."
        for i in range(lines)
    )


def long_pairs(n: int) -> list[tuple[str, str]]:
    """``n`` pairs: one long document each, then two different questions."""
    pairs = []
    for seed in range(n):
        first, second = random.Random(seed).sample(QUESTIONS, 2)
        doc = document(seed)
        pairs.append((f"{doc}\n{first}", f"{doc}\n{second}"))
    return pairs


def ask(cache: SemanticCache, text: str, tenant: str = "t"):
    return cache.completion(
        model="gpt-4o-mini", messages=[{"role": "user", "content": text}], tenant=tenant
    )


class SeesAll:
    """MiniLM claiming to read everything: the cache before windows existed."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.window = Unlimited()

    def embed(self, texts):
        return self._inner.embed(texts)


def test_minilm_window_is_its_tokenizer_cut(minilm):
    window = minilm.window
    assert isinstance(window, TokenWindow) and window.tokens == 254
    text = long_pairs(1)[0][0]
    cut = window.cut(text)
    assert 0 < cut < len(text)
    whole, seen = minilm.embed([text, text[:cut]])
    assert float(whole @ seen) > 0.9999  # what lies past the cut changes nothing
    shorter = minilm.embed([text[: cut - 12]])[0]
    assert float(whole @ shorter) < 0.9999  # and the cut is not too late
    assert unseen(window, "What is the refund policy?") == ""
    assert unseen(window, text) == text[cut:]


def test_onnx_and_torch_minilm_share_one_window():
    torch_window = load_embedder("minilm", runtime="torch").window
    assert repr(load_embedder("minilm", runtime="onnx").window) == repr(torch_window)


def test_byte_window_is_a_lower_bound_in_bytes():
    window = ByteWindow(10)
    assert window.cut("short") == 5
    assert window.cut("0123456789abc") == 10
    assert window.cut("价格是多少呢") == 3  # three bytes a character: 9 of 10 bytes read
    with pytest.raises(ValueError, match="tokens"):
        ByteWindow(0)


def test_undeclared_embedders_get_the_conservative_window():
    class Bare:
        name, dim = "bare", 4

        def embed(self, texts):
            return np.ones((len(texts), 4), dtype=np.float32)

    assert window_of(Bare()) is UNDECLARED
    assert isinstance(window_of(FakeEmbedder()), Unlimited)
    assert isinstance(load_embedder("e5-small-4bit").window, ByteWindow)
    assert isinstance(load_embedder("litellm:text-embedding-3-small").window, ByteWindow)


def served(cache: SemanticCache, pairs: list[tuple[str, str]]) -> int:
    """How many second questions were served the first question's answer."""
    wrong = 0
    for i, (first, second) in enumerate(pairs):
        stored = ask(cache, first, f"t{i}").choices[0].message.content
        cache.flush()
        wrong += ask(cache, second, f"t{i}").choices[0].message.content == stored
    return wrong


def test_questions_that_differ_past_the_window_never_share_an_answer(minilm):
    pairs = long_pairs(100)
    settings = CacheSettings(store={"backend": "edge"})
    sees_all = SeesAll(minilm)
    before = SemanticCache(
        settings,
        embedder=sees_all,
        store=InMemoryStore(),
        upstream=FakeUpstream(),
        verifier=DetailGuard(),  # injected: the detail guard alone, as before the window
    )
    try:
        assert served(before, pairs[:3]) == 3  # the bug: one vector for all three
    finally:
        before.close()
    cache = SemanticCache(settings, embedder=minilm, store=InMemoryStore(), upstream=FakeUpstream())
    try:
        assert served(cache, pairs) == 0
        stats = cache.stats()
        assert stats.counts["beyond_window"] == 200
        assert stats.tiers.get("semantic", 0) == 0
        info = cache_info(ask(cache, pairs[0][1] + " Please be brief.", "t0"))
        assert info.tier == "miss" and info.miss_reason == "beyond_window"
        assert info.nearest_similarity is None  # no semantic lookup ran
        again = cache_info(ask(cache, pairs[0][0], "t0"))
        assert again.tier == "exact"  # an identical long question is still answered
        short = cache_info(ask(cache, "What is the capital of France?", "t0"))
        assert short.miss_reason != "beyond_window"
    finally:
        cache.close()


def test_the_window_alone_keeps_them_apart_with_the_guard_off(minilm):
    settings = CacheSettings(store={"backend": "edge"})
    cache = SemanticCache(
        settings,
        embedder=minilm,
        store=InMemoryStore(),
        upstream=FakeUpstream(),
        verifier=NoGuard(),
    )
    try:
        assert served(cache, long_pairs(20)) == 0
        assert cache.stats().counts["beyond_window"] == 40
    finally:
        cache.close()
