"""Hand-written short pairs for ``scripts/build_collisions.py``: collisions and paraphrases.

Each entry is ``(text_a, text_b, detail)``. In the collision tables one answer is wrong for the
other text (label 0) and ``detail`` names what differs; in the paraphrase tables one answer
serves both (label 1) and ``detail`` says how the wording differs. Written for semcache; nothing
is copied from a data set.
"""

from __future__ import annotations

Row = tuple[str, str, str]

ANTONYM_EN: tuple[Row, ...] = (
    (
        "Which foods should I eat to lower my cholesterol?",
        "Which foods should I avoid to lower my cholesterol?",
        "eat/avoid",
    ),
    (
        "Is it fine to take ibuprofen before a meal?",
        "Is it fine to take ibuprofen after a meal?",
        "before/after",
    ),
    (
        "How do I increase the font size in Visual Studio Code?",
        "How do I decrease the font size in Visual Studio Code?",
        "increase/decrease",
    ),
    (
        "How can I speed up my laptop's fan?",
        "How can I slow down my laptop's fan?",
        "speed up/slow down",
    ),
    (
        "Is it better to buy or rent a house in my thirties?",
        "Is it better to sell or rent out a house in my thirties?",
        "buy/sell",
    ),
    (
        "What are the advantages of remote work?",
        "What are the disadvantages of remote work?",
        "advantages/disadvantages",
    ),
    (
        "How do I enable two-factor authentication on my account?",
        "How do I disable two-factor authentication on my account?",
        "enable/disable",
    ),
    (
        "How do I upload photos from my phone to Google Drive?",
        "How do I download photos from Google Drive to my phone?",
        "upload/download",
    ),
    (
        "Why does my bread rise too much in the oven?",
        "Why does my bread not rise enough in the oven?",
        "too much/not enough",
    ),
    (
        "What is the maximum dose of paracetamol per day for an adult?",
        "What is the minimum dose of paracetamol per day for an adult?",
        "maximum/minimum",
    ),
    (
        "How do I import a CSV file into Excel?",
        "How do I export an Excel sheet to a CSV file?",
        "import/export",
    ),
    (
        "What should I do if my dog gains weight too quickly?",
        "What should I do if my dog loses weight too quickly?",
        "gains/loses",
    ),
    (
        "Which exercises strengthen the lower back?",
        "Which exercises strain the lower back?",
        "strengthen/strain",
    ),
    ("How do I zoom in on a PDF on my iPad?", "How do I zoom out on a PDF on my iPad?", "in/out"),
    (
        "Is it safe to fly in the first trimester of pregnancy?",
        "Is it safe to fly in the last trimester of pregnancy?",
        "first/last",
    ),
    (
        "How do I merge two branches in git?",
        "How do I split one commit into two in git?",
        "merge/split",
    ),
    (
        "Why are my tomato plant's leaves turning yellow from the top?",
        "Why are my tomato plant's leaves turning yellow from the bottom?",
        "top/bottom",
    ),
    (
        "What's the best way to warm up before running?",
        "What's the best way to cool down after running?",
        "warm up/cool down",
    ),
    (
        "How do I add a user to a group on Linux?",
        "How do I remove a user from a group on Linux?",
        "add/remove",
    ),
    ("What causes high blood pressure?", "What causes low blood pressure?", "high/low"),
    (
        "How do I turn on dark mode in Windows 11?",
        "How do I turn off dark mode in Windows 11?",
        "on/off",
    ),
    (
        "Should I accept the job offer if the salary is higher than my current one?",
        "Should I accept the job offer if the salary is lower than my current one?",
        "higher/lower",
    ),
    (
        "Which stocks tend to win when interest rates rise?",
        "Which stocks tend to win when interest rates fall?",
        "rise/fall",
    ),
    ("How do I lock the screen on a Mac?", "How do I unlock the screen on a Mac?", "lock/unlock"),
    (
        "What are the symptoms of too much vitamin D?",
        "What are the symptoms of too little vitamin D?",
        "too much/too little",
    ),
    (
        "How do I move a file into a folder on a Mac?",
        "How do I move a file out of a folder on a Mac?",
        "into/out of",
    ),
    ("How do I make my sourdough more sour?", "How do I make my sourdough less sour?", "more/less"),
    (
        "What should I pack for a trip to a hot climate?",
        "What should I pack for a trip to a cold climate?",
        "hot/cold",
    ),
    (
        "How do I follow someone on Instagram without them knowing?",
        "How do I unfollow someone on Instagram without them knowing?",
        "follow/unfollow",
    ),
    (
        "Is it cheaper to heat a house continuously or only when needed?",
        "Is it more expensive to heat a house continuously or only when needed?",
        "cheaper/more expensive",
    ),
    (
        "What should I do the night before a job interview?",
        "What should I do the night after a job interview?",
        "before/after",
    ),
    (
        "How can I gain muscle while staying vegetarian?",
        "How can I lose muscle while staying vegetarian?",
        "gain/lose",
    ),
)

