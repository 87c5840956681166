"""Word lists of the answer guard (``guard_details``): data only, no logic.

Every list is general English or Chinese, written for any text; none is fitted to an evaluation
set. Keys are lower case (the guard compares NFKC-normalised, lower-cased text).
"""

from __future__ import annotations

# --- numbers ------------------------------------------------------------------------------

EN_NUMBER_WORDS: dict[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "dozen": 12, "twice": 2, "thrice": 3, "once": 1,
}  # fmt: skip
EN_SCALES: dict[str, int] = {
    "hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
    "trillion": 1_000_000_000_000,
}  # fmt: skip
# "first" is deliberately absent: it is a position word (first/last), see COMPARISONS.
EN_ORDINALS: dict[str, int] = {
    "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "twentieth": 20, "hundredth": 100,
}  # fmt: skip
# Written-out "one" is also the pronoun ("which one"), so a lone 1 in words is weak evidence.
EN_WEAK_WORDS = frozenset({"one", "once"})

ZH_DIGITS: dict[str, int] = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
    "八": 8, "九": 9,
}  # fmt: skip
ZH_SMALL_UNITS: dict[str, int] = {"十": 10, "百": 100, "千": 1_000}
ZH_BIG_UNITS: dict[str, int] = {"万": 10_000, "亿": 100_000_000}
# Idioms and words that contain numeral characters but state no quantity.
ZH_NUMERAL_IDIOMS = (
    "十分(?!钟)", "千万(?=[不别要记])", "万一", "一一", "三三两两", "五颜六色", "乱七八糟",
    "七上八下", "一五一十", "四面八方", "千方百计", "成千上万", "千千万万", "九牛一毛", "十全十美",
    "三心二意", "一举两得", "百分百", "万能", "万事", "二维码",
)  # fmt: skip
# Unit words that start with a numeral character, rewritten (same length) before numbers are read.
ZH_UNIT_SYNONYMS = {"千克": "公斤", "千米": "公里", "千瓦": "kw"}
# Measure words that make a single numeral character a quantity ("三天", "两个").
ZH_CLASSIFIERS = (
    "个", "位", "名", "只", "条", "张", "本", "件", "台", "部", "辆", "次", "遍", "回", "步", "种",
    "类", "项", "家", "所", "间", "层", "楼", "份", "杯", "碗", "瓶", "盒", "包", "双", "对", "套",
    "片", "粒", "颗", "根", "支", "把", "门", "节", "课", "期", "代", "集", "章", "页", "行", "列",
    "句", "字", "题", "道", "局", "场", "口", "人", "级", "档", "核", "届", "声", "下",
)  # fmt: skip

