"""Hand-written long contexts and instruction templates for ``scripts/build_collisions.py``.

Every document, template and question here was written for semcache; nothing is copied from a
data set. A document is several paragraphs (40+ lines) followed or preceded by a question; a
template is a ~120-word instruction followed by a short customer message. Each question or
message has an optional paraphrase (same answer), and neighbouring questions of one document
have different answers.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ask:
    """One question (or customer message) and, when given, a paraphrase with the same answer."""

    text: str
    paraphrase: str | None = None


@dataclass(frozen=True)
class Context:
    """A long shared text and the questions asked about it."""

    cid: str
    lang: str
    text: str
    asks: tuple[Ask, ...]


QUARTERLY_REPORT = """\
Northwind Pumps Ltd. - Report for the third quarter

1. Overview
Northwind Pumps designs and sells circulation pumps for heating systems, small industrial
pumps for breweries and dairies, and a subscription service that monitors installed pumps.
The quarter ran from 1 July to 30 September. Demand in the residential segment recovered
after a weak spring, while the industrial segment grew more slowly than planned because two
large brewery projects in Bavaria were postponed to the next year.

2. Revenue and margins
Revenue for the quarter was 48.2 million euros, up from 44.9 million in the same quarter of
last year. Residential pumps contributed 27.5 million, industrial pumps 14.1 million and the
monitoring subscriptions 6.6 million. Gross margin improved to 38.4 percent, mainly because
copper prices fell and the new winding line in Tilburg reduced scrap. Operating expenses rose
by 9 percent, driven by hiring in the service organisation and a trade fair in Milan.
Operating profit was 7.9 million euros, an operating margin of 16.4 percent.

3. Cash and financing
Cash at the end of the quarter stood at 21.3 million euros. Inventory grew by 3.2 million
because the company built stock ahead of the winter season. The revolving credit facility of
30 million euros remained undrawn. Capital expenditure was 2.4 million, most of it for the
second test bench in Tilburg and for warehouse software.

4. Operations
The Tilburg plant ran two shifts for the whole quarter and a third shift in September. Lead
times for residential pumps fell from six weeks to four. The plant in Brno produced the first
series of the compact P-40 pump; early field returns are below one percent. A fire alarm on
14 August stopped production in Brno for one day; nobody was hurt and no equipment was damaged.

5. Customers and markets
Germany remained the largest market with 41 percent of revenue, followed by the Netherlands
with 18 percent and Poland with 9 percent. The number of monitored pumps passed 62,000. The
churn rate of monitoring subscriptions was 1.1 percent per month, slightly better than the
previous quarter. A framework agreement with a Danish housing association was signed in
September and will deliver about 4,000 pumps over two years.

6. Risks
The report names several risks. Energy prices may rise again in winter and slow renovation
projects. The company depends on a single supplier for the control boards of the P-40.
A new European efficiency regulation could require redesigning two older pump families.
Currency moves between the euro and the Polish zloty affect the Brno supply chain. Finally,
the postponed brewery projects could be cancelled rather than delayed.

7. Outlook
Management expects fourth quarter revenue between 50 and 53 million euros and keeps its
full-year guidance of 185 million euros. The board proposes no change to the dividend policy.
The next report will be published on 12 February.
"""

LEASE = """\
Residential lease agreement - Flat 3B, 27 Harbour Street

Parties
This agreement is made between Marlow Property Management (the landlord) and the tenant
named on the signature page. It covers the flat on the third floor, the storage room in the
basement marked 3B, and one bicycle space in the courtyard.

Term
The lease starts on 1 March and runs for twelve months. After the first year it continues
from month to month until either party ends it. The tenant may end the lease after the first
year with two full calendar months of written notice. The landlord may end it only for the
reasons allowed by law and with the notice the law requires.

Rent and payments
The monthly rent is 1,450 dollars, due on the first day of each month. Rent paid after the
fifth day carries a late fee of 50 dollars. Payment is by bank transfer to the account shown
on the invoice; cash is not accepted. Water and building heating are included in the rent.
Electricity, internet and contents insurance are the tenant's responsibility.

Security deposit
The tenant pays a deposit equal to two months of rent before moving in. The landlord holds it
in a separate account and returns it within thirty days after the tenant moves out, minus the
cost of repairing damage beyond normal wear and any rent still owed. The landlord gives an
itemised list of any deductions.

