"""Does a request need reasoning? Cues a short request gives that it is hard (English, Chinese,
Japanese).

Size says nothing of difficulty: "prove there are infinitely many twin primes" is seven words and
went to the fast model. A request asks for reasoning when it asks for a proof, a derivation, a
problem solved, an analysis of trade-offs, steps of reasoning or rigour. Most of those verbs are
also everyday words ("proof of income", 在职证明, "show that photo", "solve my crossword",
"step by step, how do I boil an egg"), so the weak ones count only beside a sign of maths or
logic in the same message (a formula, a variable, a maths noun), and "step by step" only beside
a verb of reasoning. :func:`reasoning_cue` names the first cue found, so a route can say why.

Pure functions over the text; looked at in the head and tail the caller passes (the request says
what it wants at its start or end), each pattern linear in the text.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from hermes_core.agent.routing.code_cues import SYSTEM_PART, technical_starts

# Signs the message is about maths or logic: an operator between numbers or one-letter
# variables, f(x), a maths noun (not 积分 alone: a shop's loyalty points; not "np": no problem).
_MATHS = re.compile(
    r"\d\s*[-+*/^=<>≤≥²³]\s*(?:\d|[a-z]\b|\()|[a-z]\s*[(（]\s*[a-z0-9]{1,3}\s*[)）]\s*=|[²³√∑∫∞≤≥]"
    r"|\b[a-z]\^\d|\bO\([^)\n]{1,12}\)"
    r"|\b(?:primes?|integers?|irrational|rational numbers?|theorems?|lemmas?|inequalit(?:y|ies)"
    r"|equations?|recurrences?|sequences?|series|converge[sn]?t?|diverge[sn]?t?|polynomials?"
    r"|matri(?:x|ces)|limits?|integrals?|derivatives?|variance|probabilit(?:y|ies)|distributions?"
    r"|induction|infinitely|square roots?|sqrt|triangles?|logarithms?|closed[- ]form"
    r"|complexity|undecidable|decidable|halting problem|(?-i:NP)|functions?|formulas?|formulae"
    r"|implies|chessboard|rooks?|permutations?|combinations?)\b"
    r"|根号|根號|无理数|無理數|有理数|有理數|素数|質數|质数|整数|整數|定理|引理|不等式|方程|递推|遞推"
    r"|数列|數列|级数|級數|收敛|收斂|发散|發散|多项式|多項式|矩阵|矩陣|函数|函數|极限|極限"
    r"|定积分|定積分|不定积分|不定積分|导数|導數|方差|概率|分布|分佈|归纳|歸納|无穷|無窮|三角形|复杂度|複雜度|命题|命題|等式|通项|通項"
    r"|公式|内角|內角|棋盘|棋盤|整数解|整數解"
    # Japanese spells some apart from both Chinese forms (無理数, 収束, 帰納, 関数)
    r"|無理数|有理数|自然数|実数|収束|発散|級数|関数|導関数|微分|確率|帰納|無限|平方根|計算量"
    r"|漸化式|一般項",
    re.IGNORECASE)

# "step by step" is a request for reasoning beside one of these, else a how-to ("step by step,
# how do I boil an egg?"); the window is bounded so a long line costs no more than linear time.
_REASON_VERB = r"analy[sz]e|solve|reason|prove|derive|why|think|compare|evaluate"

# The auxiliaries a "why" question turns on ("why do ...", "why isn't ...").
_AUX = (r"do|does|did|is|are|was|were|can|could|would|should|will|has|have|had|must|might"
        r"|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|can't|couldn't|won't|wouldn't"
        r"|shouldn't|hasn't|haven't")

# The person asked and the pronouns: after "why is" or "explain why" they make small talk about
# someone, or about what the conversation said ("why is that?" is chit-chat too).
_PRONOUN = r"you|u|it|that|this|he|she|they|we|i|him|her|them"
# After "why" + an auxiliary: a person's pronoun, or a thing's with "so" and nothing more ("why is
# that so?"); "why did it crash on him" asks about a thing, as a noun does.
_WHY_NOT_ASKED = r"(?:so|you|u|he|she|they|we|i|him|her|them)\b|(?:it|that|this)\s+so\b[^\w\n]*(?:\n|\Z)"

# What after "explain/tell me/I wonder how|why" makes no explanation: a pronoun, a verb of being
# ("tell me how are you") or a quantity (a one-line lookup).
_NOT_EXPLAINED = (rf"{_PRONOUN}|your|yours|ur|are|is|was"
                  r"|were|am|many|much|old|long|far|tall|big|high|often|soon|large|fast")

# What after なぜ/どうして makes no explanation asked: "because" (なぜなら), "somehow" (なぜか),
# "by all means" (どうしても), "how are you / what to do" (どうしてる/た/ます/いる/いい/ほしい/おく),
# a tail of chat (ですか, だろう, なの, よ, ね, って, Kansai's や: なんでやねん, laughter), the
# conversation and the people in it ("why is that", "why say such a thing", "why me") or the
# word again ("why, why").
_JA_NOT_EXPLAINED = (r"なら|か|も|る|た|ま[すし]|い[るいたまて]|ほし|お[くいこけき]|よ|ね|な[のんぁあ]|や"
                     r"|の[?？!！。、]|だ|で[すしっ]|っ|ん|[wｗ笑草]|そう|そんな|こんな|あんな"
                     r"|それ|これ|あれ|[私僕俺君]|あなた|お前|なぜ|何故|どうして|なんで")

# A favour done or not done for the speaker (電話くれなかった, 連絡くれない: "why didn't you call
# me"), within the sentence: the person addressed, as "you" in English; not a request to tell
# or explain (教えてくれる？).
_JA_FAVOUR = r"[^。！？?!\n]{0,20}?(?<!教えて)(?<!説明して)(?<!解説して)くれ"

# (label, pattern, needs a maths sign). First match wins; the label is what a route shows.
_CUES: tuple[tuple[str, re.Pattern[str], bool], ...] = (
    ("proof", re.compile(
        r"\bprove\b|\b(?:give|write|find|sketch|need)\s+(?:a|an|the)\s+(?:\w+\s+)?proof\b"
        r"|\bproof\s+that\b|\b(?:show|demonstrate)\s+that\b(?!\s+(?:to|again|here)\b"
        # "show that series again", "show that function in the menu": a thing pointed at
        r"|\s+[a-z]{2,}\s*(?:$|[,.!?;:]|(?:again|to\s+(?:me|us|him|her|them)|in\s+the|on\s+the"
        r"|from\s+the|here|there|later)\b))"
        # 证明了: "who proved"; a certificate is 开/在职/收入证明 and is not followed by a claim
        r"|(?:证明|證明)(?![了过過])|求证|求證|试证|試證"
        # Japanese 証明: not a certificate (証明書) nor a fact about one (証明した, 証明された)
        r"|証明(?!書|し(?:た|ました)|され|済)|ことを示(?:せ|して|しなさい)", re.IGNORECASE), True),
    ("derivation", re.compile(r"\bderive\b|\bderivation\b", re.IGNORECASE), True),
    ("derivation", re.compile(r"通项公式|通項公式|一般項"), False),
    ("derivation", re.compile(r"推导|推導|導出"), True),    # 推导一下预算: a budget worked out
    ("problem solving", re.compile(
        r"\bsolve\b|\bfind\s+all\b|\bhow\s+many\s+ways\b|\bclosed[- ]form\b"
        r"|求解|所有(?:整数|整數|实数|實數)?解|有多少种(?:放法|排法|取法|走法|方法)"
        r"|有多少種(?:放法|排法|取法|走法|方法)"
        r"|を解(?:いて|け|きなさい)|すべての(?:整数|実数)?解|何通り", re.IGNORECASE), True),
    ("trade-off analysis", re.compile(
        # pros and cons, 优缺点, 利弊 and a "detailed analysis" weigh a phone, a flat, a job:
        # everyday choices, not a reasoning task (nor can a cue tell an economics essay from them)
        r"\b(?:analy[sz]e|compare|weigh|evaluate|assess|contrast|critique)\b[^.?!\n]{0,60}?"
        r"\b(?:trade-?offs?|implications)\b"
        r"|\bcritically\s+(?:evaluate|assess|analy[sz]e|examine)\b"
        r"|(?:分析|比较|比較|权衡|權衡|评估|評估)[^。！？?!\n]{0,30}?"
        r"(?:权衡|權衡|取舍|取捨)"
        r"|(?:分析|比較|評価|検討)[^。！？?!\n]{0,30}?トレードオフ"
        r"|トレードオフ[^。！？?!\n]{0,30}?(?:分析|比較|評価|検討)", re.IGNORECASE), False),
    ("step-by-step reasoning", re.compile(
        rf"\bstep[- ]by[- ]step\b(?=[^\n]{{0,200}}?\b(?:{_REASON_VERB})\b)"
        rf"|\b(?:{_REASON_VERB})\b[^\n]{{0,200}}?\bstep[- ]by[- ]step\b"
        # standing alone it is about answering; "about X" takes X's difficulty (below)
        r"|\b(?:think|reason)\s+(?:carefully|hard)\b(?!\s+about\b)"
        r"|\b(?:think|reason)\s+it\s+through\b|\breason\s+through\b"
        r"|(?:一步一步|一步步|逐步|分步)[^。！？?!\n]{0,4}?(?:分析|推理|推导|推導|求解|证明|證明|论证|論證|思考)"
        r"|(?:分析|推理|求解|思考)[^。！？?!\n]{0,30}?(?:一步一步|一步步|逐步|分步)"
        r"|推理过程|推理過程|思考过程|思考過程"
        r"|(?:一歩ずつ|段階的に|順を追って|ステップバイステップで?)[^。！？?!\n]{0,4}?"
        r"(?:推論|分析|証明|導出|考え|解)"
        r"|(?:推論|分析|証明|導出|考え)[^。！？?!\n]{0,30}?"
        r"(?:一歩ずつ|段階的に|順を追って|ステップバイステップ)|推論過程", re.IGNORECASE), False),
    # "think carefully about what to cook": a weak cue, its object a sign of maths or logic
    ("step-by-step reasoning", re.compile(r"\b(?:think|reason)\s+(?:carefully|hard)\s+about\b",
                                          re.IGNORECASE), True),
    ("rigour", re.compile(
        r"\bformal(?:ly)?\s+(?:proof|argument)\b"
        r"|严格证明|嚴格證明|论证|論證|厳密(?:に|な)(?:論証|論じ)", re.IGNORECASE), False),
    # "rigorously proofread", "justify your hotel pick": rigour only about maths
    ("rigour", re.compile(r"说明理由|說明理由|给出理由|給出理由|的理由|\brigorous(?:ly)?\b"
                          r"|理由を(?:説明|述べ)|厳密に"
                          r"|\bjustify\s+(?:your|each|every|the|this|that)\b", re.IGNORECASE), True),
    ("system design", re.compile(
        r"\b(?:design|architect)\s+(?:a|an|the)\s+(?:\w+\s+){0,2}?"
        r"(?:distributed|fault[- ]tolerant|highly[- ]available|scalable|replicated)\b"
        r"|设计一个(?:分布式|高可用|高并发|可扩展)|設計一個(?:分散式|分布式|高可用|高並發|可擴展)"
        r"|(?:分散|高可用性?|スケーラブルな?)[^。！？?!\n]{0,10}?"
        r"(?:システム|アーキテクチャ|レートリミッタ)を設計",
        re.IGNORECASE), False),
    # A request that opens with 证明 asks for a claim proved whatever its topic (a certificate is
    # 证明书/证明文件/开证明, "how do I prove" is 怎么证明, "prove I am me" is 证明我, "prove you
    # are human" 证明你是真人 and "prove yourself" 证明自己; "你的结论" is a claim)
    ("proof", re.compile(
        r"\A\s*+(?:(?:请|請)\s*+)?(?:你\s*+)?(?:试|試)?(?:证明|證明)"
        r"(?![了过過书書信件材料我]|一下你|文件|自己|[你您](?!的))"
        r"[^。！？?!\n]{4}"), False),
    # Asking why or how something is so is asking for an explanation, whatever the topic: the
    # words cannot tell "why is the sky blue" from "why do heavier objects not fall faster".
    # What counts: "why" + an auxiliary + a subject and a verb of their own ("why not?", "why is
    # that?" and "why did you say that?" talk about the conversation), "explain/tell me/I wonder
    # why|how X Y" (not "explain how to": a how-to; not a pronoun: "tell me how your day was",
    # "how it went", "how are you"; not a quantity: "tell me how many people live in Tokyo" is a
    # lookup), 为什么/为何 + a clause (not "你为什么", "这就是为什么", "为什么呀", "为什么哈哈"),
    # 解释 + why/reason/mechanism; Japanese なぜ/どうして + a clause, …の原因/仕組みを説明して.
    ("explanation", re.compile(
        rf"\bwhy\s+(?:{_AUX})\s+(?!{_WHY_NOT_ASKED})"
        r"[\w'-]+(?:\s+[\w'-]+)+"
        r"|\bwhy\s+(?:do|does|did|would)\s+you\s+think\b"
        r"|\b(?:explain|tell\s+me|wonder|understand)\b(?:\s+(?:to\s+me|to\s+us|please|in\s+detail"
        rf"|briefly|simply))?\s+(?:why|how)\s+(?!(?:to|{_NOT_EXPLAINED})\b)[\w'-]+(?:\s+[\w'-]+)+"
        r"|(?<![你您是他她])(?:为什么|為什麼|为何|為何)(?![不呢呀啊吗嗎嘛呵嘿嘻]|哈(?!哈[镜鏡])|这样|這樣|那样|那樣|这么说|這麼說)"
        # a clause: three characters, or a verb and 了 (为什么挂了: something happened)
        r"(?:[^。！？?!，,\s]{3}|[^。！？?!，,\s了]了)"
        r"|(?:解释|解釋|讲解|講解)[^。！？?!\n]{0,10}?(?:为什么|為什麼|为何|為何|原因|原理|机制|機制)"
        # Japanese: なぜ/何故/どうして + a clause of its own, not asked of the person ("あなたは
        # なぜ", "どうしてそんな…", a pronoun after it), not なぜなら/なぜか/どうしても (because,
        # somehow, by all means), not どうしてる/た/いい/ほしい/おく (how are you, what to do),
        # not a tail of chat (ですか, だろう, なの, よ, ね, laughter); and a reason, cause or
        # mechanism of something named (not その/この理由) asked to be explained
        r"|(?<!あなたは)(?<!あなたが)(?<!お前は)(?<![君僕俺私彼]は)(?<!彼女は)(?:なぜ|何故|どうして|なんで)"
        rf"(?!{_JA_NOT_EXPLAINED})(?!{_JA_FAVOUR})[^。！？?!、，,\s]{{3}}"
        r"|(?<=[^。！？?!、，,\s]{2})(?<![そこあど]の)(?<!あなたの)(?<![君僕俺私]の)"
        r"(?:理由|原因|仕組み|しくみ|原理|メカニズム)(?:を|について)[^。！？?!\n]{0,6}?"
        r"(?:説明|解説)"
        # how something named (a subject marked は/が) comes about, asked to be explained, as
        # "explain how X Y"; without a subject it is a how-to ("explain how to reset it")
        r"|(?:[^。！？?!、，,\s]{1,12}?[はが](?:どうやって|どのように)"
        r"|(?:どうやって|どのように)[^。！？?!、，,\s]{1,12}?[はが])"
        r"[^。！？?!\n]{1,20}?か(?:を)?(?:説明|解説)",
        re.IGNORECASE), False),
)

# Laughter: English's written laughs, Chinese 哈哈/呵呵/嘻嘻, Japanese ｗｗ and a closing 笑/草,
# the crying-laughing faces. Looked for only in the question's own line, in a bounded window.
_LAUGH = re.compile(
    r"\b(?:lol|lmao|rofl|ha(?:ha)+h?|he(?:he)+|hah)\b(?!\.\w)|(?!哈哈[镜鏡])[哈呵嘻]{2}|[😂🤣]"
    # ｗｗ as a word of its own ("www." is an address, "ww2" a name; 哈哈镜 a funhouse mirror)
    r"|(?<![A-Za-z0-9_.])[wｗ]{2}(?![A-Za-z0-9_.])"
    r"|(?<=[\u3040-\u30ff\u4e00-\u9fff])[wｗ笑草](?=[\s。！？?!…]|\Z)",
    re.IGNORECASE)

# How far past a why its line is read for laughter (a question and its tail fit in it).
LAUGH_WINDOW = 160

# A why told as a joke, read at the why itself: the riddle's road-crossing frame, the subject a
# creature or thing named in a few words (past tense, the question ending there or answered on
# its line by a statement, "To get to the other side.": "why do people cross the road without
# looking" asks something, and so does a second question after it); in Chinese 为什么 + at most
# four characters + 过马路, in Japanese なぜ/どうして/なんで + a subject + 道(路)を渡った + の/か.
_JOKE_FRAME = re.compile(
    r"why\s+did\s+(?:the|a|an|this|that)\s+(?:[\w'-]+\s+){1,3}?cross\s+the\s+(?:road|street)"
    r"[^\S\n]*(?:[?!.…]*[^\S\n]*(?:\n|\Z)|[?？][^?？\n]+(?:\n|\Z))"
    r"|(?:为什么|為什麼|为何|為何)[^。！？?!，,\s]{0,4}?(?:过|過|穿过|穿過|横穿|橫穿)(?:马路|馬路)"
    r"(?:[？?。！!…]*[^\S\n]*(?:\n|\Z)|[?？][^?？\n]+(?:\n|\Z))"
    r"|(?:なぜ|何故|どうして|なんで)[^。！？?!、，,\s]{1,8}?[はが](?:道|道路|車道|通り)を(?:渡|横断し)った"
    r"(?:の|んだ)?(?:か|だろう)?(?:[？?。！!…]*[^\S\n]*(?:\n|\Z)|[?？][^?？\n]+(?:\n|\Z))",
    re.IGNORECASE)

# The first letters the frame's whys start with (most whys fail here without a regex call).
_FRAME_OPENS = frozenset("wW为為な何ど")
_QUESTION_MARK = re.compile("[?？]")

# Before a why on its line: the joke or riddle announced ("here's a riddle:", "tell you a
# joke", knock knock; 讲个笑话, 笑话：; なぞなぞ, ジョーク：). A word of the frame alone is not one
# ("why does the riddle solver fail" asks about a program).
_JOKE_ANNOUNCED = re.compile(
    r"\b(?:joke|riddle|pun)\s*[:：—–-]"
    r"|\b(?:tell|told|telling|heard|hear|know|got|here'?s|here\s+is|one\s+more)\s+(?:you\s+|me\s+)?"
    r"(?:a|one|this|another|my)\s+(?:\w+\s+)?(?:joke|riddle|pun)\b|\bknock[- ]knock\b"
    r"|(?:讲|講|说|說|来|來|听|聽)(?:个|個|一个|一個|一則|一则)?(?:冷)?(?:笑话|笑話|谜语|謎語|段子"
    r"|脑筋急转弯|腦筋急轉彎)|(?:笑话|笑話|谜语|謎語|脑筋急转弯|腦筋急轉彎)\s*[:：]"
    r"|なぞなぞ|(?:ジョーク|ダジャレ|小話|謎かけ)(?:を(?:一つ|ひとつ)|\s*[:：])",
    re.IGNORECASE)
# ... unless the joke is denied: "No joke:", "not a joke -", 不是笑话, なぞなぞじゃない say the
# question after them is meant.
_JOKE_DENIED = re.compile(
    r"\b(?:no|not\s+(?:a|an|my)|isn'?t\s+(?:a|an)|is\s+not\s+(?:a|an))\s+(?:\w+\s+)?"
    r"(?:joke|riddle|pun)\b|\bnot\s+(?:joking|kidding)\b"
    r"|(?:不是|并非|並非|没有|沒有)(?:在|个|個|一个|一個)?(?:开玩笑|開玩笑|笑话|笑話|谜语|謎語|段子)"
    r"|(?:なぞなぞ|ジョーク|冗談)(?:じゃ|では)(?:ない|なく)",
    re.IGNORECASE)

# After a why on its line: its punchline told (Because …, 因为…。, 答え：…), a statement to the
# line's end; a question after it ("Because of the cache?", 因为缓存吗) is asking still, and so
# is one naming a technical thing (context for a real question: "Because of npm install.").
# Japanese …から after a why is as often "since I updated" as an answer: not read.
_PUNCHLINE = re.compile(
    r"[?？][^\S\n]*(?:because|'?cause|cuz|coz)\b[^?？\n]*(?:\n|\Z)"
    r"|[?？][^\S\n]*(?:因为|因為|答案是|答[:：])[^?？\n]*(?<![吗嗎呢么麼吧])[。！!…]*[^\S\n]*(?:\n|\Z)"
    r"|[?？][^\S\n]*答え(?:は)?[:：][^?？\n]*(?:\n|\Z)",
    re.IGNORECASE)

# A person's life given to the why's subject (breaks up with, goes to therapy or a party, is
# lonely or jealous, goes broke; 分手, 离婚, 孤独, 看医生; 別れた, 寂しい, 病院): a database that
# breaks up with a cache is a riddle's, so the parts of a running system its line names say
# nothing of a failure. A fault's why ("slow", "fail", "miss", "go down") lives no such life.
_A_PERSON_S_LIFE = re.compile(
    # broken up with or at the question's end ("break up the query" is a program's), dumped as
    # a partner is (got/was dumped; "the database dump" is a backup's)
    r"\b(?:(?:break(?:s|ing)?|broke)\s+up(?=\s+with\b|\s*[?？])"
    r"|(?:got|gets|get|was|were|been)\s+dumped|divorc(?:e|es|ed|ing)"
    r"|marr(?:y|ies|ied)|f[ae]ll(?:s)?\s+in\s+love|(?:go|goes|went)\s+on\s+a\s+date"
    r"|(?:go|goes|went|going)\s+to\s+(?:the\s+|a\s+)?(?:therapy|therapist|doctor|dentist"
    r"|psychiatrist|party|bar|gym|church|prison|jail)|(?:go|goes|went)\s+broke"
    r"|lonely|jealous|sad|tired|depressed|heartbroken|embarrassed"
    r"|(?:leave|left)\s+(?:his|her)\s+(?:wife|husband|girlfriend|boyfriend))\b"
    r"|分手|离婚|離婚|结婚|結婚|谈恋爱|談戀愛|约会|約會|看医生|看醫生|心理医生|孤独|孤獨|寂寞"
    r"|伤心|傷心|难过|難過|吃醋|失恋|失戀|嫉妒|派对|派對"
    r"|別れ|離婚|結婚|付き合|(?<!アップ)デート|病院|医者|パーティー|寂し|さびし|悲し|失恋|嫉妬|落ち込",
    re.IGNORECASE)

# A fault asked in the why's question (fails, is slow, went down, stale, full; 慢, 挂, 失败;
# 落ちた, 遅い, 古い): a life word beside one is a modifier or a program's sense (a hospital's
# database that went down, 约会App的数据库很慢, アップデート後に遅い, the sad path failing), so
# the line is a fault's why, not a riddle ("feeling down" is a mood).
_A_FAULT_ASKED = re.compile(
    r"\b(?:fail\w*|slow\w*|(?<!feeling\s)(?<!feel\s)(?<!feels\s)(?<!felt\s)down|crash\w*"
    r"|hang(?:s|ing)?|hung|stuck|miss(?:es|ed|ing)?|stale|full|lock(?:s|ed)|errors?|broken"
    r"|timeouts?|time[sd]?\s+out|leak\w*|corrupt\w*|stop(?:s|ped)?|lag(?:s|ging|gy)?"
    r"|drop(?:s|ped)?)\b"
    r"|慢|挂|掛|失败|失敗|崩|报错|報錯|错误|錯誤|满了|滿了|卡住|卡死|超时|超時|宕机|宕機|异常|異常"
    r"|打不开|打不開|丢失|丟失|坏了|壞了|泄漏|洩漏|失效|过期|過期|连不上|連不上"
    r"|落ち(?!込)|遅|壊れ|失敗|古い|エラー|止ま|重い|固ま|切れ|消え|漏れ|効かな|繋がらな|つながらな"
    r"|タイムアウト|いっぱい|満杯",
    re.IGNORECASE)

# The speaker in a why's line (I, my, we; 我; 私, 僕, 俺) or a thing pointed at (this, 这个,
# この): a "Because …" after it tells the speaker's own context ("Why does my app crash?
# Because I changed the config.", "why does this page return 500? Because the server is
# down."), not a punchline, which is told of the joke's subject, no one's.
_SPEAKERS_OWN = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|us|our|ours|this|these)\b"
    r"|[我咱]|私|僕|俺|わたし|自分|这个|這個|这些|這些|この|その",
    re.IGNORECASE)


# A why about a person, which the explanation cue leaves out: asked of the one addressed or about
# someone a personal pronoun points at ("why did he", "explain why she", 他为什么, 彼はなぜ).
_PERSON_WHY = re.compile(
    rf"\bwhy\s+(?:{_AUX})\s+(?:you|u|he|she|they|we|i|him|her|them)\b"
    r"|\bexplain\b(?:\s+(?:to\s+me|to\s+us|please|in\s+detail|briefly|simply))?"
    r"\s+why\s+(?:you|u|he|she|they|we|i)\b"
    r"|[你您他她](?:为什么|為什麼|为何|為何)"
    r"|(?:あなた|お前|彼女|[君僕俺私彼])[はが](?:なぜ|何故|どうして|なんで)",
    re.IGNORECASE)

# A request to explain: "explain" opening a sentence or after please/can you; 解释一下, 请解释
# (not 不解释: "why doesn't he explain"); 説明して/解説して closing a sentence (not 説明してくれ
# なかった: "why didn't he explain").
_ASKS_TO_EXPLAIN = re.compile(
    r"(?:^|[.?!,;:]|\bplease|\bpls|\bcan\s+you|\bcould\s+you|\bwould\s+you|\bhelp\s+me)\s*"
    r"explain\b"
    r"|(?<![不没沒别別])(?:解释|解釋|讲解|講解)(?:一下|下)"
    r"|(?:请|請|帮我|幫我|给我|給我)\s*(?:解释|解釋|讲解|講解)"
    r"|(?:説明|解説)(?:して(?:ください|下さい|ほしい|欲しい|くれる|くれますか|もらえる)?|しなさい"
    r"|をお願い)[?？。！!]?(?=\s|$)",
    re.MULTILINE)   # read on the lower-cased text (see code_cues._FOLDED)
_EXPLAIN_WORDS = ("explain", "解释", "解釋", "讲解", "講解", "説明", "解説")
_ASKS_TO_EXPLAIN_BLIND = re.compile(_ASKS_TO_EXPLAIN.pattern, re.IGNORECASE | re.MULTILINE)

# How far before a why about a person its line is read for a technical thing (a Chinese or
# Japanese sentence may name it before the pronoun); after it, LAUGH_WINDOW.
BEFORE_WINDOW = 80


def _asked_of_a_thing(text: str, folded: str, code_shapes: bool = True) -> bool:
    """A why about a person still asks for an explanation: its line, within a bounded window,
    names a technical thing routing's code cues know or asks to explain, and does not laugh.

    Said in words: a why about a person is chat ("why did he ignore me", 他为什么不理我,
    彼はなぜ怒ったの) unless the same line names something only a program has (a shell command,
    a code identifier, pasted code, a URL, a code noun or a programming language, a fault such
    as a segfault, 报错 or ビルド: ``code_cues.technical_starts``, the vocabulary the code rules
    read) or asks to explain (explain, 解释一下, 説明して): "why did he get a segfault in
    malloc", 他为什么运行make test的时候报错了 and 彼はなぜビルドに失敗したのか説明して are
    troubleshooting or an explanation asked for, and answered worse by the fast model. The
    technical things and requests to explain are found once over the text; each why then looks
    up its window, so a long run of whys costs linear time. ``code_shapes=False``: the caller
    found no fence, URL, shell command or pasted code in ``text``; they are not looked for.
    ``folded`` is ``text.lower()``, made once by the caller."""
    windows: list[tuple[int, int, int]] = []   # (why, its window's start, end)
    for m in _PERSON_WHY.finditer(text):
        start = m.start()
        newline = text.rfind("\n", max(0, start - BEFORE_WINDOW), start)
        lo = newline + 1 if newline >= 0 else max(0, start - BEFORE_WINDOW)
        end = text.find("\n", start, start + LAUGH_WINDOW)
        windows.append((start, lo, end if end >= 0 else min(len(text), start + LAUGH_WINDOW)))
    if not windows:
        return False
    # the windows joined where they touch: each stretch of text is scanned once
    spans: list[list[int]] = []
    for _, lo, hi in windows:
        if spans and lo <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    spots = {spot for lo, hi in spans
             for spot in technical_starts(text, folded, lo, hi, shapes=code_shapes)}
    if any(word in folded for word in _EXPLAIN_WORDS):   # most whys ask nothing explained
        explain, read = ((_ASKS_TO_EXPLAIN, folded) if len(folded) == len(text)
                         else (_ASKS_TO_EXPLAIN_BLIND, text))
        spots.update(m.start() for lo, hi in spans for m in explain.finditer(read, lo, hi))
    ordered = sorted(spots)
    for start, lo, hi in windows:
        i = bisect_left(ordered, lo)
        if i < len(ordered) and ordered[i] < hi \
                and not _said_as_chat(text, folded, start, code_shapes):
            return True
    return False


def _said_as_chat(text: str, folded: str, start: int, code_shapes: bool = True) -> bool:
    """The why-question at ``start`` is chat: it laughs in its own line, or is told as a joke.

    One rule reads alike in English, Chinese and Japanese: a why asks for an explanation
    whatever it is about, unless it is asked of the person addressed or about someone pointed
    at by a personal pronoun (you/he/she/we, 你/他/她, あなた/彼/彼女: the pattern's own
    exclusions), or it laughs (lol, 哈哈, ｗｗ, 笑) or is told as a joke (:func:`_told_as_a_joke`).
    A subject named by a noun, or none at all,
    tells nothing of a person or a program: "why did the app log me out" and "why did my
    sister ignore me", 为什么挂了 and 为什么迟到了, なんで落ちたの and どうして遅れたの read
    alike, and the two mistakes cost unlike (a chat question on the default model costs a
    little more, a troubleshooting one on the fast model is answered worse), so they keep the
    cue. "Why did the chicken cross the road" is no noun's doing but the riddle's frame: with
    its subject swapped ("why did the build cross the memory limit") it is a question again.
    The line is read in a bounded window after ``start``; ``folded`` is ``text.lower()``;
    ``code_shapes`` as :func:`reasoning_cue`'s."""
    end = text.find("\n", start, start + LAUGH_WINDOW)
    hi = end if end >= 0 else start + LAUGH_WINDOW
    return (_LAUGH.search(text, start, hi) is not None
            or _told_as_a_joke(text, folded, start, hi, code_shapes))


