"""Build semcache/data/compress_prompts.jsonl: the prompt-compression corpus (written by us).

Every record is one realistic long prompt, English or Chinese, of four kinds: a verbose system
prompt, a support template, a RAG context with retrieved passages, a coding task with
constraints. Each is built from hand-written sentences with slots (companies, numbers, dates,
names, code, URLs) filled by a seeded RNG, and comes in two versions: ``verbose`` (what people
actually send: greetings, "Please note that", "I want you to", the key instruction said
twice, a passage retrieved twice, blank-line runs) and concise (the same content, plainly).

``details`` lists what must survive any compression: every item is a substring of the prompt
(case-insensitive) with a kind: number, date, negation, entity, comparison, code, url.

    python scripts/build_compress_prompts.py            # writes the file, prints a summary
    python scripts/build_compress_prompts.py --check    # fails if the file is not up to date
"""

# ruff: noqa: E501  (hand-written sentence data reads best one item per line)
from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20261129
OUT = Path(__file__).resolve().parent.parent / "semcache" / "data" / "compress_prompts.jsonl"
PER_KIND = 15  # bases per (language, kind); each base gives a verbose and a concise record


@dataclass
class Item:
    """A sentence: ``imp`` (an instruction), ``stmt`` (a fact) or ``raw`` (kept as written)."""

    text: str
    role: str = "imp"
    details: list[tuple[str, str]] = field(default_factory=list)
    key: bool = False  # a key instruction that a verbose prompt repeats


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# -- English --------------------------------------------------------------------------------
EN_COMPANIES = [
    ("Northwind Bank", "mobile banking app"),
    ("Acme Cloud", "hosting platform"),
    ("Bluebird Airlines", "booking site"),
    ("Helio Energy", "solar installation service"),
    ("Quillpad", "note-taking app"),
    ("Mapleton Clinic", "patient portal"),
    ("Orbit Mobile", "prepaid phone plans"),
    ("Larkspur Books", "online bookstore"),
    ("Vantage Fitness", "gym membership app"),
    ("Cobalt Insurance", "car insurance portal"),
]
EN_LANGS = ["English", "Spanish", "German", "French"]
EN_IMP_OPENERS = [
    "I want you to ",
    "You need to ",
    "Please make sure you ",
    "Please ",
    "I would like you to ",
    "It is very important that you ",
    "Please make sure to ",
]
EN_STMT_OPENERS = [
    "Please note that ",
    "It is important to note that ",
    "Keep in mind that ",
    "It should be noted that ",
    "Please be aware that ",
]
EN_REPEATS = ["Again, ", "Remember: ", "As mentioned before, ", "To repeat, ", "Please "]
EN_GREETINGS = [
    "Hi there! I hope you're doing well.",
    "Hello! I hope this message finds you well.",
    "Hey, I hope you are doing well!",
]
EN_CLOSINGS = ["Thanks in advance!", "Thank you so much for your help!", "Thanks a lot in advance."]
EN_WORDY = [
    ("to keep", "in order to keep"),
    ("because", "due to the fact that"),
    ("concisely", "in a concise manner"),
    ("politely", "in a polite manner"),
    ("about", "with regard to"),
    ("if", "in the event that"),
]


