"""DetailGuard: each rule family in English and Chinese, its algebra, and its measured effect
on the shipped pair set. (The registry and NoGuard: test_guard_registry.py.)"""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semcache.datasets import load_shipped_pairs
from semcache.errors import ConfigError
from semcache.guard import RULES, DetailGuard, Difference, HitVerifier

GUARD = DetailGuard()

# (query, candidate, rule that must reject it)
REJECT = [
    # numbers, units, money, percentages, ordinals
    ("How do I reset my password in 2 steps?", "How do I reset my password in 3 steps?", "number"),
    ("How long does it take to walk 5 km?", "How long does it take to walk 5 miles?", "number"),
    ("Book a table for two people", "Book a table for four people", "number"),
    ("Can I withdraw $500 a day?", "Can I withdraw $1,000 a day?", "number"),
    ("Is the 30% discount still valid?", "Is the 50 percent discount still valid?", "number"),
    ("What is the second law of motion?", "What is the third law of motion?", "number"),
    ("How many feet are in a mile?", "How many meters are in a mile?", "number"),
    # a unit written with a slash, no number: not read as its first part ("km")
    (
        "What is the speed limit on motorways in km/h?",
        "What is the speed limit on motorways in mph?",
        "number",
    ),
    ("Is 100 Mbit/s fast enough to stream?", "Is 100 MB fast enough to stream?", "number"),
    # the same numbers trading places
    ("I ordered two chairs but I need four", "I ordered four chairs but I only need two", "number"),
    ("Move 3 tasks from list 1 to list 2", "Move 3 tasks from list 2 to list 1", "number"),
    ("What is new in Python 3.12?", "What is new in Python 3.11?", "number"),
    ("两个人住一晚多少钱？", "三个人住一晚多少钱？", "number"),
    ("转账5000元要手续费吗", "转账5万元要手续费吗", "number"),
    ("三月去哪里旅游好", "三个月去哪里旅游好", "number"),
    ("打八折是多少钱", "打九折是多少钱", "number"),
    # dates and times
    ("What's the weather in Paris tomorrow?", "What's the weather in Paris today?", "date"),
    ("Is the bank open on Monday?", "Is the bank open on Tuesday?", "date"),
    ("Cheap flights to Rome in July", "Cheap flights to Rome in August", "date"),
    ("What did the market do last week?", "What will the market do next week?", "date"),
    ("明天北京天气怎么样", "今天北京天气怎么样", "date"),
    ("周一银行营业吗", "周日银行营业吗", "date"),
    ("下周去上海出差要带什么", "上周去上海出差要带什么", "date"),
    # negation
    ("Can I cancel my order?", "Can't I cancel my order?", "negation"),
    ("Does the plan include roaming?", "Does the plan not include roaming?", "negation"),
    ("How to travel with a cat", "How to travel without a cat", "negation"),
    ("Why does my laptop charge?", "Why doesnt my laptop charge?", "negation"),
    ("可以退款吗", "不可以退款吗", "negation"),
    ("这个药能和酒一起吃吗", "这个药不能和酒一起吃吗", "negation"),
    ("有发票的订单怎么退", "没有发票的订单怎么退", "negation"),
    # entities
    ("What is the capital of France?", "What is the capital of Germany?", "entity"),
    ("How do I read a file in Python?", "How do I read a file in Java?", "entity"),
    ("How do I reset my iPhone?", "How do I reset my iPad?", "entity"),
    ("Who wrote 'War and Peace'?", "Who wrote 'Crime and Punishment'?", "entity"),
    ("how to parse json in python", "how to parse csv in python", "entity"),
    ("Python怎么读文件", "Java怎么读文件", "entity"),
    ("北京到上海的高铁多久", "北京到广州的高铁多久", "entity"),
    ("微信怎么转账", "支付宝怎么转账", "entity"),
    # comparison and direction
    ("Should I stretch before running?", "Should I stretch after running?", "comparison"),
    ("Sort the list in ascending order", "Sort the list in descending order", "comparison"),
    ("How to increase my credit limit", "How to decrease my credit limit", "comparison"),
    ("Is the Pro plan cheaper than Basic?", "Does Pro cost more than Basic?", "comparison"),
    ("How to upload files to the server", "How to download files from the server", "comparison"),
    ("Convert 100 USD to EUR", "Convert 100 EUR to USD", "comparison"),
    (
        "How do I print the first 10 lines of a file?",
        "How do I print the last 10 lines of a file?",
        "comparison",
    ),
    ("吃饭之前能运动吗", "吃饭之后能运动吗", "comparison"),
    ("数组怎么升序排列", "数组怎么降序排列", "comparison"),
    ("房价会上涨吗", "房价会下跌吗", "comparison"),
    ("一百美元换人民币是多少", "一百人民币换美元是多少", "comparison"),
    # role swaps around the same relation
    ("convert Markdown to HTML", "convert HTML to Markdown", "order"),
    ("The turtle is following the fish", "The fish is following the turtle", "order"),
    (
        "What does LeBron James think of Kobe Bryant?",
        "What does Kobe Bryant think of LeBron James?",
        "order",
    ),
    ("从北京到上海的高铁要多久", "从上海到北京的高铁要多久", "order"),
    ("猫比狗聪明吗", "狗比猫聪明吗", "order"),
]