# --- units --------------------------------------------------------------------------------
# canonical unit -> (dimension, English spellings). Currencies are units of dimension "money".
EN_UNITS: dict[str, tuple[str, tuple[str, ...]]] = {
    "km": ("length", ("km", "kms", "kilometer", "kilometers", "kilometre", "kilometres")),
    "m": ("length", ("m", "meter", "meters", "metre", "metres")),
    "cm": ("length", ("cm", "centimeter", "centimeters", "centimetre", "centimetres")),
    "mm": ("length", ("mm", "millimeter", "millimeters", "millimetre", "millimetres")),
    "mile": ("length", ("mi", "mile", "miles")),
    "ft": ("length", ("ft", "foot", "feet")),
    "inch": ("length", ("inch", "inches")),
    "yd": ("length", ("yd", "yard", "yards")),
    "kg": ("mass", ("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms")),
    "g": ("mass", ("g", "gram", "grams", "gramme", "grammes")),
    "mg": ("mass", ("mg", "milligram", "milligrams")),
    "lb": ("mass", ("lb", "lbs", "pound", "pounds")),
    "oz": ("mass", ("oz", "ounce", "ounces")),
    "t": ("mass", ("ton", "tons", "tonne", "tonnes")),
    "l": ("volume", ("l", "liter", "liters", "litre", "litres")),
    "ml": ("volume", ("ml", "milliliter", "milliliters", "millilitre", "millilitres")),
    "gal": ("volume", ("gal", "gallon", "gallons")),
    "cup": ("volume", ("cup", "cups")),
    "tbsp": ("volume", ("tbsp", "tablespoon", "tablespoons")),
    "tsp": ("volume", ("tsp", "teaspoon", "teaspoons")),
    "c": ("temperature", ("°c", "° c", "celsius", "degrees celsius", "degree celsius")),
    "f": ("temperature", ("°f", "° f", "fahrenheit", "degrees fahrenheit")),
    "deg": ("angle", ("°", "degree", "degrees")),
    "s": ("time", ("s", "sec", "secs", "second", "seconds")),
    "ms": ("time", ("ms", "millisecond", "milliseconds")),
    "min": ("time", ("min", "mins", "minute", "minutes")),
    "h": ("time", ("h", "hr", "hrs", "hour", "hours")),
    "day": ("time", ("day", "days")),
    "night": ("time", ("night", "nights")),
    "week": ("time", ("wk", "wks", "week", "weeks")),
    "month": ("time", ("mo", "mos", "month", "months")),
    "year": ("time", ("yr", "yrs", "year", "years")),
    "decade": ("time", ("decade", "decades")),
    "am": ("clock", ("am", "a.m.")),
    "pm": ("clock", ("pm", "p.m.")),
    "kb": ("data", ("kb", "kilobyte", "kilobytes")),
    "mb": ("data", ("mb", "megabyte", "megabytes")),
    "gb": ("data", ("gb", "gig", "gigs", "gigabyte", "gigabytes")),
    "tb": ("data", ("tb", "terabyte", "terabytes")),
    "mbps": ("rate", ("mbps", "mbit/s")),
    "gbps": ("rate", ("gbps",)),
    "ghz": ("frequency", ("ghz",)),
    "mhz": ("frequency", ("mhz",)),
    "hz": ("frequency", ("hz", "hertz")),
    "w": ("power", ("w", "watt", "watts")),
    "kw": ("power", ("kw", "kilowatt", "kilowatts")),
    "kwh": ("energy", ("kwh",)),
    "mah": ("charge", ("mah",)),
    "v": ("voltage", ("v", "volt", "volts")),
    "km/h": ("speed", ("km/h", "kmh", "kph")),
    "mph": ("speed", ("mph",)),
    "%": ("ratio", ("%", "percent", "per cent", "pct")),
    "x": ("ratio", ("times", "fold")),
    "usd": ("money", ("usd", "us dollar", "us dollars", "dollar", "dollars", "buck", "bucks")),
    "eur": ("money", ("eur", "euro", "euros")),
    "gbp": ("money", ("gbp", "pounds sterling", "sterling")),
    "jpy": ("money", ("jpy", "yen")),
    "cny": ("money", ("cny", "rmb", "yuan", "renminbi")),
    "inr": ("money", ("inr", "rupee", "rupees")),
    "cad": ("money", ("cad",)),
    "aud": ("money", ("aud",)),
    "chf": ("money", ("chf",)),
    "hkd": ("money", ("hkd",)),
    "krw": ("money", ("krw", "won")),
    "ord": ("ordinal", ("st", "nd", "rd", "th")),
}  # fmt: skip
# Single-letter and ambiguous spellings count only right after a number ("5 m"), never bare.
EN_ATTACHED_ONLY = frozenset(
    {"m", "g", "l", "s", "h", "t", "w", "v", "mi", "mo", "mos", "am", "a.m.", "pm", "p.m.",
     "st", "nd", "rd", "th", "°", "won", "times", "fold", "second", "buck", "bucks", "night",
     "nights", "min", "mins"}
)  # fmt: skip
CURRENCY_SYMBOLS: dict[str, str] = {"$": "usd", "€": "eur", "£": "gbp", "¥": "cny", "₹": "inr"}