Use of the flat
The flat is for residential use by the tenant and the people listed on the signature page.
Subletting the whole flat is not allowed. Renting out one room requires the landlord's
written consent, which will not be refused without a good reason. Short-term holiday rentals
are forbidden in every case. Quiet hours are from 10 pm to 7 am.

Pets
One cat or one small dog under 10 kilograms is allowed with an additional pet deposit of 300
dollars. Other animals need written permission. The tenant is responsible for any damage the
animal causes and for cleaning shared areas after it.

Repairs and maintenance
The landlord repairs the structure, the roof, the heating, plumbing and electrical systems,
and the appliances supplied with the flat. The tenant replaces light bulbs, keeps drains free
of grease and reports leaks or mould within three days of noticing them. Emergency repairs
can be reported at any hour on the maintenance line. The tenant may not paint walls in dark
colours or drill into tiled surfaces without permission.

Moving out
At the end of the lease the tenant returns all keys and fobs, leaves the flat clean and
removes personal belongings from the storage room. A joint inspection is held on the last day.
"""

POSTMORTEM = """\
Incident review: checkout outage on the web shop

Summary
On Tuesday the web shop's checkout failed for most customers between 14:05 and 15:32 UTC.
Customers could browse and add items to their carts, but the payment step returned an error.
About 11,800 checkout attempts failed. Orders already placed were not affected, and no card
data was exposed. This review follows our blameless format.

Timeline
At 13:50 the platform team deployed version 4.18 of the order service. The deploy included a
database migration that added an index to the orders table. At 14:05 the error rate of the
payment endpoint rose above 40 percent and the on-call engineer was paged at 14:07. At 14:20
the team suspected the payment provider, because its status page showed degraded performance
in Europe. At 14:48 the provider confirmed its systems were healthy. At 15:02 an engineer
noticed that the migration was still running and held a lock on the orders table. At 15:18
the migration was cancelled, and at 15:32 the error rate returned to normal.

Root cause
The index was created without the concurrent option. On a table with 90 million rows the
statement locked writes for the whole time it ran. Every checkout writes a row to the orders
table, so every checkout waited for the lock and then timed out after thirty seconds. The
migration had been tested on a staging database with only 200,000 rows, where it finished in
under two seconds, so nobody saw the problem before the release.

Detection and response
Alerting worked: the page went out two minutes after errors began. The response was slowed by
the provider's status page, which pointed the team in the wrong direction for almost half an
hour. The runbook for checkout errors does not mention database locks. Two engineers were
working on the incident alone until 14:40, when the incident commander joined.

Customer impact
Most affected customers retried later. Support received 430 contacts during the outage and
the following morning. Marketing paused an email campaign that was scheduled for 14:30. We
estimate lost revenue of 160,000 to 210,000 dollars, partly recovered by a discount code sent
to customers whose checkout failed.

Action items
First, the migration tool will reject index creation without the concurrent option on tables
larger than one million rows. Second, staging will get a copy of production data volumes,
anonymised, before the end of next quarter. Third, the checkout runbook will include a step to
check for long-running database locks. Fourth, deploys that include migrations will require a
second reviewer from the database team. Owners and due dates are tracked in the ticket system.
"""

CODE_MODULE = """\
import json
import os
from dataclasses import dataclass


@dataclass
class Config:
    host: str
    port: int
    retries: int
    timeout: float
    tags: list


DEFAULTS = {"host": "localhost", "port": 8080, "retries": 3, "timeout": 2.5, "tags": []}


def parse_config(path):
    if not os.path.exists(path):
        return Config(**DEFAULTS)
    with open(path) as handle:
        raw = json.load(handle)
    merged = DEFAULTS
    merged.update(raw)
    if merged["port"] < 0 or merged["port"] > 65535:
        raise ValueError("port out of range")
    return Config(
        host=merged["host"],
        port=int(merged["port"]),
        retries=int(merged["retries"]),
        timeout=float(merged["timeout"]),
        tags=merged["tags"],
    )


def connect_with_retries(config, connect):
    attempt = 0
    while attempt <= config.retries:
        try:
            return connect(config.host, config.port, timeout=config.timeout)
        except ConnectionError:
            attempt += 1
    raise ConnectionError(f"could not reach {config.host}:{config.port}")


def merge_tags(config, extra):
    for tag in extra:
        if tag not in config.tags:
            config.tags.append(tag)
    return config.tags
"""

ANNUAL_REPORT_ZH = """\
青禾食品股份有限公司 年度经营报告

