"""Opposite words where two questions differ are vetoed; paraphrases are not."""

from __future__ import annotations

import pytest

from semcache.guard import DetailGuard
from semcache.guard.lexicon import load
from semcache.guard.opposites import differing

TEMPLATE = (
    "You are a support assistant for a broadband provider. Answer politely, in at most three "
    "sentences, and never promise a technician visit before checking the line status first. "
    "Customer message: "
)

OPPOSITE = [
    (
        "Which foods should I eat to lower cholesterol?",
        "Which foods should I avoid to lower cholesterol?",
    ),
    ("Should I buy Tesla stock now?", "Should I sell Tesla stock now?"),
    ("How do I allow cookies in Chrome?", "How do I block cookies in Chrome?"),
    ("Does the price include VAT?", "Does the price exclude VAT?"),
    ("What are the pros of remote work?", "What are the cons of remote work?"),
    ("Is this charger compatible with my laptop?", "Is this charger incompatible with my laptop?"),
    ("Which plants are toxic to cats?", "Which plants are non-toxic to cats?"),
    ("What causes migraines?", "What cures migraines?"),
    (
        "How do I convert text to uppercase in Python?",
        "How do I convert text to lowercase in Python?",
    ),
    ("How much sugar is in a banana?", "How little sugar is in a banana?"),
    ("How do I open the port on the router?", "How do I close the port on the router?"),
    ("如何增加销量？", "如何减少销量？"),
    ("下单之前可以取消吗", "下单之后可以取消吗"),
    ("怎么开灯", "怎么关灯"),
    ("这家公司的收入是多少", "这家公司的支出是多少"),
    ("孕妇应该吃哪些水果", "孕妇应该避免哪些水果"),
    ("这个功能对男性有什么好处", "这个功能对女性有什么好处"),
    # the opposite sits in a short payload after a long shared template that also holds
    # "before", "first" and "check": only the differing part decides
    (
        TEMPLATE + "Can I pay the bill before the due date?",
        TEMPLATE + "Can I pay the bill after the due date?",
    ),
    (TEMPLATE + "The staff were friendly.", TEMPLATE + "The staff were unfriendly."),
    # one word put in the other's place, though the other question uses it elsewhere too
    (
        TEMPLATE + "I want to return the blue curtains from my order.",
        TEMPLATE + "I want to keep the blue curtains from my order but return the rug.",
    ),
    ("我想退货这件外套", "我想保留这件外套，但是退货那条裤子"),
]

PARAPHRASE = [
    ("What is the refund policy?", "What's your refund policy?"),
    ("How do I enable dark mode?", "How do I turn on dark mode?"),
    ("How do I reset my password?", "How can I change my password?"),
    ("What's the max upload size?", "What's the maximum upload size?"),
    ("how to sort a list", "how to sort a list in reverse order"),
    (
        "Which foods should I eat to lower cholesterol?",
        "What should I eat to lower my cholesterol?",
    ),
    ("Can I bring my dog to the hotel?", "Are dogs allowed at the hotel?"),
    ("How do I start the app?", "How do I open the app?"),
    ("怎么删除账户", "如何删除账户"),
    (
        TEMPLATE + "My internet has been down since this morning.",
        TEMPLATE + "Since this morning my internet has been down.",
    ),
]


@pytest.mark.parametrize(("a", "b"), OPPOSITE)
def test_opposite_words_where_questions_differ_are_vetoed(a, b):
    guard = DetailGuard()
    assert not guard.verify(a, b) and not guard.verify(b, a)
    assert {d.rule for d in guard.differences(a, b)} >= {"comparison"}


@pytest.mark.parametrize(("a", "b"), PARAPHRASE)
def test_paraphrases_are_still_served(a, b):
    assert DetailGuard().verify(a, b)


def test_a_word_both_questions_share_never_counts():
    # "eat" is in both; "avoid" is added to one only: no opposite where they differ
    a = "Which foods should I eat and avoid to lower cholesterol?"
    b = "Which foods should I eat to lower cholesterol?"
    assert DetailGuard().verify(a, b)


def test_a_reordering_of_both_sides_is_not_an_opposite():
    # each question holds both words: a reordering, not a change of side
    assert DetailGuard().verify(
        "Should I keep or return the laptop?", "Should I return or keep the laptop?"
    )


def test_an_opposite_added_beside_its_own_word_is_not_a_substitution():
    # nothing of one question was replaced: "return" stays, "keep" is only added
    a = "Can I return the lamp?"
    b = "Can I return the lamp or keep it?"
    assert DetailGuard().verify(a, b)


def test_differing_sets_aside_the_shared_beginning_and_end():
    a, b = list("abcxyde"), list("abczde")
    assert differing(a, b) == (range(3, 5), range(3, 4))
    assert differing(a, a) == (range(7, 7), range(7, 7))


def test_the_opposite_lists_are_substantial_and_two_sided():
    lex = load()
    for table in (lex.en_opposites, lex.zh_opposites):
        assert len(table) >= 30
        for axis, (one, other) in table.items():
            assert one and other and not set(one) & set(other), axis