def _told_as_a_joke(text: str, folded: str, start: int, hi: int, code_shapes: bool = True) -> bool:
    """The why at ``start`` (its line read up to ``hi``) is a joke or riddle being told: it takes
    the riddle's road-crossing frame, its line announces a joke before it (not one denied: "No
    joke:"), or it is answered by its punchline after the question mark (not the speaker's own
    context: "Because I changed the config", or a thing pointed at: "why does this page …"). An
    announced or answered why naming a technical thing is asked still ("Here's a riddle: why
    does the Python loop never end?", the riddle's frame answered with "its plan_route() returns
    None"), and so is an answered one naming a part of a running
    system (``code_cues.SYSTEM_PART``: "Why does the build fail? Because the cache is stale."
    explains a failure; a joke's answer is about its subject, an atom or a cookie), unless its
    question gives its subject a person's life (``_A_PERSON_S_LIFE``: "Why did the database
    break up with the cache?") and asks of no fault (``_A_FAULT_ASKED``: "Why did the hospital's
    database go down?" names a life as a modifier). Each look is bounded to the why's own line."""
    if text[start:start + 1] in _FRAME_OPENS:
        # read to the line's window: cut at 80 characters, a second question after it was
        # an answer's end
        frame = _JOKE_FRAME.match(text, start, min(hi, len(text)))
        if frame is not None:
            # its answer, if told, names nothing technical (plan_route(), a traceback, a URL)
            mark = _QUESTION_MARK.search(text, start, frame.end())
            return mark is None or not technical_starts(
                text, folded, mark.start(), frame.end(), shapes=code_shapes)
    newline = text.rfind("\n", max(0, start - BEFORE_WINDOW), start)
    lo = newline + 1 if newline >= 0 else max(0, start - BEFORE_WINDOW)
    announced = (lo < start and _JOKE_ANNOUNCED.search(text, lo, start) is not None
                 and _JOKE_DENIED.search(text, lo, start) is None)
    if not announced:
        mark = _QUESTION_MARK.search(text, start, hi)
        if mark is None or _PUNCHLINE.match(text, mark.start(), min(hi, len(text))) is None \
                or _SPEAKERS_OWN.search(text, start, hi) is not None \
                or (SYSTEM_PART.search(text, start, hi) is not None
                    and (_A_PERSON_S_LIFE.search(text, start, mark.start()) is None
                         or _A_FAULT_ASKED.search(text, start, mark.start()) is not None)):
            return False
    return not technical_starts(text, folded, start, min(hi, len(text)), shapes=code_shapes)


def reasoning_cue(text: str, *, code_shapes: bool = True) -> str:
    """The first cue that ``text`` needs reasoning ("proof", "derivation", ...), or "".

    ``code_shapes=False`` says the caller has already searched ``text`` for a code fence, a URL,
    a shell command and pasted code and found none (the router's features do, for every
    request): a why about a person then looks only for technical words, identifiers and
    languages, not for those shapes a second time. The answer is the same either way."""
    maths: bool | None = None
    for label, pattern, needs_maths in _CUES:
        if label == "explanation":
            folded = text.lower()   # once: each why's looks read it (one per why cost n²)
            # a cue when one match is no chat (none when there is no match)
            if all(_said_as_chat(text, folded, m.start(), code_shapes)
                   for m in pattern.finditer(text)) \
                    and not _asked_of_a_thing(text, folded, code_shapes):
                continue
        elif not pattern.search(text):
            continue
        if needs_maths:
            if maths is None:
                maths = bool(_MATHS.search(text))
            if not maths:
                continue
        return label
    return ""
