"""A templated pair is judged by what differs: its payloads, embedded on their own."""

from __future__ import annotations

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.guard import DetailGuard, NoGuard
from semcache.guard.payload import PayloadGuard
from semcache.testing import FakeUpstream, InMemoryStore

TEMPLATE = (
    "You are a support assistant for Fibrelink, a broadband provider. Answer politely and in "
    "at most three sentences. Do not promise a technician visit unless the line test has failed, "
    "never share internal ticket numbers, and always end by asking whether anything else is "
    "needed. If the customer sounds upset, apologise once. Customer message: "
)
DIFFERENT = [
    (
        "My internet has been down since this morning.",
        "My internet has been really slow since this morning.",
    ),
    ("I want to cancel my contract.", "I want to move my contract to my new flat."),
    ("The router smells like something is burning.", "The router lights are all off."),
    ("Please send me a copy of my last bill.", "Please explain the extra charge on my last bill."),
]
SAME = [
    (
        "My internet has been down since this morning.",
        "Since this morning my internet has been down.",
    ),
    ("How do I pay my bill online?", "How can I pay my bill on the website?"),
]


class Counting:
    def __init__(self, inner) -> None:
        self.inner, self.texts = inner, 0
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)


def test_a_shared_template_cannot_carry_different_payloads(minilm):
    guard = PayloadGuard(DetailGuard(), lambda _: minilm)
    for a, b in DIFFERENT:
        assert DetailGuard().verify(TEMPLATE + a, TEMPLATE + b)  # nothing for the details
        assert not guard.verify(TEMPLATE + a, TEMPLATE + b), (a, b)
    for a, b in SAME:
        assert guard.verify(TEMPLATE + a, TEMPLATE + b), (a, b)


def test_short_questions_are_never_re_embedded(minilm):
    counting = Counting(minilm)
    guard = PayloadGuard(DetailGuard(), lambda _: counting)
    assert guard.verify("What is the refund policy?", "What's your refund policy?")
    assert guard.verify("How do I reset my password?", "How can I change my password?")
    assert guard.verify(TEMPLATE + "Thanks!", TEMPLATE + "Thanks!")  # identical: nothing differs
    assert guard.verify(TEMPLATE, TEMPLATE + "Thanks!")  # added on one side only: not judged
    assert counting.texts == 0
    assert guard.name == "details"


def test_an_embedder_that_is_not_ready_vetoes_a_templated_pair():
    guard = PayloadGuard(NoGuard(), lambda _: None)
    a, b = SAME[0]
    assert not guard.verify(TEMPLATE + a, TEMPLATE + b)
    assert guard.verify("What is the refund policy?", "What's your refund policy?")


def test_the_default_cache_serves_no_templated_pair_with_another_request(minilm):
    settings = CacheSettings(store={"backend": "edge"})
    served = {}
    for guard in ("details-only", "default"):
        cache = SemanticCache(
            settings,
            embedder=minilm,
            store=InMemoryStore(),
            upstream=FakeUpstream(),
            verifier=DetailGuard() if guard == "details-only" else None,
        )
        try:
            hits = []
            for i, (a, b) in enumerate(DIFFERENT + SAME):
                ask = [{"role": "user", "content": TEMPLATE + a}]
                cache.completion(model="gpt-4o-mini", messages=ask, tenant=f"t{i}")
                cache.flush()
                again = [{"role": "user", "content": TEMPLATE + b}]
                info = cache_info(
                    cache.completion(model="gpt-4o-mini", messages=again, tenant=f"t{i}")
                )
                hits.append(info.tier == "semantic")
            served[guard] = hits
        finally:
            cache.close()
    assert sum(served["details-only"][: len(DIFFERENT)]) >= 2  # the bug this guards against
    assert served["default"] == [False] * len(DIFFERENT) + [True] * len(SAME)


def test_a_pair_the_guard_must_embed_is_judged_off_the_event_loop():
    """The rule names the candidates whose judging embeds (blocking work: callers on the
    event loop run those in a worker thread) and only those: short pairs and candidates under
    the threshold stay inline, with no embedding."""
    from semcache.pipeline.hit_rule import OneCandidate

    counting = Counting(FakeEmbedderForPayload())
    guard = PayloadGuard(NoGuard(), lambda _: counting)
    rule = OneCandidate(threshold=0.9, floor=None, verifier=guard, decision=None, scored=False)
    a, b = DIFFERENT[0]
    assert rule.blocks(TEMPLATE + a, TEMPLATE + b, 0.99)
    assert not rule.blocks(TEMPLATE + a, TEMPLATE + b, 0.5)  # under the threshold: no work
    assert not rule.blocks("What is the refund policy?", "What's your refund policy?", 0.99)
    assert not rule.blocks(TEMPLATE + a, None, 0.99)  # no stored question: nothing to check
    plain = OneCandidate(threshold=0.9, floor=None, verifier=NoGuard(), decision=None, scored=False)
    assert not plain.blocks(TEMPLATE + a, TEMPLATE + b, 0.99)
    assert counting.texts == 0  # deciding where to judge embeds nothing


class FakeEmbedderForPayload:
    name, dim = "fake", 2

    def embed(self, texts):
        raise AssertionError("deciding where to judge must not embed")