一、公司概况
青禾食品主要生产冷冻水饺、速冻汤圆和即食米饭，产品销往全国二十六个省份。
公司在郑州、成都和佛山设有三座工厂，员工总数为三千四百人。
本年度公司完成了成都工厂二期扩建，并关闭了一条老旧的汤圆生产线。

二、营业收入与利润
本年度营业收入为二十三亿六千万元，比上年增长百分之十二。
其中冷冻水饺收入十四亿元，速冻汤圆收入五亿二千万元，即食米饭收入四亿四千万元。
毛利率为百分之二十九点五，比上年提高一点二个百分点，主要原因是面粉和猪肉价格回落。
销售费用增长百分之十五，主要用于线上渠道推广和新品试吃活动。
归属于股东的净利润为二亿一千万元，每股收益零点八四元。

三、现金流与投资
年末现金余额为九亿三千万元，经营活动现金流净额为三亿八千万元。
本年度资本开支为二亿六千万元，主要用于成都工厂二期和冷链仓库。
公司没有新增银行借款，资产负债率下降到百分之三十一。

四、生产与质量
三座工厂全年共生产冷冻食品四十一万吨，产能利用率为百分之八十七。
佛山工厂在七月因台风停产两天，没有造成人员伤亡。
全年共收到产品质量投诉一千二百起，比上年减少百分之十八。
公司新建了原料追溯系统，每一批猪肉都可以查到供应的养殖场。

五、销售渠道
超市和大卖场仍是最大的渠道，占收入的百分之四十六。
线上渠道增长最快，收入同比增长百分之四十，占比达到百分之二十二。
餐饮客户占收入的百分之十九，其余来自便利店和社区团购。
华东地区是最大的市场，占收入的百分之三十四，其次是华南和西南。

六、主要风险
报告列出了以下风险：猪肉价格可能再次大幅上涨，推高生产成本；
冷链物流成本上升，偏远地区的配送难以盈利；
行业竞争加剧，主要竞争对手正在降价促销；
新的食品标签规定可能要求更换全部包装；
部分原料依赖少数供应商，一旦断供会影响生产。

七、明年展望
管理层预计明年营业收入增长百分之八到百分之十。
公司计划在武汉新建一座工厂，预计两年后投产。
董事会建议每十股派发现金红利三元，需经股东大会批准。
"""

HANDBOOK_ZH = """\
星桥科技 员工手册（节选）

第一章 工作时间
公司实行每周五天工作制，标准工作时间为上午九点到下午六点，中午休息一小时。
研发部门可以申请弹性工作时间，核心工作时间为上午十点到下午四点。
加班需要提前在系统中申请，并由直属主管批准。
工作日加班按一点五倍工资计算，休息日加班优先安排调休。

第二章 请假制度
员工入职满一年后，每年享有带薪年假十天，满五年后增加到十五天。
年假可以分多次使用，但每次不少于半天，当年未休完的年假最多可以顺延到次年三月底。
病假需要提供医院证明，每年前十天病假按全额工资发放。
婚假为十天，产假按国家规定执行，陪产假为十五天。
请假三天以内由主管审批，三天以上还需要部门负责人审批。

第三章 薪酬与福利
工资在每月十日发放，如遇节假日则提前到最近的工作日。
公司为员工缴纳五险一金，住房公积金的缴存比例为百分之十二。
每位员工每年有两千元的体检和健身补贴，可以在指定机构使用。
年终奖根据公司业绩和个人绩效评估结果发放，一般在春节前发放。

第四章 差旅与报销
出差需要在出发前提交申请，写明目的地、时间和预算。
国内出差的住宿标准为一线城市每晚六百元，其他城市每晚四百元。
乘坐高铁可以选择二等座，四小时以上的行程可以选择一等座。
报销需要在回来后三十天内提交，并附上发票和行程单。
超过标准的费用需要主管说明原因，否则不予报销。

第五章 信息安全
员工不得把公司的源代码和客户数据上传到个人网盘或外部网站。
笔记本电脑必须开启硬盘加密，离开座位时要锁定屏幕。
发现可疑邮件应当立即转发给信息安全团队，不要点击其中的链接。
访客进入办公区需要登记，并由员工全程陪同。