ANTONYM_ZH: tuple[Row, ...] = (
    ("想降低胆固醇应该多吃哪些食物？", "想降低胆固醇应该少吃哪些食物？", "多吃/少吃"),
    (
        "布洛芬应该饭前吃还是饭后吃？如果饭前吃会怎样？",
        "布洛芬应该饭前吃还是饭后吃？如果饭后吃会怎样？",
        "饭前/饭后",
    ),
    ("怎么在微信里开启消息免打扰？", "怎么在微信里关闭消息免打扰？", "开启/关闭"),
    ("如何增大电脑屏幕的字体？", "如何缩小电脑屏幕的字体？", "增大/缩小"),
    ("远程办公有哪些优点？", "远程办公有哪些缺点？", "优点/缺点"),
    ("血压偏高是什么原因？", "血压偏低是什么原因？", "偏高/偏低"),
    ("怎么把照片上传到百度网盘？", "怎么从百度网盘下载照片？", "上传/下载"),
    ("利率上升时应该买哪类基金？", "利率下降时应该买哪类基金？", "上升/下降"),
    ("怎样让宝宝白天多睡一会儿？", "怎样让宝宝白天少睡一会儿？", "多睡/少睡"),
    ("去热带地区旅行应该带什么衣服？", "去寒冷地区旅行应该带什么衣服？", "热带/寒冷"),
    ("每天最多可以喝几杯水？", "每天最少要喝几杯水？", "最多/最少"),
    ("如何在Excel中合并单元格？", "如何在Excel中拆分单元格？", "合并/拆分"),
    ("跑步前应该怎么热身？", "跑步后应该怎么放松？", "前/后"),
    ("买房和租房哪个更划算？我想买。", "买房和租房哪个更划算？我想卖房。", "买/卖"),
    ("怎么把微信好友加入黑名单？", "怎么把微信好友移出黑名单？", "加入/移出"),
    ("为什么面包在烤箱里发得太大？", "为什么面包在烤箱里发不起来？", "太大/不起来"),
)