ZH_UNITS: dict[str, tuple[str, tuple[str, ...]]] = {
    "km": ("length", ("公里",)),
    "m": ("length", ("米",)),
    "cm": ("length", ("厘米",)),
    "mm": ("length", ("毫米",)),
    "mile": ("length", ("英里",)),
    "ft": ("length", ("英尺",)),
    "inch": ("length", ("英寸", "寸")),
    "kg": ("mass", ("公斤",)),
    "jin": ("mass", ("斤",)),
    "g": ("mass", ("克",)),
    "mg": ("mass", ("毫克",)),
    "lb": ("mass", ("磅",)),
    "t": ("mass", ("吨",)),
    "l": ("volume", ("升", "公升")),
    "ml": ("volume", ("毫升",)),
    "c": ("temperature", ("摄氏度",)),
    "f": ("temperature", ("华氏度",)),
    "deg": ("angle", ("度",)),
    "s": ("time", ("秒钟", "秒")),
    "min": ("time", ("分钟",)),
    "h": ("time", ("个小时", "小时", "个钟头", "钟头")),
    "day": ("time", ("天",)),
    "night": ("time", ("晚",)),
    "week": ("time", ("个星期", "个礼拜", "星期", "礼拜", "周")),
    "month": ("time", ("个月",)),
    "calendar-month": ("date", ("月份", "月")),
    "year": ("time", ("年",)),
    "day-of-month": ("date", ("日", "号")),
    "oclock": ("clock", ("点钟", "点")),
    "age": ("age", ("岁",)),
    "%": ("ratio", ("%",)),
    "x": ("ratio", ("倍",)),
    "tenths": ("ratio", ("成",)),
    "discount": ("ratio", ("折",)),
    "cny": ("money", ("块钱", "元", "块", "人民币")),
    "usd": ("money", ("美元", "美金")),
    "eur": ("money", ("欧元",)),
    "gbp": ("money", ("英镑",)),
    "jpy": ("money", ("日元",)),
    "hkd": ("money", ("港币", "港元")),
    "krw": ("money", ("韩元",)),
}  # fmt: skip

# --- dates and times ----------------------------------------------------------------------

EN_MONTHS: dict[str, int] = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "sept": 9, "october": 10, "november": 11, "december": 12,
}  # fmt: skip
EN_WEEKDAYS: dict[str, str] = {
    "monday": "wd1", "tuesday": "wd2", "wednesday": "wd3", "thursday": "wd4", "friday": "wd5",
    "saturday": "wd6", "sunday": "wd7", "weekend": "weekend", "weekday": "workday",
    "weekdays": "workday", "weekends": "weekend",
}  # fmt: skip
EN_DAY_WORDS: dict[str, str] = {
    "today": "today", "tonight": "tonight", "tomorrow": "tomorrow", "yesterday": "yesterday",
    "morning": "morning", "mornings": "morning", "afternoon": "afternoon", "noon": "noon",
    "afternoons": "afternoon", "evening": "evening", "evenings": "evening", "night": "night",
    "nights": "night", "midnight": "midnight", "overnight": "night", "spring": "spring",
    "summer": "summer", "autumn": "autumn", "winter": "winter", "christmas": "christmas",
    "easter": "easter", "thanksgiving": "thanksgiving", "halloween": "halloween",
}  # fmt: skip
EN_RELATIVE: dict[str, str] = {
    "last": "last", "past": "last", "previous": "last", "next": "next", "coming": "next",
    "this": "this", "current": "this",
}  # fmt: skip
EN_PERIODS = ("week", "month", "year", "weekend", "quarter", "season", "semester")

