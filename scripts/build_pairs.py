"""Build semcache's own labeled pair set, ``semcache/data/pairs.jsonl``.

Every text comes from the hand-written families below; nothing is read from another data set, the
network or a model, and the output is byte-for-byte deterministic (``--check`` verifies the shipped
file is current).

A *family* is one question with one answer-determining slot. Each slot value is an *intent*
(``group``): all texts of one value have the same correct answer, texts of two values do not.
From each family the builder takes

- positives: the two paraphrase templates of each value (``paraphrase``), and a surface variant
  (casing, punctuation, a typo, full-width characters; ``exact_variant``) of two of its texts;
- hard negatives: the same template with the two values, and the cross pair (``hard_negative``),
  tagged with the family's ``detail`` (number, date, negation, entity, comparison, order,
  other);

and a few ``unrelated`` negatives pair texts of families from different domains.

Usage: ``python scripts/build_pairs.py`` (write) or ``python scripts/build_pairs.py --check``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

OUTPUT = Path(__file__).resolve().parents[1] / "semcache" / "data" / "pairs.jsonl"


@dataclass(frozen=True)
class Value:
    """One slot value: an intent of its family."""

    key: str
    slots: dict[str, str]


@dataclass(frozen=True)
class Family:
    """Two paraphrase templates and two values that change the correct answer."""

    fid: str
    lang: str
    domain: str
    detail: str
    templates: tuple[str, str]
    values: tuple[Value, Value]


# Short constructor names keep the tables below readable as tables.
def V(key: str, **slots: str) -> Value:
    return Value(key, slots)


def F(
    fid: str, lang: str, domain: str, detail: str, t1: str, t2: str, a: Value, b: Value
) -> Family:
    return Family(fid, lang, domain, detail, (t1, t2), (a, b))


EN = [
    # support
    F(
        "return-window",
        "en",
        "support",
        "number",
        "Can I still return an item {x} days after delivery?",
        "Is it possible to send something back {x} days after it was delivered?",
        V("14d", x="14"),
        V("40d", x="40"),
    ),
    F(
        "cancel-shipped",
        "en",
        "support",
        "negation",
        "Can I cancel an order that {x}?",
        "Is it possible to cancel my order if it {y}?",
        V("shipped", x="has already shipped", y="has shipped"),
        V("not-shipped", x="has not shipped yet", y="hasn't shipped yet"),
    ),
    F(
        "address-change",
        "en",
        "support",
        "comparison",
        "Can I change the delivery address {x} the order ships?",
        "Is it possible to update my shipping address {x} my order has been dispatched?",
        V("before", x="before"),
        V("after", x="after"),
    ),
    F(
        "pay-method",
        "en",
        "support",
        "entity",
        "How do I pay with {x} on your website?",
        "How can I check out using {x} on your site?",
        V("paypal", x="PayPal"),
        V("applepay", x="Apple Pay"),
    ),
    F(
        "free-shipping",
        "en",
        "support",
        "number",
        "Is shipping free on orders over ${x}?",
        "Do orders above {x} dollars get free shipping?",
        V("50usd", x="50"),
        V("100usd", x="100"),
    ),
    F(
        "support-day",
        "en",
        "support",
        "date",
        "Is customer support open on {x}?",
        "Can I reach your support team on a {x}?",
        V("sunday", x="Sunday"),
        V("saturday", x="Saturday"),
    ),
    F(
        "account-remove",
        "en",
        "support",
        "other",
        "How do I {x} my account?",
        "What are the steps to {x} my account?",
        V("delete", x="delete"),
        V("deactivate", x="deactivate"),
    ),
    F(
        "returnable-items",
        "en",
        "support",
        "negation",
        "Which items {x} be returned?",
        "What products are {y} for return?",
        V("can", x="can", y="eligible"),
        V("cannot", x="cannot", y="not eligible"),
    ),
    # product FAQ
    F(
        "sub-length",
        "en",
        "faq",
        "number",
        "What's included in the {x}-month subscription?",
        "What do I get with a {x} month subscription?",
        V("6m", x="6"),
        V("12m", x="12"),
    ),
    F(
        "app-platform",
        "en",
        "faq",
        "entity",
        "Does the app work on {x}?",
        "Is the app available for {x} devices?",
        V("android", x="Android"),
        V("ipad", x="iPad"),
    ),
    F(
        "storage-upgrade",
        "en",
        "faq",
        "number",
        "How much does it cost to upgrade to {x} GB of storage?",
        "What is the price for the {x}GB storage upgrade?",
        V("100gb", x="100"),
        V("200gb", x="200"),
    ),
    F(
        "plan-price",
        "en",
        "faq",
        "comparison",
        "Is the Pro plan {x} than the Basic plan?",
        "Does the Pro plan cost {y} than the Basic plan?",
        V("cheaper", x="cheaper", y="less"),
        V("pricier", x="more expensive", y="more"),
    ),
    F(
        "sale-month",
        "en",
        "faq",
        "date",
        "Is the summer sale still on in {x}?",
        "Does the summer sale continue into {x}?",
        V("july", x="July"),
        V("august", x="August"),
    ),
    F(
        "payment-accepted",
        "en",
        "faq",
        "negation",
        "Which payment methods are {x}accepted?",
        "What payment options {y} supported at checkout?",
        V("accepted", x="", y="are"),
        V("not-accepted", x="not ", y="aren't"),
    ),
    F(
        "policy",
        "en",
        "faq",
        "other",
        "What is your {x} policy?",
        "Can you explain your {x} policy?",
        V("return", x="return"),
        V("exchange", x="exchange"),
    ),
    # coding
    F(
        "read-csv",
        "en",
        "coding",
        "entity",
        "How do I read a CSV file in {x}?",
        "What is the easiest way to load a CSV file using {x}?",
        V("python", x="Python"),
        V("java", x="Java"),
    ),
    F(
        "sort-order",
        "en",
        "coding",
        "comparison",
        "How do I sort a list of numbers in {x} order in Python?",
        "Python: sort a list of integers in {x} order",
        V("asc", x="ascending"),
        V("desc", x="descending"),
    ),
    F(
        "round-decimals",
        "en",
        "coding",
        "number",
        "How do I round a float to {x} decimal places in JavaScript?",
        "Round a number to {y} decimals in JavaScript",
        V("2dp", x="2", y="two"),
        V("3dp", x="3", y="three"),
    ),
    F(
        "python-version",
        "en",
        "coding",
        "entity",
        "What's new in Python {x}?",
        "What changed in Python {x} compared to the release before it?",
        V("py312", x="3.12"),
        V("py311", x="3.11"),
    ),
    F(
        "dict-key",
        "en",
        "coding",
        "negation",
        "How do I check if a key {x} in a Python dictionary?",
        "Python: test whether a dict {y} a given key",
        V("exists", x="exists", y="contains"),
        V("missing", x="does not exist", y="doesn't contain"),
    ),
    F(
        "reverse-js",
        "en",
        "coding",
        "other",
        "How do I reverse a {x} in JavaScript?",
        "What's the simplest way to reverse a {x} in JavaScript?",
        V("string", x="string"),
        V("array", x="array"),
    ),
    F(
        "tail-lines",
        "en",
        "coding",
        "number",
        "How do I print the last {x} lines of a file in Linux?",
        "Linux command to show the final {x} lines of a file",
        V("10", x="10"),
        V("100", x="100"),
    ),
    F(
        "node-db",
        "en",
        "coding",
        "entity",
        "How do I connect to a {x} database from Node.js?",
        "Node.js app connecting to a {x} database, how do I do it?",
        V("postgres", x="PostgreSQL"),
        V("mysql", x="MySQL"),
    ),
    F(
        "numpy-extreme",
        "en",
        "coding",
        "comparison",
        "How do I find the {x} value in a NumPy array?",
        "Get the {y} element of a numpy array",
        V("max", x="maximum", y="largest"),
        V("min", x="minimum", y="smallest"),
    ),
    # knowledge
    F(
        "capital",
        "en",
        "knowledge",
        "entity",
        "What is the capital of {x}?",
        "Which city is the capital of {x}?",
        V("australia", x="Australia"),
        V("austria", x="Austria"),
    ),
    F(
        "square-root",
        "en",
        "knowledge",
        "number",
        "What is the square root of {x}?",
        "Calculate the square root of {x}",
        V("144", x="144"),
        V("169", x="169"),
    ),
    F(
        "world-cup",
        "en",
        "knowledge",
        "date",
        "Who won the World Cup in {x}?",
        "Which country won the {x} FIFA World Cup?",
        V("2018", x="2018"),
        V("2014", x="2014"),
    ),
    F(
        "moon-mercury",
        "en",
        "knowledge",
        "comparison",
        "Is the Moon {x} than Mercury?",
        "Which is {y}, the Moon or Mercury?",
        V("larger", x="larger", y="bigger"),
        V("smaller", x="smaller", y="smaller"),
    ),
    F(
        "planet-moons",
        "en",
        "knowledge",
        "negation",
        "Which planets in the solar system {x} moons?",
        "What planets {y} moons?",
        V("have", x="have", y="have any"),
        V("none", x="don't have", y="have no"),
    ),
    F(
        "author",
        "en",
        "knowledge",
        "entity",
        'Who wrote "{x}"?',
        'Who is the author of "{x}"?',
        V("pride", x="Pride and Prejudice"),
        V("sense", x="Sense and Sensibility"),
    ),
    F(
        "boiling-point",
        "en",
        "knowledge",
        "other",
        "What is the boiling point of {x} at sea level?",
        "At sea level, at what temperature does {x} boil?",
        V("water", x="water"),
        V("ethanol", x="ethanol"),
    ),
    F(
        "mile-units",
        "en",
        "knowledge",
        "number",
        "How many {x} are in a mile?",
        "How many {x} does one mile have?",
        V("feet", x="feet"),
        V("meters", x="meters"),
    ),
    # travel
    F(
        "liquids",
        "en",
        "travel",
        "number",
        "Can I bring a {x} ml bottle of shampoo in my carry-on?",
        "Is a {x}ml shampoo bottle allowed in hand luggage?",
        V("100ml", x="100"),
        V("200ml", x="200"),
    ),
    F(
        "visa",
        "en",
        "travel",
        "entity",
        "Do I need a visa to visit {x} as a US citizen?",
        "Is a visa required for {x} if I hold a US passport?",
        V("japan", x="Japan"),
        V("china", x="China"),
    ),
    F(
        "rome-weather",
        "en",
        "travel",
        "date",
        "What's the weather like in Rome in {x}?",
        "How is the weather in Rome during {x}?",
        V("october", x="October"),
        V("april", x="April"),
    ),
    F(
        "flight-food",
        "en",
        "travel",
        "comparison",
        "What should I eat {x} a long flight?",
        "Good food to have {x} a long-haul flight",
        V("before", x="before"),
        V("after", x="after"),
    ),
    F(
        "airport-distance",
        "en",
        "travel",
        "number",
        "How far is the airport from downtown in {x}?",
        "Distance from the airport to the city centre in {x}",
        V("km", x="kilometers"),
        V("miles", x="miles"),
    ),
    # finance
    F(
        "usd-eur",
        "en",
        "finance",
        "number",
        "How much is {x} US dollars in euros?",
        "Convert ${x} to euros",
        V("100", x="100"),
        V("500", x="500"),
    ),
    F(
        "fx-direction",
        "en",
        "finance",
        "comparison",
        "What is the exchange rate from {x} to {y}?",
        "Current {x} to {y} exchange rate",
        V("usd-eur", x="USD", y="EUR"),
        V("eur-usd", x="EUR", y="USD"),
    ),
    F(
        "interest",
        "en",
        "finance",
        "number",
        "How much interest will I earn on $10,000 at {x}% per year?",
        "What's the yearly interest on 10,000 dollars at a {x} percent rate?",
        V("4pct", x="4"),
        V("5pct", x="5"),
    ),
    F(
        "tax-deadline",
        "en",
        "finance",
        "date",
        "When is the tax filing deadline in {x}?",
        "What is the deadline to file taxes in {x}?",
        V("2025", x="2025"),
        V("2026", x="2026"),
    ),
    # health
    F(
        "pregnancy-food",
        "en",
        "health",
        "negation",
        "Which foods should I {x}eat during pregnancy?",
        "What foods are {y} to eat while pregnant?",
        V("eat", x="", y="safe"),
        V("avoid", x="not ", y="not safe"),
    ),
    F(
        "ibuprofen",
        "en",
        "health",
        "number",
        "Is it safe to take {x} mg of ibuprofen at once?",
        "Can I take {x}mg of ibuprofen in a single dose?",
        V("400mg", x="400"),
        V("800mg", x="800"),
    ),
    F(
        "stretch",
        "en",
        "health",
        "comparison",
        "Is it better to stretch {x} running?",
        "Should I do stretches {x} a run?",
        V("before", x="before"),
        V("after", x="after"),
    ),
    # roles: the same two things, trading places
    F(
        "format-convert",
        "en",
        "coding",
        "order",
        "How do I convert {x} to {y}?",
        "What is the easiest way to turn a {x} file into {y}?",
        V("md-html", x="Markdown", y="HTML"),
        V("html-md", x="HTML", y="Markdown"),
    ),
    F(
        "train-route",
        "en",
        "travel",
        "order",
        "How long does the train from {x} to {y} take?",
        "How many hours is the train ride from {x} to {y}?",
        V("paris-london", x="Paris", y="London"),
        V("london-paris", x="London", y="Paris"),
    ),
    F(
        "final-winner",
        "en",
        "knowledge",
        "order",
        "Did {x} ever beat {y} in a World Cup final?",
        "Has {x} won a World Cup final against {y}?",
        V("ger-arg", x="Germany", y="Argentina"),
        V("arg-ger", x="Argentina", y="Germany"),
    ),
    F(
        "symptoms",
        "en",
        "health",
        "other",
        "What are the early symptoms of {x}?",
        "What are the first signs of {x}?",
        V("diabetes", x="diabetes"),
        V("hypothyroidism", x="hypothyroidism"),
    ),
]

ZH = [
    F(
        "return-days",
        "zh",
        "support",
        "number",
        "买了{x}天还能退货吗？",
        "收到货{y}天后还可以申请退货吗？",
        V("7d", x="七", y="7"),
        V("15d", x="十五", y="15"),
    ),
    F(
        "cancel-shipped",
        "zh",
        "support",
        "negation",
        "订单{x}，可以取消吗？",
        "我的订单{y}，还能取消吗？",
        V("not-shipped", x="还没有发货", y="尚未发出"),
        V("shipped", x="已经发货了", y="已经发出"),
    ),
    F(
        "support-day",
        "zh",
        "support",
        "date",
        "{x}可以联系人工客服吗？",
        "人工客服{y}上班吗？",
        V("sat", x="周六", y="星期六"),
        V("sun", x="周日", y="星期天"),
    ),
    F(
        "account-remove",
        "zh",
        "support",
        "other",
        "怎么{x}我的账号？",
        "如何{x}账户？",
        V("cancel", x="注销"),
        V("freeze", x="冻结"),
    ),
    F(
        "app-platform",
        "zh",
        "faq",
        "entity",
        "这个应用支持{x}吗？",
        "{x}手机能用这个软件吗？",
        V("android", x="Android"),
        V("ios", x="iOS"),
    ),
    F(
        "vip-months",
        "zh",
        "faq",
        "number",
        "{x}个月的会员包含哪些权益？",
        "开通{y}个月会员有什么福利？",
        V("3m", x="三", y="3"),
        V("6m", x="六", y="6"),
    ),
    F(
        "plan-price",
        "zh",
        "faq",
        "comparison",
        "高级版比基础版{x}多少？",
        "基础版和高级版相比，高级版{y}多少钱？",
        V("pricier", x="贵", y="贵了"),
        V("cheaper", x="便宜", y="便宜了"),
    ),
    F(
        "read-json",
        "zh",
        "coding",
        "entity",
        "{x}怎么读取JSON文件？",
        "用{x}如何解析一个JSON文件？",
        V("python", x="Python"),
        V("java", x="Java"),
    ),
    F(
        "sort-order",
        "zh",
        "coding",
        "comparison",
        "Python列表怎么{x}排序？",
        "如何把Python的列表按{y}排列？",
        V("asc", x="升序", y="从小到大"),
        V("desc", x="降序", y="从大到小"),
    ),
    F(
        "git-undo",
        "zh",
        "coding",
        "negation",
        "Git怎么撤销{x}push的提交？",
        "如何撤回{y}推送到远程的commit？",
        V("pushed", x="已经", y="已经"),
        V("unpushed", x="还没", y="尚未"),
    ),
    F(
        "capital",
        "zh",
        "knowledge",
        "entity",
        "{x}的首都是哪个城市？",
        "{x}首都是哪里？",
        V("australia", x="澳大利亚"),
        V("austria", x="奥地利"),
    ),
    F(
        "moon-distance",
        "zh",
        "knowledge",
        "number",
        "地球到月球的距离是多少{x}？",
        "月球离地球有多少{x}远？",
        V("km", x="公里"),
        V("mile", x="英里"),
    ),
    F(
        "dynasty",
        "zh",
        "knowledge",
        "comparison",
        "秦朝在汉朝{x}吗？",
        "秦朝是不是{y}汉朝？",
        V("before", x="之前", y="早于"),
        V("after", x="之后", y="晚于"),
    ),
    F(
        "baggage",
        "zh",
        "travel",
        "number",
        "托运行李最多可以带{x}公斤吗？",
        "托运行李的重量上限是{x}千克吗？",
        V("20kg", x="20"),
        V("23kg", x="23"),
    ),
    F(
        "beijing-month",
        "zh",
        "travel",
        "date",
        "{x}去北京旅游天气怎么样？",
        "北京{y}份的天气适合旅游吗？",
        V("mar", x="三月", y="3月"),
        V("oct", x="十月", y="10月"),
    ),
    F(
        "train-city",
        "zh",
        "travel",
        "entity",
        "从上海到{x}坐高铁要多久？",
        "上海坐高铁去{x}需要几个小时？",
        V("hangzhou", x="杭州"),
        V("suzhou", x="苏州"),
    ),
    F(
        "deposit",
        "zh",
        "finance",
        "number",
        "{x}万元存一年定期利息是多少？",
        "{y}块钱存一年定期能有多少利息？",
        V("100k", x="十", y="十万"),
        V("200k", x="二十", y="二十万"),
    ),
    F(
        "usd-cny",
        "zh",
        "finance",
        "comparison",
        "最近美元兑人民币汇率是{x}了吗？",
        "美元对人民币的汇率最近是不是{y}了？",
        V("up", x="涨", y="上涨"),
        V("down", x="跌", y="下跌"),
    ),
    F(
        "flu-vaccine",
        "zh",
        "health",
        "negation",
        "哪些人{x}接种流感疫苗？",
        "什么人群{y}打流感疫苗？",
        V("suitable", x="适合", y="应该"),
        V("unsuitable", x="不适合", y="不应该"),
    ),
    F(
        "rail-route",
        "zh",
        "travel",
        "order",
        "从{x}到{y}的高铁要坐多久？",
        "{x}到{y}坐高铁需要几个小时？",
        V("bj-sh", x="北京", y="上海"),
        V("sh-bj", x="上海", y="北京"),
    ),
    F(
        "translate-direction",
        "zh",
        "knowledge",
        "order",
        "这句话从{x}翻译成{y}应该怎么写？",
        "能帮我把这句话从{x}译成{y}吗？",
        V("en-zh", x="英文", y="中文"),
        V("zh-en", x="中文", y="英文"),
    ),
    F(
        "symptoms",
        "zh",
        "health",
        "other",
        "{x}有什么症状？",
        "得了{x}会出现哪些症状？",
        V("diabetes", x="糖尿病"),
        V("hypertension", x="高血压"),
    ),
]

_SPACES = re.compile(r"\s+")


def render(template: str, value: Value) -> str:
    return _SPACES.sub(" ", template.format(**value.slots)).strip()


def _protected(value: Value) -> set[str]:
    """Words of a slot value: a typo variant never touches the answer-determining detail."""
    return {word.lower() for slot in value.slots.values() for word in re.findall(r"\w+", slot)}


def _en_lower(text: str, _: Value) -> str:
    return text.lower().rstrip("?!.")


def _en_typo(text: str, value: Value) -> str:
    words = re.findall(r"[A-Za-z]+", text)
    candidates = [
        w for w in words[1:] if len(w) >= 5 and w.islower() and w not in _protected(value)
    ]
    if not candidates:
        return _en_lower(text, value)
    word = max(candidates, key=len)
    i = next(i for i in range(1, len(word) - 1) if word[i] != word[i + 1])
    typo = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return text.replace(word, typo, 1)


def _en_punct(text: str, _: Value) -> str:
    return text.replace("'", "").rstrip("?!.") + "??"


def _en_caps(text: str, _: Value) -> str:
    return text.upper()


def _zh_ascii_punct(text: str, _: Value) -> str:
    return text.replace("？", "?").replace("，", ",")


def _zh_strip(text: str, _: Value) -> str:
    return text.rstrip("？?。")


def _zh_wide(text: str, _: Value) -> str:
    wide = "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in text)
    return wide if wide != text else text.rstrip("？") + "？？"


Variant = Callable[[str, Value], str]
VARIANTS: dict[str, tuple[Variant, ...]] = {
    "en": (_en_lower, _en_typo, _en_punct, _en_caps),
    "zh": (_zh_ascii_punct, _zh_strip, _zh_wide),
}


def family_pairs(index: int, family: Family) -> Iterator[tuple[str, str, str, str, str | None]]:
    """(text_a, text_b, kind, group key of b or "", detail) for one family; see module doc."""
    (a, b), (t1, t2) = family.values, family.templates
    a1, a2, b1, b2 = render(t1, a), render(t2, a), render(t1, b), render(t2, b)
    variants = VARIANTS[family.lang]
    first, second = variants[index % len(variants)], variants[(index + 1) % len(variants)]
    yield a1, a2, "paraphrase", a.key, None
    yield b1, b2, "paraphrase", b.key, None
    yield a1, first(a1, a), "exact_variant", a.key, None
    yield b2, second(b2, b), "exact_variant", b.key, None
    yield a1, b1, "hard_negative", b.key, family.detail
    yield a2, b2, "hard_negative", b.key, family.detail
    yield a1, b2, "hard_negative", b.key, family.detail


def _unrelated(families: list[Family]) -> Iterator[tuple[Family, Family]]:
    """Family pairs from different domains, chosen by a fixed stride (two of every three)."""
    for index, family in enumerate(families):
        other = families[(index * 7 + 3) % len(families)]
        if other.domain != family.domain and index % 3 != 2:
            yield family, other


def build() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    counters: dict[tuple[str, str], int] = {}

    def add(
        family: Family,
        pair: tuple[str, str],
        groups: tuple[str, str],
        kind: str,
        detail: str | None,
    ) -> None:
        key = (family.lang, family.domain)
        counters[key] = counters.get(key, 0) + 1
        rows.append(
            {
                "id": f"{family.lang}-{family.domain}-{counters[key]:03d}",
                "text_a": pair[0],
                "text_b": pair[1],
                "label": int(groups[0] == groups[1]),
                "lang": family.lang,
                "domain": family.domain,
                "kind": kind,
                "group": groups[0],
                "group_b": groups[1],
                "detail": detail,
            }
        )

    def group(family: Family, key: str) -> str:
        return f"{family.lang}-{family.fid}-{key}"

    for families in (EN, ZH):
        for index, family in enumerate(families):
            a_key = family.values[0].key
            for text_a, text_b, kind, b_key, detail in family_pairs(index, family):
                first = a_key if kind == "hard_negative" else b_key
                add(
                    family,
                    (text_a, text_b),
                    (group(family, first), group(family, b_key)),
                    kind,
                    detail,
                )
        for family, other in _unrelated(families):
            a, b = family.values[0], other.values[0]
            texts = (render(family.templates[0], a), render(other.templates[1], b))
            add(family, texts, (group(family, a.key), group(other, b.key)), "unrelated", None)
    return rows


def validate(rows: list[dict[str, object]]) -> None:
    """Raise ValueError unless ids are unique, pairs distinct and labels agree with groups."""
    ids, pairs, group_of = set(), set(), {}
    for row in rows:
        if row["id"] in ids:
            raise ValueError(f"duplicate id {row['id']}")
        ids.add(row["id"])
        a, b = row["text_a"], row["text_b"]
        if a == b:
            raise ValueError(f"{row['id']}: identical texts")
        key = frozenset((a, b))
        if key in pairs:
            raise ValueError(f"{row['id']}: duplicate pair")
        pairs.add(key)
        for text, group in ((a, row["group"]), (b, row["group_b"])):
            if group_of.setdefault(text, group) != group:
                raise ValueError(f"{row['id']}: {text!r} is in {group} and {group_of[text]}")
        if row["label"] != int(row["group"] == row["group_b"]):
            raise ValueError(f"{row['id']}: label disagrees with groups")


def serialise(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the shipped file is stale")
    args = parser.parse_args()
    rows = build()
    validate(rows)
    text = serialise(rows)
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is stale; run scripts/build_pairs.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    positives = sum(row["label"] for row in rows)
    zh = sum(row["lang"] == "zh" for row in rows)
    print(f"wrote {len(rows)} pairs ({positives} positive, {zh} zh) to {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