def en_system(rng: random.Random) -> tuple[str, list[Item]]:
    company, product = rng.choice(EN_COMPANIES)
    words, days, digits = rng.choice([80, 120, 150, 200]), rng.choice([5, 7, 10]), 4
    price, gb = rng.choice(["9.99", "14.50", "19", "24.99"]), rng.choice([50, 100, 250])
    h1, h2 = rng.choice([("8:00", "18:00"), ("9:00", "17:00"), ("7:30", "20:00")])
    tz = rng.choice(["CET", "EST", "GMT", "PST"])
    lang = rng.choice(EN_LANGS)
    url = f"https://help.{company.split()[0].lower()}.example/{rng.choice(['fees', 'pricing', 'plans'])}"
    items = [
        Item(
            f"act as the customer support assistant for {company}'s {product}",
            details=[("entity", company)],
        ),
        Item(
            f"keep every reply under {words} words and answer {{concisely}}",
            details=[("number", f"{words} words")],
            key=True,
        ),
        Item(
            f"never share a customer's full account number or more than the last {digits} digits "
            "of their card",
            details=[("negation", "never share"), ("number", f"last {digits} digits")],
            key=True,
        ),
        Item(
            f"do not promise refunds, {{because}} refunds are decided by the billing team within "
            f"{days} business days",
            details=[("negation", "not promise refunds"), ("number", f"{days} business days")],
        ),
        Item(
            f"support hours are {h1} to {h2} {tz}, Monday to Friday",
            role="stmt",
            details=[("number", h1), ("number", h2), ("entity", tz), ("date", "Monday")],
        ),
        Item(
            f"the premium plan costs ${price} per month and includes {gb} GB of storage",
            role="stmt",
            details=[("number", f"${price}"), ("number", f"{gb} GB")],
        ),
        Item(
            f"reply in {lang} unless the customer writes in another language",
            details=[("entity", lang)],
            key=True,
        ),
        Item(
            "list plans from the cheapest to the most expensive when you compare them",
            details=[("comparison", "cheapest"), ("comparison", "most expensive")],
        ),
        Item(f"link to {url} when the customer asks about fees", details=[("url", url)]),
        Item(
            "return the answer as JSON with the keys `answer`, `sources` and `confidence`",
            details=[("code", "`answer`"), ("code", "`confidence`")],
        ),
        Item(
            "escalate to a human agent {if} the customer mentions fraud, a lost card or a legal "
            "complaint",
            details=[("term", "fraud")],
        ),
    ]
    rng.shuffle(items[1:])
    return f"You are the support assistant of {company}.", items[: rng.randint(8, 11)]


EN_ORDERS = [
    ("a standing desk", "$349.00", "March 3, 2025"),
    ("two pairs of running shoes", "$189.98", "January 17, 2025"),
    ("a 27-inch monitor", "$279.99", "November 28, 2024"),
    ("a coffee grinder", "$64.50", "February 9, 2025"),
    ("a child car seat", "$219.00", "April 22, 2025"),
    ("a set of 6 dining chairs", "$540.00", "December 5, 2024"),
]


def en_support(rng: random.Random) -> tuple[str, list[Item]]:
    company, _ = rng.choice(EN_COMPANIES)
    thing, amount, date = rng.choice(EN_ORDERS)
    order = f"ORD-{rng.randint(10000, 99999)}"
    window = rng.choice([14, 30, 60])
    name = rng.choice(["Maria Gomez", "Daniel Okafor", "Priya Nair", "Tom Becker", "Aiko Tanaka"])
    issue = rng.choice(
        ["arrived damaged", "never arrived", "is missing a part", "is the wrong size"]
    )
    items = [
        Item(
            f"write a reply from the {company} support team to the customer message below",
            details=[("entity", company)],
        ),
        Item(
            f"customer message from {name}: I ordered {thing} on {date} (order {order}) and paid "
            f"{amount}. It {issue}. I want a replacement, not a refund.",
            role="raw",
            details=[
                ("entity", name.split()[1]),
                ("date", date.split()[0]),
                ("number", order),
                ("number", amount),
                ("negation", "not a refund"),
            ],
        ),
        Item(
            "address the customer by their first name and apologise once, not repeatedly",
            details=[("negation", "not repeatedly")],
            key=True,
        ),
        Item(
            f"our policy allows replacements within {window} days of delivery",
            role="stmt",
            details=[("number", f"{window} days")],
        ),
        Item(
            "do not offer store credit or a discount code unless the customer asks for one",
            details=[("negation", "not offer store credit")],
            key=True,
        ),
        Item(
            f"quote the order number {order} in the first sentence",
            details=[("number", order), ("comparison", "first sentence")],
        ),
        Item(
            'end with the standard sign-off "Kind regards, The Support Team"',
            details=[("code", "Kind regards, The Support Team")],
        ),
        Item(
            "write {politely} and keep the reply under 120 words", details=[("number", "120 words")]
        ),
    ]
    return "You help our support agents answer customers.", items