ZH_WEEKDAY_PREFIXES = ("星期", "礼拜", "周")
ZH_WEEKDAYS: dict[str, str] = {
    "一": "wd1", "二": "wd2", "三": "wd3", "四": "wd4", "五": "wd5", "六": "wd6", "日": "wd7",
    "天": "wd7", "末": "weekend",
}  # fmt: skip
ZH_DATE_WORDS: dict[str, str] = {
    "今天": "today", "今日": "today", "明天": "tomorrow", "明日": "tomorrow",
    "昨天": "yesterday", "昨日": "yesterday", "后天": "day-after-tomorrow",
    "大后天": "3-days-ahead", "前天": "day-before-yesterday", "今晚": "tonight",
    "明晚": "tomorrow-night", "昨晚": "last-night", "今早": "this-morning",
    "明早": "tomorrow-morning", "今年": "this_year", "去年": "last_year", "明年": "next_year",
    "前年": "year-before-last", "后年": "year-after-next", "本周": "this_week",
    "这周": "this_week", "这个星期": "this_week", "这星期": "this_week", "上周": "last_week",
    "上个星期": "last_week", "上星期": "last_week", "下周": "next_week",
    "下个星期": "next_week", "下星期": "next_week", "本月": "this_month",
    "这个月": "this_month", "上个月": "last_month", "上月": "last_month",
    "下个月": "next_month", "下月": "next_month", "工作日": "workday", "早上": "morning",
    "早晨": "morning", "上午": "morning", "中午": "noon", "下午": "afternoon",
    "傍晚": "evening", "晚上": "evening", "夜里": "night", "夜间": "night", "凌晨": "early",
    "半夜": "midnight", "春天": "spring", "春季": "spring", "夏天": "summer", "夏季": "summer",
    "秋天": "autumn", "秋季": "autumn", "冬天": "winter", "冬季": "winter",
    "春节": "spring-festival", "元旦": "new-year", "国庆": "national-day", "中秋": "mid-autumn",
    "端午": "dragon-boat", "清明": "qingming", "圣诞": "christmas", "情人节": "valentine",
}  # fmt: skip

# --- negation -----------------------------------------------------------------------------

EN_NEGATIONS = (
    "not", "no", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "without",
    "cannot", "unable", "n't", "dont", "doesnt", "didnt", "cant", "wont", "isnt", "arent",
    "wasnt", "werent", "havent", "hasnt", "hadnt", "shouldnt", "wouldnt", "couldnt", "mustnt",
    "neednt", "aint",
)  # fmt: skip
# Phrases that contain a negation word but do not negate the question.
EN_NEGATION_IDIOMS = (
    r"no matter", r"not only", r"whether or not", r"or not", r"yes or no", r"no\.\s*\d",
    r"not sure", r"n'?t know", r"not know", r"no idea", r"n'?t understand", r"not understand",
    r"n'?t remember", r"n'?t figure out", r"n'?t seem to", r"^no\b[,!.]", r"no doubt",
    r"why or why not", r"yes\s*/\s*no", r"\b(?P<w>\w+)\s*/\s*(?P=w)\s*n'?t\b",
    r",\s*(?:is|are|do|does|did|was|were|can|won|will|have|has)n'?t"
    r" (?:it|they|he|she|you|we|there|i)\s*\?*$",
)  # fmt: skip

ZH_NEGATIONS = ("不", "没", "无", "非", "未", "别", "勿", "莫", "否", "甭")
# A sentence-final 不/没 asks a question ("值钱不？" is "值钱吗？"); it negates nothing.
ZH_QUESTION_TAIL = r"(?:不|没有|没)(?=\s*(?:[?？]|$))"
ZH_NEGATION_IDIOMS = (
    "不过", "不错", "不同", "不断", "不少", "不仅", "不管", "不久", "不论", "不但", "差不多",
    "不得不", "对不起", "不好意思", "了不起", "忍不住", "不禁", "不免", "不如", "不用谢", "不客气",
    "没关系", "没事", "无论", "无线", "无聊", "无人机", "无数", "毫无疑问", "无所谓", "非常",
    "非洲",
    "是非", "莫斯科", "莫名", "莫非", "否则", "是否", "能否", "可否", "与否", "未来", "非得",
    "别人", "别的", "别处", "区别", "特别", "分别", "级别", "类别", "性别", "告别", "识别", "差别",
    "辨别", "个别", "派别", "离别", "鉴别", "别墅", "别名", "别称", "道别", "有别", "不知道",
    "不清楚", "不确定",
)  # fmt: skip

# --- comparison and direction: axis -> (words of one pole, words of the other) -------------