第六章 离职
员工主动离职需要提前三十天书面通知，试用期内提前三天通知即可。
离职前需要归还电脑、门禁卡和其他公司财产，并完成工作交接。
最后一个月的工资在办理完离职手续后的下一个发薪日发放。
"""

EN_CONTEXTS = (
    Context(
        "report",
        "en",
        QUARTERLY_REPORT,
        (
            Ask(
                "What was the total revenue in the quarter?",
                "How much revenue did the company make this quarter in total?",
            ),
            Ask(
                "List every risk the report names.",
                "Which risks does the report mention? Give me all of them.",
            ),
            Ask(
                "Translate the first section into German.",
                "Please give me a German translation of section 1.",
            ),
            Ask(
                "What was the operating margin?", "How high was the operating margin this quarter?"
            ),
            Ask(
                "How much cash did the company have at the end of the quarter?",
                "What was the cash balance at the end of the quarter?",
            ),
            Ask(
                "Which country is the largest market?",
                "What is the company's biggest market by country?",
            ),
            Ask("Summarise the report in three bullet points."),
            Ask("When will the next report be published?"),
        ),
    ),
    Context(
        "lease",
        "en",
        LEASE,
        (
            Ask(
                "When is the rent due each month?",
                "On which day of the month do I have to pay the rent?",
            ),
            Ask("Am I allowed to sublet the flat?", "Can I sublet the apartment under this lease?"),
            Ask(
                "How much is the security deposit?",
                "What deposit do I have to pay before moving in?",
            ),
            Ask(
                "How can I end the lease early?",
                "What do I need to do to terminate the lease before it ends?",
            ),
            Ask(
                "Who pays for repairs to the heating?",
                "Is the landlord or the tenant responsible for fixing the heating?",
            ),
            Ask("Can I keep a dog in the flat?", "Are dogs allowed in the apartment?"),
            Ask("Which utilities are included in the rent?"),
            Ask("What happens if I pay the rent late?"),
        ),
    ),
    Context(
        "postmortem",
        "en",
        POSTMORTEM,
        (
            Ask("What was the root cause of the outage?", "Why did the checkout outage happen?"),
            Ask("How long did the outage last?", "For how many minutes was checkout down?"),
            Ask(
                "List the action items and who owns them.",
                "What follow-up actions does the review list, and who is responsible for each?",
            ),
            Ask(
                "Write a short apology email to affected customers.",
                "Draft a brief email apologising to the customers whose checkout failed.",
            ),
            Ask(
                "Why did the team first suspect the payment provider?",
                "What made the engineers think the payment provider was at fault?",
            ),
            Ask(
                "How much revenue was lost?",
                "What is the estimated revenue loss from the incident?",
            ),
            Ask("What should the runbook say about database locks?"),
            Ask("Rewrite the timeline as a table."),
        ),
    ),
    Context(
        "code",
        "en",
        CODE_MODULE,
        (
            Ask("Find the bugs in this code.", "Are there any bugs in this code? Point them out."),
            Ask(
                "Add type hints to every function.",
                "Please annotate all functions in this module with type hints.",
            ),
            Ask(
                "Write pytest unit tests for parse_config.",
                "Write unit tests with pytest for the parse_config function.",
            ),
            Ask(
                "Explain what connect_with_retries does.",
                "What does the function connect_with_retries do?",
            ),
            Ask("Port this module to Rust.", "Rewrite this module in Rust."),
            Ask(
                "Why does merge_tags change the defaults of later configs?",
                "Why do tags added by merge_tags show up in configs parsed later?",
            ),
            Ask("Rewrite parse_config to use pydantic."),
            Ask("Port this module to Go."),
        ),
    ),
)

ZH_CONTEXTS = (
    Context(
        "report",
        "zh",
        ANNUAL_REPORT_ZH,
        (
            Ask("本年度的营业收入是多少？", "公司今年一共实现了多少营业收入？"),
            Ask("报告列出了哪些风险？请全部列出。", "请把报告中提到的所有风险都列出来。"),
            Ask("把第一部分翻译成英文。", "请将第一部分译成英语。"),
            Ask("本年度的毛利率是多少？", "今年的毛利率达到了多少？"),
            Ask("年末现金余额是多少？", "到年底公司账上有多少现金？"),
            Ask("哪个渠道增长最快？", "增长速度最快的销售渠道是哪一个？"),
            Ask("用三句话总结这份报告。"),
            Ask("董事会建议的分红方案是什么？"),
        ),
    ),
    Context(
        "handbook",
        "zh",
        HANDBOOK_ZH,
        (
            Ask("每年有几天带薪年假？", "员工一年可以休多少天带薪年假？"),
            Ask("工资每个月几号发？", "每月的发薪日是哪一天？"),
            Ask("出差住宿的报销标准是多少？", "出差时住酒店每晚最多可以报销多少钱？"),
            Ask("主动离职需要提前多久通知？", "如果我想辞职，需要提前多少天告诉公司？"),
            Ask("加班工资怎么计算？", "加班费是按什么标准算的？"),
            Ask("病假需要提供什么材料？", "请病假要交哪些证明？"),
            Ask("未休完的年假可以顺延吗？"),
            Ask("访客进入办公区有什么规定？"),
        ),
    ),
)


@dataclass(frozen=True)
class Template:
    """An instruction template with a ``{message}`` slot and the messages put into it."""

    tid: str
    lang: str
    text: str
    asks: tuple[Ask, ...]


SUPPORT_TRIAGE = """\
You are the first-line support assistant for Brightline Home Internet, a fibre provider with \
about two hundred thousand households as customers. Read the customer's message below and \
reply in a friendly, plain tone, in the language the customer used. First, classify the \
message as one of: outage, slow connection, billing, moving house, cancellation, upgrade, \
equipment, or other. Then give the next step the customer should take, in at most three short \
sentences. Never promise a refund, a discount or a technician visit; say that a colleague will \
confirm those. If the customer mentions a safety problem such as a damaged cable or a burning \
smell, tell them to unplug the router and call the emergency line at once. Do not ask for \
passwords or full card numbers. Sign the reply as "Brightline Support".