EN_RAG = [
    (
        "How long is the warranty on the X200 robot vacuum, and what does it cover?",
        [
            (
                "The X200 robot vacuum carries a 24-month warranty that covers the motor and the "
                "battery.",
                [("number", "24-month"), ("entity", "X200")],
            ),
            (
                "Brushes, filters and other wear parts are not covered by the warranty.",
                [("negation", "not covered")],
            ),
            (
                "Warranty claims must be filed within 30 days of discovering a defect.",
                [("number", "30 days")],
            ),
            (
                "The older X100 model, discontinued in 2021, had a 12-month warranty.",
                [("number", "2021"), ("number", "12-month")],
            ),
        ],
    ),
    (
        "What is the maximum carry-on weight on Bluebird Airlines economy flights?",
        [
            (
                "Economy passengers on Bluebird Airlines may bring one carry-on bag of up to 8 kg.",
                [("number", "8 kg"), ("entity", "Bluebird Airlines")],
            ),
            (
                "Business class passengers may bring two carry-on bags with a combined weight of up "
                "to 18 kg.",
                [("number", "18 kg")],
            ),
            (
                "Bags heavier than the limit are checked at the gate for a fee of 45 EUR.",
                [("number", "45 EUR"), ("comparison", "heavier")],
            ),
            (
                "Musical instruments are not counted against the carry-on limit.",
                [("negation", "not counted")],
            ),
        ],
    ),
    (
        "When does the Mapleton Clinic lab open on weekends?",
        [
            (
                "The Mapleton Clinic lab opens at 7:00 on weekdays and at 9:00 on Saturdays.",
                [("number", "7:00"), ("number", "9:00"), ("date", "Saturdays")],
            ),
            ("The lab is closed on Sundays and public holidays.", [("date", "Sundays")]),
            (
                "Fasting blood tests should be booked before 10:30.",
                [("number", "10:30"), ("comparison", "before")],
            ),
            (
                "Results are usually available within 48 hours in the patient portal.",
                [("number", "48 hours")],
            ),
        ],
    ),
    (
        "How much does the Acme Cloud Standard plan cost compared to the Pro plan?",
        [
            (
                "The Acme Cloud Standard plan costs $12 per month and includes 2 vCPUs.",
                [("number", "$12"), ("entity", "Acme Cloud")],
            ),
            (
                "The Pro plan costs $29 per month and includes 4 vCPUs and daily backups.",
                [("number", "$29"), ("number", "4 vCPUs")],
            ),
            (
                "Annual billing is 15% cheaper than monthly billing on every plan.",
                [("number", "15%"), ("comparison", "cheaper")],
            ),
            (
                "Bandwidth above 3 TB per month is billed at $0.01 per GB.",
                [("number", "3 TB"), ("comparison", "above")],
            ),
        ],
    ),
    (
        "Can I cancel my Vantage Fitness membership during the minimum term?",
        [
            (
                "Vantage Fitness memberships have a minimum term of 6 months.",
                [("number", "6 months"), ("entity", "Vantage Fitness")],
            ),
            (
                "Members cannot cancel during the minimum term except for medical reasons or a move "
                "of more than 25 km.",
                [("negation", "cannot cancel"), ("number", "25 km")],
            ),
            ("After the minimum term, the notice period is 30 days.", [("number", "30 days")]),
            (
                "A membership can be paused for up to 3 months per year at no cost.",
                [("number", "3 months")],
            ),
        ],
    ),
    (
        "What interest does the Northwind Bank savings account pay?",
        [
            (
                "The Northwind Bank Easy Saver account pays 3.1% interest per year on balances up "
                "to 50,000 EUR.",
                [("number", "3.1%"), ("number", "50,000")],
            ),
            (
                "Balances above 50,000 EUR earn 1.5% per year.",
                [("number", "1.5%"), ("comparison", "above")],
            ),
            (
                "Interest is paid monthly, on the first business day of the month.",
                [("comparison", "first business day")],
            ),
            (
                "Withdrawals are free and there is no minimum deposit.",
                [("negation", "no minimum deposit")],
            ),
        ],
    ),
]