NUMBER_EN: tuple[Row, ...] = (
    (
        "Can I return an item 14 days after delivery?",
        "Can I return an item 45 days after delivery?",
        "14/45 days",
    ),
    ("What is the status of order #48213?", "What is the status of order #48231?", "order id"),
    ("Convert 5 miles to kilometres.", "Convert 5 kilometres to miles.", "unit direction"),
    (
        "How many calories are in 100 grams of cooked rice?",
        "How many calories are in 100 ounces of cooked rice?",
        "grams/ounces",
    ),
    (
        "Is a 40 mg daily dose of atorvastatin normal?",
        "Is a 80 mg daily dose of atorvastatin normal?",
        "40/80 mg",
    ),
    (
        "What was the exchange rate of euro to dollar on 3 March 2024?",
        "What was the exchange rate of euro to dollar on 3 May 2024?",
        "date",
    ),
    (
        "Which flights leave Frankfurt for Lisbon before 9 am on Friday?",
        "Which flights leave Frankfurt for Lisbon before 9 pm on Friday?",
        "am/pm",
    ),
    (
        "How long should I boil an egg for a soft yolk at 1,500 metres altitude?",
        "How long should I boil an egg for a soft yolk at 3,500 metres altitude?",
        "altitude",
    ),
    ("What is 15% of 2,340?", "What is 25% of 2,340?", "percentage"),
    ("Is 38.5 °C a fever for a toddler?", "Is 38.5 °F a fever for a toddler?", "°C/°F"),
    ("Show me invoice INV-2024-0117.", "Show me invoice INV-2024-0171.", "invoice id"),
    (
        "How much tax do I pay on a salary of 52,000 euros in Germany?",
        "How much tax do I pay on a salary of 62,000 euros in Germany?",
        "amount",
    ),
    (
        "What's the weather forecast for Berlin on Saturday?",
        "What's the weather forecast for Berlin on Sunday?",
        "weekday",
    ),
    (
        "Is my warranty still valid 13 months after purchase?",
        "Is my warranty still valid 31 months after purchase?",
        "13/31 months",
    ),
    (
        "How do I cook a 2 kg chicken in the oven?",
        "How do I cook a 5 kg turkey in the oven?",
        "weight and bird",
    ),
    (
        "Reset the password for employee ID 100452.",
        "Reset the password for employee ID 100425.",
        "employee id",
    ),
    (
        "What is the speed limit on German motorways in km/h?",
        "What is the speed limit on German motorways in mph?",
        "km/h vs mph",
    ),
    ("How many tablespoons are in 1/4 cup?", "How many tablespoons are in 3/4 cup?", "fraction"),
    (
        "Which Python versions are supported until 2027?",
        "Which Python versions are supported until 2025?",
        "year",
    ),
    (
        "Can I bring a 100 ml bottle of shampoo in hand luggage?",
        "Can I bring a 500 ml bottle of shampoo in hand luggage?",
        "volume",
    ),
    (
        "What's the monthly payment on a 300,000 dollar mortgage over 30 years at 6%?",
        "What's the monthly payment on a 300,000 dollar mortgage over 15 years at 6%?",
        "term",
    ),
    (
        "Book a table for 2 people at 7 pm tomorrow.",
        "Book a table for 6 people at 7 pm tomorrow.",
        "party size",
    ),
    ("Is the store open on 24 December?", "Is the store open on 26 December?", "date"),
    (
        "What does error code 0x80070005 mean on Windows?",
        "What does error code 0x80070057 mean on Windows?",
        "error code",
    ),
    (
        "How much does it cost to ship a 2 kg parcel to Canada?",
        "How much does it cost to ship a 20 kg parcel to Canada?",
        "2/20 kg",
    ),
    (
        "What's the resting heart rate of a healthy 30-year-old?",
        "What's the resting heart rate of a healthy 70-year-old?",
        "age",
    ),
)

NUMBER_ZH: tuple[Row, ...] = (
    ("收到货七天内可以退货吗？", "收到货三十天内可以退货吗？", "7/30天"),
    ("查询订单号 20240517883 的物流信息。", "查询订单号 20240517838 的物流信息。", "订单号"),
    ("把五公里换算成英里。", "把五英里换算成公里。", "单位方向"),
    ("一百克米饭有多少卡路里？", "五百克米饭有多少卡路里？", "重量"),
    ("月薪一万二要交多少个人所得税？", "月薪两万二要交多少个人所得税？", "金额"),
    (
        "明天上午九点从北京到上海的高铁还有票吗？",
        "明天晚上九点从北京到上海的高铁还有票吗？",
        "上午/晚上",
    ),
    ("三月五日的人民币对美元汇率是多少？", "五月三日的人民币对美元汇率是多少？", "日期"),
    ("孩子体温三十八度五算发烧吗？", "孩子体温三十七度五算发烧吗？", "体温"),
    ("帮我预订周六晚上两个人的位子。", "帮我预订周六晚上八个人的位子。", "人数"),
    ("一百毫升的洗发水可以带上飞机吗？", "五百毫升的洗发水可以带上飞机吗？", "容量"),
    ("三十年期一百万的房贷每月还多少？", "二十年期一百万的房贷每月还多少？", "年限"),
    ("工号 A1027 的员工本月出勤几天？", "工号 A1072 的员工本月出勤几天？", "工号"),
    ("寄一公斤的包裹到广州要多少钱？", "寄十公斤的包裹到广州要多少钱？", "重量"),
    ("二零二三年的春节是几月几号？", "二零二五年的春节是几月几号？", "年份"),
)