EN_COMPARISONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # One axis for "more/less" however it is said: "cheaper" and "costs less than" agree.
    "amount": (("more", "most", "more than", "greater than", "over", "above", "at least",
                "exceeding", "beyond", "more expensive", "most expensive", "expensive",
                "pricier", "costlier", "dearer"),
               ("less", "least", "fewer", "fewest", "less than", "fewer than", "under", "below",
                "at most", "less expensive", "least expensive", "cheap", "cheaper", "cheapest",
                "inexpensive")),
    # "largest", "highest" and "maximum" are said interchangeably: one axis.
    "magnitude": (("large", "larger", "largest", "big", "bigger", "biggest", "huge", "high",
                   "higher", "highest", "maximum", "max", "maximize", "maximise"),
                  ("small", "smaller", "smallest", "tiny", "low", "lower", "lowest", "minimum",
                   "min", "minimize", "minimise")),
    "change": (("increase", "increases", "increased", "increasing", "rise", "rises", "rising",
                "grow", "grows", "growing", "go up", "goes up", "went up", "boost"),
               ("decrease", "decreases", "decreased", "decreasing", "reduce", "reduces",
                "reduced", "reducing", "decline", "declines", "shrink", "go down",
                "goes down", "went down")),
    "time": (("after", "afterwards", "later"), ("before", "earlier", "prior to", "beforehand")),
    "speed": (("fast", "faster", "fastest", "quick", "quicker", "quickest"),
              ("slow", "slower", "slowest")),
    "age": (("older", "oldest"), ("newer", "newest", "younger", "youngest")),
    "length": (("longer", "longest"), ("shorter", "shortest")),
    "quality": (("better", "best"), ("worse", "worst")),
    "temperature": (("hotter", "hottest", "warmer", "warmest"),
                    ("colder", "coldest", "cooler", "coolest")),
    "weight": (("heavier", "heaviest"), ("lighter", "lightest")),
    "distance": (("farther", "farthest"), ("closer", "closest", "nearer", "nearest")),
    "order": (("ascending", "asc", "increasing order"),
              ("descending", "desc", "decreasing order", "reverse order")),
    "position": (("first", "top"), ("last", "bottom")),
    "transfer": (("upload", "uploads", "import", "send", "sending", "buy", "buying",
                  "purchase", "deposit", "lend", "push", "incoming", "inbound"),
                 ("download", "downloads", "export", "receive", "receiving", "sell", "selling",
                  "withdraw", "borrow", "pull", "outgoing", "outbound")),
    "travel": (("arrive", "arrival", "arriving", "arrivals"),
               ("depart", "departure", "departing", "departures")),
    "switch": (("enable", "turn on", "switch on", "activate", "open", "start", "install",
                "lock", "connect", "subscribe", "show", "expand", "mount"),
               ("disable", "turn off", "switch off", "deactivate", "close", "closed", "stop",
                "uninstall", "unlock", "disconnect", "unsubscribe", "hide", "collapse",
                "unmount")),
    "session": (("log in", "login", "sign in", "signin", "log on"),
                ("log out", "logout", "sign out", "signout", "log off")),
    "crypt": (("encrypt", "encode", "compress", "zip"), ("decrypt", "decode", "decompress",
                                                         "unzip")),
    "edit": (("add", "insert", "append"), ("remove", "delete", "erase")),
    "outcome": (("win", "won", "winning"), ("lose", "lost", "losing")),
    "side": (("left",), ("right",)),
    "north-south": (("north", "northern"), ("south", "southern")),
    "east-west": (("east", "eastern"), ("west", "western")),
}  # fmt: skip