def en_rag(rng: random.Random) -> tuple[str, list[Item]]:
    question, passages = rng.choice(EN_RAG)
    items = [
        Item(
            "answer the question using only the context below",
            details=[("term", "context below")],
            key=True,
        ),
        Item(
            "if the context does not contain the answer, say that you do not know",
            details=[("negation", "not contain")],
            key=True,
        ),
    ]
    order = list(range(len(passages)))
    rng.shuffle(order)
    for n, i in enumerate(order, 1):
        text, details = passages[i]
        items.append(Item(f"[Document {n}] {text}", role="raw", details=list(details)))
    items.append(Item(f"Question: {question}", role="raw", details=[]))
    return "Context documents follow.", items


EN_TASKS = [
    (
        "parse_invoice",
        "Python",
        "parses an invoice line like `3 x Widget @ 4.50` into a dict",
        "def parse_invoice(line: str) -> dict:\n    ...",
        "Python 3.11",
    ),
    (
        "rank_products",
        "Python",
        "sorts products by rating in descending order and then by price",
        "def rank_products(products: list[dict]) -> list[dict]:\n    ...",
        "Python 3.9",
    ),
    (
        "debounce",
        "TypeScript",
        "wraps a callback so it runs at most once every 300 ms",
        "export function debounce<T>(fn: (arg: T) => void, waitMs = 300) {\n}",
        "TypeScript 5.4",
    ),
    (
        "MergeIntervals",
        "Go",
        "merges overlapping time intervals and returns them sorted by start",
        "func MergeIntervals(in []Interval) []Interval {\n}",
        "Go 1.22",
    ),
    (
        "slugify",
        "Python",
        "turns a title into a URL slug of at most 60 characters",
        "def slugify(title: str, max_len: int = 60) -> str:\n    ...",
        "Python 3.10",
    ),
]
EN_FENCE = "```"


def en_coding(rng: random.Random) -> tuple[str, list[Item]]:
    fn, lang, does, stub, version = rng.choice(EN_TASKS)
    lines = rng.choice([30, 40, 50])
    spec = f"https://docs.example.dev/specs/{fn.lower()}"
    code = f"{EN_FENCE}{lang.lower()}\n{stub}\n{EN_FENCE}"
    items = [
        Item(
            f"write a function `{fn}` in {lang} that {does}",
            details=[("code", f"`{fn}`"), ("entity", lang)],
        ),
        Item(f"here is the current stub:\n{code}", role="raw", details=[("code", stub)]),
        Item(
            "do not use any third-party libraries; only the standard library is allowed",
            details=[("negation", "not use any third-party libraries")],
            key=True,
        ),
        Item(
            f"the code must run on {version}", role="stmt", details=[("number", version.split()[1])]
        ),
        Item(
            f"keep the function shorter than {lines} lines",
            details=[("number", f"{lines} lines"), ("comparison", "shorter")],
            key=True,
        ),
        Item(
            "raise `ValueError` with a clear message when the input is empty",
            details=[("code", "`ValueError`")],
        ),
        Item(
            "do not change the public signature shown in the stub",
            details=[("negation", "not change the public signature")],
        ),
        Item(f"follow the spec at {spec} for edge cases", details=[("url", spec)]),
        Item("add three unit tests {to_keep} regressions out", details=[]),
    ]
    return f"You are a senior {lang} engineer reviewing and writing code.", items


# -- Chinese --------------------------------------------------------------------------------
ZH_COMPANIES = [
    ("星河银行", "手机银行"),
    ("云帆科技", "云服务器"),
    ("青鸟航空", "机票预订"),
    ("晨光教育", "在线课程"),
    ("悦享生活", "外卖平台"),
    ("安康医院", "线上问诊"),
    ("极速通信", "流量套餐"),
    ("书香阁", "网上书店"),
]
ZH_IMP_OPENERS = ["我希望你", "你需要", "请你务必", "请你", "我想让你", "我需要你"]
ZH_STMT_OPENERS = ["请注意，", "需要注意的是，", "值得注意的是，", "请你注意，"]
ZH_REPEATS = ["再次强调，", "请务必记住，", "重要的事情说三遍：", "请注意，"]
ZH_GREETINGS = ["你好！希望你一切都好。", "您好！", "你好，"]
ZH_CLOSINGS = ["非常感谢！", "先谢谢了！", "谢谢你的帮助！"]
ZH_WORDY = [("翻译", "进行翻译"), ("总结", "进行总结"), ("尽量", "尽可能地"), ("为了", "为了能够")]