Customer message: {message}"""

ORDER_EXTRACTION = """\
You extract order changes for Pebble & Pine, an online shop that sells furniture and home \
textiles. The message below was written by a customer who already placed an order. Return a \
single JSON object with the fields "action" (one of cancel, change_address, change_item, \
change_quantity, delivery_date, return, complaint, question), "order_number" (string or null), \
"items" (a list of product names mentioned, possibly empty), "quantity" (integer or null), \
"new_value" (the requested new address, date or item, or null) and "urgent" (true only if the \
customer says the matter is urgent or mentions a deadline within two days). Do not invent \
values that are not in the message. Do not add any text before or after the JSON object. If \
the message is not about an order, use the action "question" and leave the other fields null.

Message: {message}"""

REVIEW_REPLY = """\
Write a public reply to the guest review below on behalf of the Lindenhof Hotel, a family-run \
hotel with forty rooms near the old town. The reply will be posted under the review on a \
booking website, so keep it under eighty words and do not mention prices, other guests or \
staff names. Thank the guest by their first name only if they signed the review with it. \
Acknowledge each concrete point the guest raised, positive or negative, in the order they \
raised it. For a complaint, say briefly what the hotel will change, without making excuses \
and without offering compensation in public. End with one sentence inviting the guest back. \
Use a warm but professional tone and British spelling. Do not use exclamation marks or emoji.

Review: {message}"""

SUPPORT_TRIAGE_ZH = """\
你是"云帆快递"的在线客服助手。请先阅读下面的用户消息，\
判断它属于以下哪一类：查询物流、修改地址、催促派送、包裹破损、丢件、退件、投诉快递员、\
开具发票或其他。然后用不超过三句话告诉用户下一步应该怎么做，语气要礼貌、简洁、口语化。\
不要承诺赔偿金额，也不要承诺具体的送达时间，如果涉及赔偿，请说明会有专员在二十四小时内联系。\
如果消息里没有运单号，而处理这个问题需要运单号，请提醒用户提供运单号。\
回复的最后署名为"云帆客服"。

用户消息：{message}"""

PRODUCT_QA_ZH = """\
你是"安眠家纺"天猫旗舰店的智能导购，只回答与本店商品有关的问题。本店销售乳胶枕、记忆棉枕、\
蚕丝被、羽绒被、四件套和床垫保护罩。回答时请遵守以下规则：第一，只根据商品详情页的信息回答，\
不确定的内容要说明需要咨询人工客服；\
第二，涉及尺寸时同时给出厘米数；第三，涉及洗涤方法时提醒用户查看洗标；\
第四，如果顾客询问优惠活动，请引导顾客查看店铺首页的活动说明，不要自己报价格。\
回答控制在一百字以内，语气亲切，可以称呼顾客为"亲"。