ENTITY_EN: tuple[Row, ...] = (
    (
        "What are the visa requirements for Germans travelling to Japan?",
        "What are the visa requirements for Germans travelling to China?",
        "country",
    ),
    (
        "How do I reset an iPhone 15 to factory settings?",
        "How do I reset a Samsung Galaxy S24 to factory settings?",
        "product",
    ),
    ("Who was the first president of Kenya?", "Who was the first president of Ghana?", "country"),
    (
        "What's the best time of year to visit Lisbon?",
        "What's the best time of year to visit Porto?",
        "city",
    ),
    (
        "Summarise the plot of Pride and Prejudice.",
        "Summarise the plot of Sense and Sensibility.",
        "book",
    ),
    (
        "How do I cancel my Netflix subscription?",
        "How do I cancel my Spotify subscription?",
        "service",
    ),
    ("What is the population of Lyon?", "What is the population of Lille?", "city"),
    (
        "Is Ryanair's cabin bag allowance 10 kg?",
        "Is easyJet's cabin bag allowance 10 kg?",
        "airline",
    ),
    ("What is Marie Curie best known for?", "What is Pierre Curie best known for?", "person"),
    (
        "Compare the Toyota Corolla and the Honda Civic.",
        "Compare the Toyota Corolla and the Mazda 3.",
        "product",
    ),
    (
        "How do I get from Heathrow to King's Cross by train?",
        "How do I get from Gatwick to King's Cross by train?",
        "airport",
    ),
    ("Which side effects does metformin have?", "Which side effects does metoprolol have?", "drug"),
    (
        "What are the opening hours of the Louvre?",
        "What are the opening hours of the Musée d'Orsay?",
        "museum",
    ),
    (
        "How do I connect AirPods to a Windows laptop?",
        "How do I connect Galaxy Buds to a Windows laptop?",
        "product",
    ),
    (
        "Write a short biography of Ada Lovelace.",
        "Write a short biography of Grace Hopper.",
        "person",
    ),
    ("What is the capital of Australia?", "What is the capital of Austria?", "country"),
    (
        "How do I change my address with Deutsche Bank?",
        "How do I change my address with Commerzbank?",
        "bank",
    ),
    (
        "Is the Sony WH-1000XM5 good for running?",
        "Is the Bose QuietComfort Ultra good for running?",
        "product",
    ),
    (
        "What did Anna say in her last email about the budget?",
        "What did Tom say in his last email about the budget?",
        "person",
    ),
    (
        "Which vaccines do I need for a trip to Kenya?",
        "Which vaccines do I need for a trip to Peru?",
        "country",
    ),
    ("How tall is Mount Kilimanjaro?", "How tall is Mount Kenya?", "mountain"),
    (
        "How do I export my contacts from Outlook?",
        "How do I export my contacts from Gmail?",
        "service",
    ),
)

ENTITY_ZH: tuple[Row, ...] = (
    ("中国公民去日本旅游需要办什么签证？", "中国公民去泰国旅游需要办什么签证？", "国家"),
    ("iPhone 15 怎么恢复出厂设置？", "华为 Mate 60 怎么恢复出厂设置？", "产品"),
    ("几月份去成都旅游最合适？", "几月份去重庆旅游最合适？", "城市"),
    ("怎么取消爱奇艺的自动续费？", "怎么取消腾讯视频的自动续费？", "服务"),
    ("李白最有名的诗是哪一首？", "杜甫最有名的诗是哪一首？", "人物"),
    ("故宫的开放时间是几点到几点？", "颐和园的开放时间是几点到几点？", "景点"),
    ("招商银行的信用卡怎么提额？", "建设银行的信用卡怎么提额？", "银行"),
    ("从虹桥机场到外滩怎么走最方便？", "从浦东机场到外滩怎么走最方便？", "机场"),
    ("二甲双胍有什么副作用？", "阿司匹林有什么副作用？", "药品"),
    ("小王上周在会上说的预算是多少？", "小李上周在会上说的预算是多少？", "人物"),
    ("比亚迪汉和特斯拉 Model 3 哪个续航更长？", "比亚迪汉和小鹏 P7 哪个续航更长？", "产品"),
)