def zh_system(rng: random.Random) -> tuple[str, list[Item]]:
    company, product = rng.choice(ZH_COMPANIES)
    chars, days = rng.choice([100, 150, 200, 300]), rng.choice([3, 5, 7])
    price, gb = rng.choice(["19.9", "29", "49.9", "99"]), rng.choice([20, 50, 100])
    h1, h2 = rng.choice([("8:00", "22:00"), ("9:00", "18:00"), ("9:30", "21:30")])
    url = f"https://help.example.cn/{rng.choice(['fees', 'plans', 'refund'])}"
    items = [
        Item(f"扮演{company}{product}的客服助手", details=[("entity", company)]),
        Item(
            f"每次回复不超过{chars}字，语言{{尽量}}简洁",
            details=[("number", f"{chars}字")],
            key=True,
        ),
        Item(
            "不要透露用户的完整身份证号或银行卡号",
            details=[("negation", "不要透露")],
            key=True,
        ),
        Item(
            f"不要承诺退款，退款由财务部门在{days}个工作日内审核",
            details=[("negation", "不要承诺"), ("number", f"{days}个工作日")],
        ),
        Item(
            f"人工客服的服务时间是周一至周五{h1}到{h2}",
            role="stmt",
            details=[("date", "周一"), ("number", h1), ("number", h2)],
        ),
        Item(
            f"高级套餐每月{price}元，包含{gb}GB流量",
            role="stmt",
            details=[("number", f"{price}元"), ("number", f"{gb}GB")],
        ),
        Item("比较套餐时，按价格从低到高排列", role="stmt", details=[("comparison", "从低到高")]),
        Item(f"用户询问收费标准时，附上链接 {url}", role="stmt", details=[("url", url)]),
        Item("用中文回答，除非用户使用英文提问", details=[("entity", "英文")], key=True),
        Item(
            "以JSON格式输出，包含`answer`和`confidence`两个字段",
            details=[("code", "`answer`"), ("code", "`confidence`"), ("entity", "JSON")],
        ),
    ]
    rng.shuffle(items[1:])
    return f"你是{company}的客服助手。", items[: rng.randint(7, 10)]


ZH_ORDERS = [
    ("一台空气净化器", "1299元", "3月15日"),
    ("两双运动鞋", "598元", "1月8日"),
    ("一个儿童安全座椅", "899元", "4月2日"),
    ("一套餐具", "268元", "2月20日"),
    ("一台27英寸显示器", "1599元", "11月11日"),
]


def zh_support(rng: random.Random) -> tuple[str, list[Item]]:
    company, _ = rng.choice(ZH_COMPANIES)
    thing, amount, date = rng.choice(ZH_ORDERS)
    order = f"DD{rng.randint(100000, 999999)}"
    window = rng.choice([7, 15, 30])
    name = rng.choice(["王女士", "李先生", "张女士", "陈先生"])
    issue = rng.choice(["收到时外包装破损", "一直没有收到", "缺少配件", "颜色发错了"])
    items = [
        Item(f"以{company}客服团队的名义，回复下面这位顾客的留言", details=[("entity", company)]),
        Item(
            f"顾客{name}的留言：我在{date}买了{thing}（订单号{order}），付款{amount}，结果{issue}。"
            "我要换货，不要退款。",
            role="raw",
            details=[
                ("date", date),
                ("number", order),
                ("number", amount),
                ("negation", "不要退款"),
            ],
        ),
        Item(
            "称呼顾客时用姓氏加先生或女士，只道歉一次，不要反复道歉",
            details=[("negation", "不要反复")],
            key=True,
        ),
        Item(
            f"我们的政策是签收后{window}天内可以换货",
            role="stmt",
            details=[("number", f"{window}天")],
        ),
        Item(
            "除非顾客主动要求，否则不要提供优惠券或代金券",
            details=[("negation", "不要提供优惠券")],
            key=True,
        ),
        Item(
            f"在第一句话里写出订单号{order}", details=[("number", order), ("comparison", "第一句")]
        ),
        Item(
            "结尾使用固定落款「祝您生活愉快，客服团队」",
            details=[("code", "祝您生活愉快，客服团队")],
        ),
        Item("语气礼貌，回复控制在150字以内", details=[("number", "150字")]),
    ]
    return "你负责帮助客服人员回复顾客。", items