顾客问题：{message}"""

EN_TEMPLATES = (
    Template(
        "triage",
        "en",
        SUPPORT_TRIAGE,
        (
            Ask(
                "My internet has been down since this morning.",
                "Since this morning I have had no internet connection at all.",
            ),
            Ask(
                "My internet has been really slow since this morning.",
                "Since this morning my connection is very slow.",
            ),
            Ask(
                "I want to cancel my contract.",
                "Please cancel my subscription, I don't want it anymore.",
            ),
            Ask(
                "I want to upgrade my contract to the faster plan.",
                "Can I switch to the faster plan?",
            ),
            Ask("I was charged twice this month.", "My bill shows two charges for the same month."),
            Ask(
                "I'm moving to a new flat next month, can I take my connection with me?",
                "Next month I move house. Can the internet move with me?",
            ),
            Ask("There is a burning smell coming from the router."),
            Ask("The router's lights are all off."),
        ),
    ),
    Template(
        "orders",
        "en",
        ORDER_EXTRACTION,
        (
            Ask(
                "Please cancel order 58213, the sofa is too big.",
                "I'd like to cancel order 58213 because the sofa won't fit.",
            ),
            Ask(
                "Please change the delivery address of order 58213 to 12 Elm Road.",
                "Can you send order 58213 to 12 Elm Road instead?",
            ),
            Ask(
                "I ordered two cushions but I need four, order 77120.",
                "Order 77120: please make it four cushions instead of two.",
            ),
            Ask("I ordered four cushions but I only need two, order 77120."),
            Ask("When will order 90011 be delivered?", "What's the delivery date for order 90011?"),
            Ask(
                "Order 90011 must arrive before Friday, it's a gift.",
                "It's a present, so order 90011 has to be here by Friday.",
            ),
            Ask("I want to return the blue curtains from order 43007."),
            Ask("I want to keep the blue curtains from order 43007 but return the rug."),
        ),
    ),
    Template(
        "reviews",
        "en",
        REVIEW_REPLY,
        (
            Ask(
                "Lovely quiet room and a great breakfast. - Anna",
                "The room was lovely and quiet, and breakfast was great. Anna",
            ),
            Ask("Lovely room but the breakfast was cold and the coffee was weak. - Anna"),
            Ask(
                "The staff were friendly but the room was noisy because of the street.",
                "Friendly staff, but our room was loud from the street traffic.",
            ),
            Ask("The staff were unfriendly and the room was noisy because of the street."),
            Ask(
                "Parking was easy and the location is perfect for the old town.",
                "Easy parking and a perfect location for visiting the old town.",
            ),
            Ask("Parking was impossible and the old town is further than it looks."),
        ),
    ),
)

ZH_TEMPLATES = (
    Template(
        "courier",
        "zh",
        SUPPORT_TRIAGE_ZH,
        (
            Ask("我的快递三天了还没到，单号是YF20391。", "单号YF20391，已经三天了快递还没送到。"),
            Ask(
                "我的快递收到了，但是箱子破了，单号是YF20391。",
                "单号YF20391的包裹到了，可外箱是破的。",
            ),
            Ask("我想把收货地址改成公司地址。", "能不能帮我把收件地址换成我公司的地址？"),
            Ask("我想把收货地址改回家里的地址。"),
            Ask(
                "快递员态度很差，还把包裹扔在门口。", "送件的快递员很不礼貌，直接把包裹丢在门口了。"
            ),
            Ask("快递员很负责，帮我把包裹送上了楼。"),
            Ask("我需要开一张这次寄件的发票。", "请问这单寄件可以开发票吗？"),
            Ask("我不需要发票了，之前的申请请取消。"),
        ),
    ),
    Template(
        "bedding",
        "zh",
        PRODUCT_QA_ZH,
        (
            Ask("乳胶枕可以机洗吗？", "请问乳胶枕能不能放洗衣机洗？"),
            Ask("蚕丝被可以机洗吗？", "蚕丝被能放进洗衣机里洗吗？"),
            Ask("一米八的床应该买多大的四件套？", "床是一米八的，四件套要选什么尺寸？"),
            Ask("一米五的床应该买多大的四件套？"),
            Ask("羽绒被适合冬天用吗？", "冬天盖这款羽绒被够暖和吗？"),
            Ask("羽绒被适合夏天用吗？"),
            Ask("记忆棉枕适合颈椎不好的人吗？", "颈椎不太好的人能用记忆棉枕头吗？"),
            Ask("记忆棉枕适合小孩用吗？"),
        ),
    ),
)