CODE_EN: tuple[Row, ...] = (
    (
        "How do I read a file line by line in Python?",
        "How do I read a file line by line in Rust?",
        "language",
    ),
    (
        "Write a function that reverses a linked list in Java.",
        "Write a function that reverses a linked list in C.",
        "language",
    ),
    (
        "Why does my parse_date function return None for ISO strings?",
        "Why does my format_date function return None for ISO strings?",
        "function name",
    ),
    (
        "How do I sort a list of dictionaries by a key in Python?",
        "How do I sort a vector of structs by a field in Rust?",
        "language",
    ),
    (
        "Write a SQL query that returns the ten most recent orders.",
        "Write a SQL query that returns the ten largest orders.",
        "query target",
    ),
    (
        "How do I make an HTTP GET request in JavaScript?",
        "How do I make an HTTP POST request in JavaScript?",
        "method",
    ),
    (
        "Explain the difference between let and const in JavaScript.",
        "Explain the difference between let and var in JavaScript.",
        "keyword",
    ),
    (
        "Add a unit test for the calculate_tax function.",
        "Add a unit test for the calculate_discount function.",
        "function name",
    ),
    ("How do I install a package with pip?", "How do I install a package with npm?", "tool"),
    (
        "Convert this Python list comprehension to a for loop.",
        "Convert this Python for loop to a list comprehension.",
        "direction",
    ),
    (
        "How do I check if a key exists in a dictionary in Python?",
        "How do I check if a key exists in a HashMap in Java?",
        "language",
    ),
    (
        "Fix the off-by-one error in the pagination helper.",
        "Fix the off-by-one error in the retry helper.",
        "target",
    ),
    (
        "How do I undo the last commit in git but keep the changes?",
        "How do I undo the last commit in git and discard the changes?",
        "keep/discard",
    ),
    (
        "Write a regex that matches a German postal code.",
        "Write a regex that matches a UK postcode.",
        "target",
    ),
    (
        "What does the async keyword do in C#?",
        "What does the async keyword do in Python?",
        "language",
    ),
    (
        "Rename the variable user_id to account_id in this function.",
        "Rename the variable account_id to user_id in this function.",
        "direction",
    ),
    (
        "How do I run a Docker container in the background?",
        "How do I run a Docker container in the foreground?",
        "mode",
    ),
    (
        "Write a Bash script that deletes files older than 7 days.",
        "Write a PowerShell script that deletes files older than 7 days.",
        "language",
    ),
    ("How do I declare a constant in Go?", "How do I declare a constant in Kotlin?", "language"),
    (
        "Why is my React component rendering twice?",
        "Why is my Vue component rendering twice?",
        "framework",
    ),
    (
        "Write a Python function that checks if a number is prime.",
        "Write a Python function that returns the next prime after a number.",
        "function goal",
    ),
    (
        "Explain what the function load_users does in this file.",
        "Explain what the function save_users does in this file.",
        "function name",
    ),
)

CODE_ZH: tuple[Row, ...] = (
    ("用 Python 怎么逐行读取文件？", "用 Go 怎么逐行读取文件？", "语言"),
    ("帮我写一个 Java 的单例模式。", "帮我写一个 C++ 的单例模式。", "语言"),
    ("为什么 parse_order 函数返回空值？", "为什么 parse_user 函数返回空值？", "函数名"),
    ("写一条 SQL 查询最近十条订单。", "写一条 SQL 查询金额最大的十条订单。", "查询目标"),
    ("怎么用 git 撤销上一次提交但保留修改？", "怎么用 git 撤销上一次提交并丢弃修改？", "保留/丢弃"),
    ("怎么用 npm 安装依赖包？", "怎么用 pip 安装依赖包？", "工具"),
    ("把这段 Python 代码改写成 JavaScript。", "把这段 JavaScript 代码改写成 Python。", "方向"),
)

NEGATION_EN: tuple[Row, ...] = (
    (
        "Can I cancel an order that has already shipped?",
        "Can I cancel an order that has not shipped yet?",
        "not",
    ),
    (
        "Which medications are safe to take during pregnancy?",
        "Which medications are not safe to take during pregnancy?",
        "not",
    ),
    ("Why is my printer printing?", "Why is my printer not printing?", "not"),
    (
        "What happens if I pay my credit card bill on time?",
        "What happens if I don't pay my credit card bill on time?",
        "don't",
    ),
    (
        "Is this laptop compatible with USB-C charging?",
        "Is this laptop incompatible with USB-C charging?",
        "in-",
    ),
    ("Foods that contain gluten", "Foods that contain no gluten", "no"),
    (
        "Why does my Wi-Fi connect automatically?",
        "Why doesn't my Wi-Fi connect automatically?",
        "doesn't",
    ),
    ("Which plants are toxic to cats?", "Which plants are non-toxic to cats?", "non-"),
    ("I received the refund, what now?", "I never received the refund, what now?", "never"),
    (
        "Should I claim the expense if I have a receipt?",
        "Should I claim the expense if I have no receipt?",
        "no",
    ),
    (
        "List the countries where you need a visa to enter with a US passport.",
        "List the countries where you don't need a visa to enter with a US passport.",
        "don't",
    ),
    ("Why is the app sending notifications?", "Why is the app not sending notifications?", "not"),
    (
        "What to do when the baby is sleeping through the night",
        "What to do when the baby is not sleeping through the night",
        "not",
    ),
    (
        "Which of these functions are thread-safe?",
        "Which of these functions are not thread-safe?",
        "not",
    ),
    ("Which human foods are safe for dogs?", "Which human foods are not safe for dogs?", "not"),
    (
        "My account was verified, what can I do now?",
        "My account was not verified, what can I do now?",
        "not",
    ),
)