ZH_RAG = [
    (
        "X200扫地机器人的保修期是多久？保修范围包括什么？",
        [
            (
                "X200扫地机器人提供24个月保修，保修范围包括电机和电池。",
                [("number", "24个月"), ("entity", "X200")],
            ),
            ("滚刷、滤网等易耗件不在保修范围内。", [("negation", "不在保修范围")]),
            ("发现故障后须在30天内提交保修申请。", [("number", "30天")]),
            (
                "已于2021年停产的X100型号保修期为12个月。",
                [("number", "2021年"), ("number", "12个月")],
            ),
        ],
    ),
    (
        "青鸟航空经济舱手提行李的重量上限是多少？",
        [
            (
                "青鸟航空经济舱旅客可携带一件不超过8公斤的手提行李。",
                [("number", "8公斤"), ("entity", "青鸟航空")],
            ),
            ("公务舱旅客可携带两件手提行李，总重量不超过18公斤。", [("number", "18公斤")]),
            (
                "超过重量限制的行李须在登机口托运，收费300元。",
                [("number", "300元"), ("comparison", "超过")],
            ),
            ("乐器不计入手提行李额度。", [("negation", "不计入")]),
        ],
    ),
    (
        "安康医院检验科周末几点开门？",
        [
            (
                "安康医院检验科工作日早上7:00开门，周六早上9:00开门。",
                [("number", "7:00"), ("number", "9:00"), ("date", "周六")],
            ),
            ("检验科周日及法定节假日不开放。", [("date", "周日"), ("negation", "不开放")]),
            ("空腹抽血请在10:30之前预约。", [("number", "10:30"), ("comparison", "之前")]),
            ("检验结果通常在48小时内上传到患者端。", [("number", "48小时")]),
        ],
    ),
    (
        "云帆科技标准版和专业版云服务器分别多少钱？",
        [
            (
                "云帆科技标准版每月68元，配置2核CPU和4GB内存。",
                [("number", "68元"), ("entity", "云帆科技")],
            ),
            ("专业版每月158元，配置4核CPU、8GB内存，并提供每日备份。", [("number", "158元")]),
            ("按年付费比按月付费便宜15%。", [("number", "15%"), ("comparison", "便宜")]),
            (
                "每月流量超过3TB的部分按每GB 0.5元计费。",
                [("number", "3TB"), ("comparison", "超过")],
            ),
        ],
    ),
    (
        "星河银行的定期存款利率是多少？",
        [
            (
                "星河银行一年期定期存款年利率为1.65%。",
                [("number", "1.65%"), ("entity", "星河银行")],
            ),
            (
                "三年期定期存款年利率为2.35%，比一年期高0.7个百分点。",
                [("number", "2.35%"), ("comparison", "高")],
            ),
            ("提前支取的部分按活期利率0.2%计息。", [("number", "0.2%")]),
            ("起存金额为50元，没有上限。", [("number", "50元"), ("negation", "没有上限")]),
        ],
    ),
]


def zh_rag(rng: random.Random) -> tuple[str, list[Item]]:
    question, passages = rng.choice(ZH_RAG)
    items = [
        Item("只根据下面的资料回答问题", details=[("term", "资料")], key=True),
        Item(
            "如果资料中没有答案，就回答不知道，不要编造",
            details=[("negation", "不要编造")],
            key=True,
        ),
    ]
    order = list(range(len(passages)))
    rng.shuffle(order)
    for n, i in enumerate(order, 1):
        text, details = passages[i]
        items.append(Item(f"【资料{n}】{text}", role="raw", details=list(details)))
    items.append(Item(f"问题：{question}", role="raw", details=[]))
    return "以下是检索到的资料。", items