ZH_COMPARISONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "amount": (("更多", "最多", "多于", "较多", "超过", "以上", "贵", "更贵", "最贵", "昂贵",
                "涨价"),
               ("更少", "最少", "少于", "较少", "以下", "便宜", "更便宜", "最便宜", "实惠",
                "降价")),
    "magnitude": (("更大", "最大", "较大", "大于", "变大", "放大", "更高", "最高", "较高", "高于",
                   "提高", "升高", "最大值"),
                  ("更小", "最小", "较小", "小于", "变小", "缩小", "更低", "最低", "较低", "低于",
                   "降低", "最小值")),
    "change": (("增加", "增长", "上涨", "上升", "涨", "增多", "变多"),
               ("减少", "下降", "下跌", "跌", "减小", "变少")),
    "time": (("之后", "以后", "晚于", "推迟", "延后", "更晚", "最晚"),
             ("之前", "以前", "早于", "提前", "更早", "最早", "事先")),
    "speed": (("更快", "最快", "加快", "加速"), ("更慢", "最慢", "减慢", "减速")),
    "quality": (("更好", "最好", "较好"), ("更差", "最差", "较差")),
    "order": (("升序", "从小到大", "由小到大", "从低到高", "由低到高", "正序"),
              ("降序", "倒序", "逆序", "从大到小", "由大到小", "从高到低", "由高到低")),
    "transfer": (("上传", "导入", "买入", "购买", "买", "存入", "存款", "发送", "入境"),
                 ("下载", "导出", "卖出", "出售", "卖", "取出", "取款", "接收", "出境")),
    "travel": (("到达",), ("出发",)),
    "switch": (("开启", "打开", "启用", "安装", "锁定", "上锁", "连接", "订阅", "显示"),
               ("关闭", "禁用", "停用", "卸载", "解锁", "断开", "取消订阅", "隐藏")),
    "session": (("登录", "登入"), ("退出登录", "登出")),
    "crypt": (("加密", "压缩"), ("解密", "解压")),
    "edit": (("添加", "新增"), ("删除", "移除")),
}  # fmt: skip
# Words that contain a comparison word but compare nothing ("贵公司" is "your company").
ZH_COMPARISON_IDIOMS = ("贵公司", "贵姓", "宝贵", "珍贵", "富贵", "贵宾", "贵州", "贵阳")

# --- entities -----------------------------------------------------------------------------

# Names written in lower case as often as not; matched case-insensitively, as whole words.
EN_KNOWN_NAMES = (
    "python", "java", "javascript", "typescript", "kotlin", "rust", "golang", "ruby", "php",
    "perl", "scala", "haskell", "c++", "c#", "f#", ".net", "sql", "mysql", "postgresql",
    "sqlite", "mongodb", "redis", "react", "vue", "angular", "django", "flask", "fastapi",
    "node.js", "numpy", "pandas", "pytorch", "tensorflow", "docker", "kubernetes", "linux",
    "ubuntu", "macos", "ios", "android", "iphone", "ipad", "excel", "git", "github", "aws",
    "azure", "chrome", "firefox", "bash", "powershell", "html", "css", "json", "csv", "xml",
    "yaml", "pdf", "markdown", "paypal", "venmo", "stripe", "whatsapp", "gmail", "outlook",
)  # fmt: skip
# Spellings of one name; applied to tokens and phrases before entities are compared.
ALIASES: dict[str, str] = {
    "js": "javascript", "ts": "typescript", "py": "python", "k8s": "kubernetes",
    "postgres": "postgresql", "nodejs": "node.js", "cpp": "c++",
    "osx": "macos", "united states of america": "usa", "united states": "usa", "u.s.a.": "usa",
    "u.s.": "usa", "us": "usa", "united kingdom": "uk", "u.k.": "uk", "great britain": "uk",
    "britain": "uk", "british": "uk", "安卓": "android", "苹果手机": "iphone",
    # demonyms name their country: "the French president" asks about France
    "american": "usa", "french": "france", "german": "germany", "chinese": "china",
    "japanese": "japan", "italian": "italy", "spanish": "spain", "indian": "india",
    "russian": "russia", "korean": "korea", "canadian": "canada", "australian": "australia",
    "brazilian": "brazil", "mexican": "mexico", "dutch": "netherlands", "swiss": "switzerland",
    "swedish": "sweden", "greek": "greece", "turkish": "turkey", "irish": "ireland",
    "portuguese": "portugal", "egyptian": "egypt", "thai": "thailand",
    "vietnamese": "vietnam",
}  # fmt: skip