NEGATION_ZH: tuple[Row, ...] = (
    ("已经发货的订单可以取消吗？", "还没发货的订单可以取消吗？", "还没"),
    ("孕期可以吃哪些药？", "孕期不能吃哪些药？", "不能"),
    ("打印机为什么一直在打印？", "打印机为什么不打印？", "不"),
    ("信用卡按时还款会怎样？", "信用卡没有按时还款会怎样？", "没有"),
    ("哪些植物对猫有毒？", "哪些植物对猫无毒？", "无"),
    ("收到退款之后还需要做什么？", "一直没收到退款应该怎么办？", "没"),
    ("哪些国家持中国护照需要签证？", "哪些国家持中国护照不需要签证？", "不需要"),
    ("手机为什么会自动连上无线网络？", "手机为什么不会自动连上无线网络？", "不会"),
)

PARAPHRASE_EN: tuple[Row, ...] = (
    ("What is the refund policy?", "What's your refund policy?", "casual"),
    ("How do I reset my password?", "how can i reset my password", "casual"),
    ("What are your opening hours?", "When are you open?", "reworded"),
    ("Do you ship to Canada?", "Can you deliver to Canada?", "reworded"),
    ("How long does shipping take?", "How many days does delivery take?", "reworded"),
    (
        "Can I change my delivery address?",
        "Is it possible to update my shipping address?",
        "reworded",
    ),
    ("How do I contact customer support?", "How can I reach your support team?", "reworded"),
    ("What payment methods do you accept?", "Which payment options can I use?", "reworded"),
    ("Is there a student discount?", "Do you offer discounts for students?", "reworded"),
    ("How do I delete my account?", "How can I close my account permanently?", "reworded"),
    ("Where can I find my invoice?", "Where do I get my invoice?", "casual"),
    ("What's the capital of France?", "What is the capital city of France?", "casual"),
    ("How many ounces are in a pound?", "How many ounces make up one pound?", "reworded"),
    (
        "How do I read a file line by line in Python?",
        "What's the way to read a file one line at a time in Python?",
        "code",
    ),
    ("How do I reverse a list in Python?", "How can I reverse a Python list?", "code"),
    (
        "How do I undo the last git commit?",
        "How can I revert my most recent commit in git?",
        "code",
    ),
    ("What does the yield keyword do in Python?", "What is yield used for in Python?", "code"),
    ("How do I center a div in CSS?", "How can I center a div with CSS?", "code"),
    ("How do I install Node.js on Ubuntu?", "What's the way to set up Node.js on Ubuntu?", "code"),
    ("Why is my Wi-Fi so slow?", "Why is my wifi connection slow?", "casual"),
    (
        "How do I turn on dark mode in Windows 11?",
        "How can I enable dark mode on Windows 11?",
        "reworded",
    ),
    ("What are the symptoms of the flu?", "What symptoms does the flu cause?", "reworded"),
    ("How long should I boil an egg?", "How many minutes do you boil an egg?", "reworded"),
    ("Can I bring my dog to the hotel?", "Are dogs allowed at the hotel?", "reworded"),
    (
        "Can I cancel my subscription at any time?",
        "Am I able to cancel my subscription whenever I want?",
        "reworded",
    ),
    ("How much does express shipping cost?", "What's the price of express shipping?", "casual"),
    ("Do you have a mobile app?", "Is there an app for your service?", "reworded"),
    ("How do I track my order?", "How can I see where my order is?", "reworded"),
    ("What's the warranty on this laptop?", "How long is this laptop's warranty?", "casual"),
    (
        "Is breakfast included in the room rate?",
        "Does the room price include breakfast?",
        "reworded",
    ),
    ("How do I update my billing information?", "How can I change my billing details?", "reworded"),
    ("What time is check-out?", "When do I have to check out?", "casual"),
    ("How do I add a user to a group on Linux?", "How to add a Linux user to a group", "casual"),
    ("Which foods are high in iron?", "What foods contain a lot of iron?", "reworded"),
    (
        "How do I unsubscribe from your newsletter?",
        "How can I stop getting your newsletter?",
        "reworded",
    ),
    ("Is parking available at the venue?", "Can I park at the venue?", "casual"),
    ("What is the speed of light?", "How fast does light travel?", "reworded"),
    (
        "How do I export a Google Sheet as a PDF?",
        "How can I save a Google Sheet as PDF?",
        "reworded",
    ),
    (
        "Can I return an item without a receipt?",
        "Is it possible to return something if I don't have the receipt?",
        "reworded",
    ),
    ("thanks, how do I change my email address?", "How do I change my email address?", "casual"),
    ("Do you price match?", "Do you offer price matching?", "casual"),
    (
        "How do I get a copy of my bank statement?",
        "Where can I download my bank statement?",
        "reworded",
    ),
    (
        "What's the difference between a list and a tuple in Python?",
        "How does a Python list differ from a tuple?",
        "code",
    ),
    (
        "How do I kill a process on Linux?",
        "How can I terminate a running process in Linux?",
        "code",
    ),
    ("What is the boiling point of water?", "At what temperature does water boil?", "reworded"),
    ("I forgot my password", "I can't remember my password, help", "casual"),
    (
        "How do I sort a dictionary by value in Python?",
        "Sort a Python dict by its values - how?",
        "code",
    ),
    (
        "Are there any fees for international transfers?",
        "Do international transfers cost extra?",
        "reworded",
    ),
    (
        "How do I enable two-factor authentication?",
        "How do I turn on 2FA for my account?",
        "reworded",
    ),
    ("Can I pay in instalments?", "Is it possible to pay in installments?", "casual"),
)