ZH_TASKS = [
    (
        "parse_invoice",
        "Python",
        "把发票行（例如 `3 x Widget @ 4.50`）解析成字典",
        "def parse_invoice(line: str) -> dict:\n    ...",
        "Python 3.11",
    ),
    (
        "rank_products",
        "Python",
        "按评分降序、再按价格升序对商品排序",
        "def rank_products(products: list[dict]) -> list[dict]:\n    ...",
        "Python 3.9",
    ),
    (
        "debounce",
        "TypeScript",
        "包装一个回调函数，使它每300毫秒最多执行一次",
        "export function debounce<T>(fn: (arg: T) => void, waitMs = 300) {\n}",
        "TypeScript 5.4",
    ),
    (
        "MergeIntervals",
        "Go",
        "合并重叠的时间区间，并按开始时间排序返回",
        "func MergeIntervals(in []Interval) []Interval {\n}",
        "Go 1.22",
    ),
]


def zh_coding(rng: random.Random) -> tuple[str, list[Item]]:
    fn, lang, does, stub, version = rng.choice(ZH_TASKS)
    lines = rng.choice([30, 40, 50])
    spec = f"https://docs.example.dev/specs/{fn.lower()}"
    code = f"{EN_FENCE}{lang.lower()}\n{stub}\n{EN_FENCE}"
    items = [
        Item(f"用{lang}写一个函数`{fn}`，{does}", details=[("code", f"`{fn}`"), ("entity", lang)]),
        Item(f"下面是现有的函数签名：\n{code}", role="raw", details=[("code", stub)]),
        Item(
            "不要使用任何第三方库，只能使用标准库",
            details=[("negation", "不要使用任何第三方库")],
            key=True,
        ),
        Item(f"代码必须能在{version}上运行", role="stmt", details=[("number", version.split()[1])]),
        Item(
            f"函数长度少于{lines}行",
            details=[("number", f"{lines}行"), ("comparison", "少于")],
            key=True,
        ),
        Item("输入为空时抛出`ValueError`并给出清楚的错误信息", details=[("code", "`ValueError`")]),
        Item("不要修改现有的函数签名", details=[("negation", "不要修改")]),
        Item(f"边界情况参考规范文档 {spec}", details=[("url", spec)]),
        Item("补充三个单元测试，防止以后出现回归", details=[]),
    ]
    return f"你是一名资深{lang}工程师。", items


# -- rendering ------------------------------------------------------------------------------
def fill(text: str, verbose: bool, wordy: list[tuple[str, str]]) -> str:
    """Resolve the ``{concisely}``-style slots to their plain or wordy form."""
    names = {
        "concisely": 2,
        "because": 1,
        "politely": 3,
        "if": 5,
        "to_keep": 0,
        "尽量": 2,
    }
    for name, index in names.items():
        if "{" + name + "}" in text:
            plain, long = wordy[index]
            text = text.replace("{" + name + "}", long if verbose else plain)
    return text


def render_en(head: str, items: list[Item], rng: random.Random, verbose: bool) -> str:
    sentences: list[str] = []
    for item in items:
        text = fill(item.text, verbose, EN_WORDY)
        if item.role == "raw":
            sentences.append(cap(text))
            continue
        if verbose and rng.random() < 0.6:
            openers = EN_IMP_OPENERS if item.role == "imp" else EN_STMT_OPENERS
            sentences.append(rng.choice(openers) + text + ".")
        else:
            sentences.append(cap(text) + ".")
    if not verbose:
        return head + "\n\n" + "\n".join(sentences)
    keys = [i for i in items if i.key]
    repeats = [rng.choice(EN_REPEATS) + fill(i.text, True, EN_WORDY) + "." for i in keys]
    blank = "\n" * rng.choice([3, 4, 5])
    body = "\n".join(s + (blank if rng.random() < 0.25 else "") for s in sentences)
    return (
        f"{rng.choice(EN_GREETINGS)} {head}{blank}{body}{blank}"
        + "  ".join(repeats)
        + f"{blank}{rng.choice(EN_CLOSINGS)}"
    )


