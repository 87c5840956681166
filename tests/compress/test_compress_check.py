"""lost_details: every kind of answer-determining detail is caught when a rewrite drops it."""

from __future__ import annotations

import pytest

from semcache.compress import lost_details
from semcache.compress.check import holds_detail

ORIGINAL = (
    "Keep replies under 120 words. Refunds take 5 business days. Do not promise refunds. "
    "Support runs Monday to Friday. Sort plans by price in ascending order. "
    "Use the Stripe API. Call `charge()` and see https://docs.example.com/fees. "
    'Sign off with "Kind regards".'
)


@pytest.mark.parametrize(
    ("dropped", "kind"),
    [
        ("120", "number"),
        ("5 business days", "number"),
        ("Do not promise refunds. ", "negation"),
        ("Monday", "date"),
        ("ascending", "comparison"),
        ("Stripe", "entity"),
        ("`charge()`", "code"),
        ("https://docs.example.com/fees", "url"),
        ('"Kind regards"', "quote"),
    ],
)
def test_each_dropped_detail_is_caught(dropped: str, kind: str) -> None:
    rewrite = ORIGINAL.replace(dropped, "")
    assert kind in {d.kind for d in lost_details(ORIGINAL, rewrite)}


def test_a_flipped_negation_is_caught() -> None:
    lost = lost_details("Do not use eval.", "Use eval.")
    assert [d.kind for d in lost] == ["negation"]


def test_a_changed_unit_is_caught() -> None:
    assert {d.kind for d in lost_details("Limit: 5 km.", "Limit: 5 miles.")} >= {"unit"}


def test_a_changed_url_is_caught() -> None:
    lost = lost_details("See https://a.example/v2 now.", "See https://a.example/v1 now.")
    assert "url" in {d.kind for d in lost}


def test_chinese_details_are_caught() -> None:
    original = "每次回复不超过200字。不要透露用户的身份证号。周一到周五营业。"
    assert {d.kind for d in lost_details(original, original.replace("200", "300"))} == {"number"}
    assert "negation" in {d.kind for d in lost_details(original, original.replace("不要", "请"))}
    assert "date" in {d.kind for d in lost_details(original, original.replace("周一", ""))}


def test_dropping_a_repeat_or_filler_loses_nothing() -> None:
    original = "Please note that you must not use eval. Do not use eval. Answer in 3 lines."
    assert lost_details(original, "You must not use eval. Answer in 3 lines.") == []


def test_identical_text_loses_nothing() -> None:
    assert lost_details(ORIGINAL, ORIGINAL) == []


def test_idioms_that_look_negative_are_not_negations() -> None:
    assert lost_details("非常感谢！请总结全文。", "请总结全文。") == []


@pytest.mark.parametrize(
    ("span", "holds"),
    [
        ("Please note that ", False),
        ("As mentioned before, ", True),
        ("I want you to ", False),
        ("作为一个AI助手，", True),
        ("重要的事情说三遍：", True),
        ("请注意，", False),
        ("never ", True),
    ],
)
def test_holds_detail(span: str, holds: bool) -> None:
    assert holds_detail(span) is holds