PARAPHRASE_ZH: tuple[Row, ...] = (
    ("退款政策是什么？", "你们的退款规则是怎样的？", "口语"),
    ("怎么重置密码？", "密码忘了怎么重新设置？", "口语"),
    ("你们几点开门？", "营业时间是几点到几点？", "改写"),
    ("可以寄到香港吗？", "你们能发货到香港吗？", "改写"),
    ("快递一般几天能到？", "发货以后多久能收到？", "改写"),
    ("怎么联系人工客服？", "人工客服怎么找？", "口语"),
    ("支持哪些付款方式？", "可以用哪些方式付款？", "改写"),
    ("学生有优惠吗？", "学生购买有没有折扣？", "改写"),
    ("怎么注销账号？", "我想注销我的账户，怎么操作？", "改写"),
    ("发票在哪里下载？", "去哪里可以下载发票？", "口语"),
    ("法国的首都是哪里？", "法国首都是哪个城市？", "口语"),
    ("用 Python 怎么反转列表？", "Python 里如何把一个列表倒过来？", "代码"),
    ("怎么撤销 git 的上一次提交？", "git 怎样回退最近一次提交？", "代码"),
    ("流感有哪些症状？", "得了流感会有什么症状？", "改写"),
    ("鸡蛋要煮几分钟？", "煮鸡蛋需要多长时间？", "改写"),
    ("酒店可以带狗入住吗？", "酒店允许带宠物狗吗？", "改写"),
    ("会员可以随时取消吗？", "会员是不是随时都能退订？", "改写"),
    ("怎么查看订单物流？", "我的快递到哪儿了，怎么查？", "口语"),
    ("房价包含早餐吗？", "住宿含不含早餐？", "口语"),
    ("退房时间是几点？", "几点之前要退房？", "口语"),
    ("哪些食物含铁比较多？", "什么食物富含铁？", "改写"),
    ("怎么取消订阅邮件？", "如何不再接收你们的邮件？", "改写"),
    ("场馆有停车位吗？", "活动现场可以停车吗？", "改写"),
    ("没有小票可以退货吗？", "小票丢了还能退货吗？", "口语"),
    ("可以分期付款吗？", "支持分期吗？", "口语"),
    ("跨境转账要手续费吗？", "往国外转账收不收手续费？", "改写"),
    ("怎么开启两步验证？", "如何打开账号的二次验证？", "改写"),
    ("水的沸点是多少度？", "水在多少度会沸腾？", "改写"),
)