def render_zh(head: str, items: list[Item], rng: random.Random, verbose: bool) -> str:
    sentences: list[str] = []
    for item in items:
        text = fill(item.text, verbose, ZH_WORDY)
        if item.role == "raw":
            sentences.append(text)
            continue
        if verbose and rng.random() < 0.6:
            openers = ZH_IMP_OPENERS if item.role == "imp" else ZH_STMT_OPENERS
            sentences.append(rng.choice(openers) + text + "。")
        else:
            sentences.append(text + "。")
    if not verbose:
        return head + "\n\n" + "\n".join(sentences)
    keys = [i for i in items if i.key]
    repeats = [rng.choice(ZH_REPEATS) + fill(i.text, True, ZH_WORDY) + "。" for i in keys]
    blank = "\n" * rng.choice([3, 4, 5])
    intro = rng.choice(["作为一个AI助手，", "作为一个人工智能助手，", ""])
    body = "\n".join(s + (blank if rng.random() < 0.25 else "") for s in sentences)
    return (
        f"{rng.choice(ZH_GREETINGS)}{intro}{head}{blank}{body}{blank}"
        + "".join(repeats)
        + f"{blank}{rng.choice(ZH_CLOSINGS)}"
    )


def duplicate_passages(items: list[Item], rng: random.Random, lang: str) -> list[Item]:
    """A retriever that returns the same chunk from two sources: copy one or two passages."""
    docs = [i for i in items if i.role == "raw" and i.text.startswith(("[Document", "【资料"))]
    out = list(items)
    question = out.pop()
    for n, doc in enumerate(rng.sample(docs, k=min(len(docs), rng.choice([1, 2]))), len(docs) + 1):
        body = doc.text.split("]", 1)[1] if lang == "en" else doc.text.split("】", 1)[1]
        label = f"[Document {n}]" if lang == "en" else f"【资料{n}】"
        out.append(Item(label + body, role="raw"))
    out.append(question)
    return out


BUILDERS = {
    ("en", "system_prompt"): en_system,
    ("en", "support_template"): en_support,
    ("en", "rag_context"): en_rag,
    ("en", "coding_task"): en_coding,
    ("zh", "system_prompt"): zh_system,
    ("zh", "support_template"): zh_support,
    ("zh", "rag_context"): zh_rag,
    ("zh", "coding_task"): zh_coding,
}


def build() -> list[dict]:
    rng = random.Random(SEED)
    records: list[dict] = []
    for (lang, kind), builder in BUILDERS.items():
        for n in range(PER_KIND):
            head, items = builder(rng)
            render = render_en if lang == "en" else render_zh
            for verbose in (True, False):
                chosen = (
                    duplicate_passages(items, rng, lang)
                    if verbose and kind == "rag_context"
                    else items
                )
                text = render(head, chosen, random.Random(rng.random()), verbose)
                details = [{"kind": k, "text": t} for item in items for k, t in item.details]
                missing = [d for d in details if d["text"].casefold() not in text.casefold()]
                if missing:
                    raise SystemExit(f"{lang}/{kind}/{n}: details not in the prompt: {missing}")
                messages = [{"role": "user", "content": text}]
                if kind == "system_prompt":
                    messages = [
                        {"role": "system", "content": text},
                        {
                            "role": "user",
                            "content": "Hi, what can you help me with?"
                            if lang == "en"
                            else "你好，你能帮我做什么？",
                        },
                    ]
                records.append(
                    {
                        "id": f"{lang}-{kind}-{n:02d}-{'verbose' if verbose else 'plain'}",
                        "lang": lang,
                        "kind": kind,
                        "verbose": verbose,
                        "messages": messages,
                        "details": _unique(details),
                    }
                )
    return records


def _unique(details: list[dict]) -> list[dict]:
    seen: set[tuple[str, str]] = set()
    out = []
    for d in details:
        key = (d["kind"], d["text"])
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is stale")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in build())
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is out of date; rerun {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()]
    verbose = sum(r["verbose"] for r in records)
    print(f"wrote {len(records)} prompts ({verbose} verbose) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