KEEP = [
    # numbers written differently, weak "one"/"一"
    ("Book a table for 2 people", "book a table for two people"),
    ("Is shipping free over $50?", "Is shipping free on orders above 50 dollars?"),
    ("Write one Python function that sorts a list", "Write a Python function that sorts a list"),
    ("What is 1,000 times 3?", "What is 1000 times 3?"),
    ("How fast is 100 km/h in mph?", "Convert 100 km/h to mph"),
    ("What's the speed limit in km/h?", "What is the speed limit in kph?"),
    ("Book 2 rooms for 3 adults", "Book two rooms for three adults"),
    # the same numbers in another order, in a reworded request (the shared start set aside)
    (
        "Message: please make it four cushions instead of two, order 77120.",
        "Message: I ordered two cushions but I need four, order 77120.",
    ),
    ("存十万元一年利息多少", "存100000元一年利息多少"),
    ("买了七天还能退货吗", "买了7天还能退货吗"),
    ("给我讲一个笑话", "讲个笑话给我听"),
    # dates
    ("weather in Paris tomorrow", "Tomorrow's weather in Paris?"),
    ("May I ask how to renew a passport?", "Can I ask how to renew a passport?"),
    ("星期天客服上班吗", "周日客服上班吗"),
    # negation idioms and question forms
    ("Is Python fast or not?", "Is Python fast?"),
    ("I'm not sure how to reset my password", "How do I reset my password?"),
    ("Should I learn Rust? Why or why not?", "Should I learn Rust?"),
    ("能不能退款", "可以退款吗"),
    ("苹果和梨有什么区别", "苹果和梨的差异是什么"),
    ("这块石头值钱不？", "这块石头值钱吗？"),
    ("非常好用的笔记软件推荐", "很好用的笔记软件推荐"),
    # entities: casing, aliases, demonyms, sentence starts
    ("how do i install python on windows", "How do I install Python on Windows?"),
    ("best JS framework for beginners", "best JavaScript framework for beginners"),
    ("Who is the French president?", "Who is the president of France?"),
    ("Explain recursion simply", "What is recursion, simply?"),
    ("HOW DO I PAY WITH PAYPAL", "How do I pay with PayPal?"),
    ("安卓手机怎么截图", "Android手机怎么截图"),
    ("Who won the World Cup in 2018?", "Which country won the 2018 FIFA World Cup?"),
    ("How do I sort a list?", "How do I sort a list in Python?"),
    # comparison: one-sided qualifiers and same pole
    ("How do I sort a list in Python?", "How do I sort a list in Python in ascending order?"),
    ("Is the Moon larger than Mercury?", "Which is bigger, the Moon or Mercury?"),
    ("Python列表升序排序", "Python列表从小到大排序"),
    # word order that keeps the roles: reordering, passive, coordination, keyword queries
    ("Which laptop should I buy?", "Which laptop I should buy?"),
    ("A cat is chasing a dog", "A dog is being chased by a cat"),
    (
        "What is the difference between Python and Java?",
        "What is the difference between Java and Python?",
    ),
    ("css dark mode in:title", "in:title dark mode css"),
    ("How do I reset my password on iPhone?", "On iPhone, how do I reset my password?"),
    ("北京和上海哪个大", "上海和北京哪个大"),
    ("现在最新的好看电影有什么", "现在有什么好看的最新电影"),
    ("星座是农历还是阳历", "星座是阳历还是农历"),
    # normalisation
    ("How do I reset my password?", "  how do I   reset my password  "),
    ("ｉＰｈｏｎｅ　１５多少钱？", "iPhone 15多少钱?"),
    ("What’s the refund policy?", "What's the refund policy?"),
]