# Capitalised words that start sentences or fill title-cased text without naming anything.
EN_COMMON_WORDS = frozenset((
    "a", "an", "the", "this", "that", "these", "those", "there", "here", "it", "its", "i", "me",
    "my", "we", "our", "you", "your", "they", "their", "he", "his", "she", "her", "him", "them",
    "what", "which", "who", "whom", "whose", "why", "how", "when", "where", "whether", "if", "is",
    "are", "was", "were", "be", "been", "being", "do", "does", "did", "done", "can", "could",
    "would", "should", "will", "shall", "may", "might", "must", "have", "has", "had", "having",
    "get", "got", "gets", "and", "or", "but", "so", "then", "also", "not", "no", "yes", "in", "on",
    "at", "for", "from", "with", "without", "about", "to", "of", "by", "as", "into", "over",
    "under", "than", "via", "vs", "per", "please", "hi", "hello", "hey", "thanks", "thank", "ok",
    "okay", "dear", "tell", "give", "show", "explain", "list", "describe", "write", "find", "help",
    "compare", "convert", "calculate", "recommend", "suggest", "create", "make", "set", "check",
    "read", "sort", "remove", "add", "use", "name", "define", "translate", "summarize", "summarise",
    "generate", "provide", "any", "some", "all", "every", "each", "best", "good", "new", "quick",
    "simple", "easy", "step", "steps", "how-to", "guide", "tips", "top", "ways", "way",
    "best-practice", "question", "questions", "answer", "answers", "meaning", "example", "examples",
    "difference", "differences",
))  # fmt: skip

ZH_GAZETTEER = (
    "中国", "美国", "英国", "法国", "德国", "日本", "韩国", "朝鲜", "俄罗斯", "加拿大", "澳大利亚",
    "新西兰", "意大利", "西班牙", "葡萄牙", "荷兰", "比利时", "瑞士", "瑞典", "挪威", "芬兰",
    "丹麦",
    "奥地利", "波兰", "希腊", "土耳其", "印度", "巴基斯坦", "泰国", "越南", "新加坡", "马来西亚",
    "印度尼西亚", "印尼", "菲律宾", "巴西", "阿根廷", "墨西哥", "智利", "秘鲁", "埃及", "南非",
    "以色列", "伊朗", "伊拉克", "沙特", "阿联酋", "乌克兰", "蒙古", "尼泊尔", "柬埔寨", "缅甸",
    "老挝", "香港", "澳门", "台湾", "欧洲", "亚洲", "非洲", "美洲", "北美", "南美", "大洋洲",
    "东南亚", "中东", "北京", "上海", "广州", "深圳", "天津", "重庆", "杭州", "南京", "苏州",
    "成都",
    "武汉", "西安", "长沙", "郑州", "青岛", "大连", "厦门", "宁波", "无锡", "合肥", "福州", "济南",
    "沈阳", "哈尔滨", "长春", "昆明", "贵阳", "南宁", "海口", "三亚", "拉萨", "乌鲁木齐", "兰州",
    "银川", "西宁", "呼和浩特", "石家庄", "太原", "南昌", "东京", "大阪", "京都", "首尔", "巴黎",
    "伦敦", "纽约", "洛杉矶", "旧金山", "芝加哥", "波士顿", "西雅图", "华盛顿", "多伦多", "温哥华",
    "悉尼", "墨尔本", "柏林", "罗马", "马德里", "莫斯科", "曼谷", "新德里", "孟买", "开罗", "迪拜",
    "广东", "广西", "浙江", "江苏", "福建", "山东", "山西", "河南", "河北", "湖南", "湖北", "四川",
    "云南", "贵州", "陕西", "甘肃", "青海", "江西", "安徽", "辽宁", "吉林", "黑龙江", "内蒙古",
    "新疆", "西藏", "宁夏", "海南", "华为", "微信", "支付宝", "淘宝", "天猫", "京东", "拼多多",
    "抖音", "快手", "百度", "腾讯", "阿里巴巴", "阿里云", "美团", "饿了么", "滴滴", "高德", "微博",
    "知乎", "小红书", "哔哩哔哩", "网易", "字节跳动", "联想", "比亚迪", "特斯拉", "三星", "索尼",
    "微软", "谷歌", "亚马逊", "英伟达", "苹果手机", "安卓", "鸿蒙", "工商银行", "建设银行",
    "农业银行",
    "中国银行", "招商银行", "交通银行",
)  # fmt: skip