@pytest.mark.parametrize(("query", "candidate", "rule"), REJECT)
def test_rejects_a_differing_detail(query: str, candidate: str, rule: str) -> None:
    found = GUARD.differences(query, candidate)
    assert rule in {d.rule for d in found}, found
    assert not GUARD.verify(query, candidate)
    assert not DetailGuard(rules=[rule]).verify(query, candidate)


@pytest.mark.parametrize(("query", "candidate"), KEEP)
def test_keeps_a_paraphrase(query: str, candidate: str) -> None:
    assert GUARD.differences(query, candidate) == []
    assert GUARD.verify(query, candidate)


def test_every_family_is_covered_in_both_languages() -> None:
    zh = {rule for q, _, rule in REJECT if not q.isascii()}
    en = {rule for q, _, rule in REJECT if q.isascii()}
    assert zh == en == set(RULES)


def test_rules_can_be_switched_off() -> None:
    numbers_only = DetailGuard(rules=["number"])
    assert numbers_only.rules == ("number",)
    assert numbers_only.verify("Can I cancel my order?", "Can't I cancel my order?")
    assert not numbers_only.verify("2 steps", "3 steps")
    with pytest.raises(ConfigError):
        DetailGuard(rules=["numbers", "vibes"])


def test_difference_says_what_differs() -> None:
    (diff,) = GUARD.differences("Reset it in 2 steps", "Reset it in 3 steps")
    assert diff == Difference("number", "['2'] vs ['3']")


def test_is_a_hit_verifier_named_details() -> None:
    assert isinstance(GUARD, HitVerifier)
    assert GUARD.name == "details"


# --- algebra: reflexive and symmetric, on detail-heavy random text ------------------------

FRAGMENTS = [
    "how do I",
    "reset my password",
    "in",
    "2",
    "two",
    "3",
    "steps",
    "5 km",
    "5 miles",
    "$50",
    "50 dollars",
    "30%",
    "one",
    "first",
    "second",
    "last",
    "before",
    "after",
    "not",
    "can't",
    "without",
    "never",
    "or not",
    "Python",
    "Java",
    "iPhone 15",
    "France",
    "French",
    "US",
    "United States",
    "Monday",
    "tomorrow",
    "next week",
    "May",
    "march",
    "ascending",
    "descending",
    "cheaper",
    "more expensive",
    "USD to EUR",
    "EUR to USD",
    "'War and Peace'",
    "?",
    ".",
    ",",
    "怎么",
    "两个",
    "一个",
    "三月",
    "3个月",
    "十万元",
    "明天",
    "周日",
    "不",
    "没有",
    "能不能",
    "区别",
    "之前",
    "之后",
    "升序",
    "降序",
    "北京",
    "上海",
    "Android",
    "安卓",
    "百分之五十",
    "第一",
    "值钱不？",
    "to",
    "Markdown",
    "HTML",
    "is following the",
    "fish",
    "turtle",
    "and",
    "到",
    "比",
    "和",
]
texts = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), max_size=8).map(" ".join),
    st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join),
    st.text(max_size=40),
)


@settings(max_examples=300, deadline=None)
@given(texts, texts)
def test_symmetric_and_reflexive(a: str, b: str) -> None:
    assert GUARD.verify(a, b) == GUARD.verify(b, a)
    assert GUARD.verify(a, a)
    assert GUARD.differences(a, a) == []


def test_reflexive_on_every_shipped_text() -> None:
    for pair in load_shipped_pairs():
        for text in (pair["text_a"], pair["text_b"]):
            assert GUARD.verify(text, text)
            assert GUARD.verify(text, f"  {text.upper() if text.isascii() else text}  ")


# --- measured effect on the shipped set ----------------------------------------------------
# Measured when written: positives kept 99.6% (en 99.4%, zh 100%); hard negatives whose
# detail is one of the guard's families rejected 100%; "other" details (delete vs deactivate)
# are out of scope and rejected 0%. Margins leave room for rule changes, not for regressions.


def test_shipped_set_rates() -> None:
    kept: dict[str, list[bool]] = defaultdict(list)
    for pair in load_shipped_pairs():
        ok = GUARD.verify(pair["text_a"], pair["text_b"])
        if pair["label"] == 1:
            kept[f"pos-{pair['lang']}"].append(ok)
        elif pair["kind"] == "hard_negative" and pair["detail"] != "other":
            kept[f"hard-{pair['lang']}"].append(ok)
    rate = {key: sum(values) / len(values) for key, values in kept.items()}
    assert rate["pos-en"] >= 0.95
    assert rate["pos-zh"] >= 0.92
    assert 1 - rate["hard-en"] >= 0.95
    assert 1 - rate["hard-zh"] >= 0.95
