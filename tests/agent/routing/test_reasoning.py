"""The cues that a request needs reasoning, and the everyday words they must not take."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from hermes_core.agent.routing.reasoning import reasoning_cue


@pytest.mark.parametrize(("text", "cue"), [
    ("Prove that there are infinitely many primes", "proof"),
    ("证明根号2是无理数", "proof"),
    ("Derive the formula for the variance of a binomial distribution", "derivation"),
    ("推导一元二次方程的求根公式", "derivation"),
    ("Find all integer solutions of x^2 - 2y^2 = 1", "problem solving"),
    ("Weigh the trade-offs of event sourcing versus CRUD", "trade-off analysis"),
    ("分析微服务和单体架构各自的优缺点和权衡", "trade-off analysis"),
    ("Think step by step: are all bloops lazzies?", "step-by-step reasoning"),
    ("请逐步推理", "step-by-step reasoning"),
    ("Is P equal to NP? Give a rigorous argument", "rigour"),
    ("Design a distributed rate limiter", "system design"),
    # Japanese, the same cues in its words (証明 is neither 证明 nor 證明)
    ("√2が無理数であることを証明して", "proof"),
    ("三角形の内角の和が180度であることを示せ", "proof"),
    ("漸化式a(n)=2a(n-1)+1の一般項を求めよ", "derivation"),
    ("二次方程式の解の公式を導出して", "derivation"),
    ("方程式x²-2y²=1を解いて", "problem solving"),
    ("マイクロサービスとモノリスのトレードオフを分析して", "trade-off analysis"),
    ("一歩ずつ推論して：すべてのAはBならAはCか？", "step-by-step reasoning"),
    ("このアルゴリズムの計算量を厳密に証明して", "proof"),
    ("この主張が正しいことを厳密に論じて", "rigour"),
    ("障害に強い分散システムを設計して", "system design"),
])
def test_each_kind_of_hard_request_is_named_by_its_cue(text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue


@pytest.mark.parametrize("text", [
    "How do I prove my address to open a bank account?",   # prove, no maths
    "What documents count as proof of income?",
    "Who proved Fermat's Last Theorem?",                   # a fact about a proof
    "谁证明了费马大定理？",
    "帮我开一个在职证明",                                    # a certificate
    "怎么证明我是我？",
    "ありがとう",
    "今日の天気は",
    "証明して",                                             # no maths: a document, a claim?
    "在職証明書を発行してください",                             # a certificate
    "収入証明には何が必要ですか？",
    "フェルマーの最終定理を証明したのは誰？",                    # a fact about a proof
    "このパズルを解いて",
    "一歩ずつ卵のゆで方を教えて",
    "ダイエットの方法を一歩ずつ説明して",
    "分散投資のメリットを教えて",
    "Can you show that photo again?",
    "Solve my crossword clue: a large cat, 4 letters",
    "Step by step, how do I boil an egg?",                  # a how-to, not reasoning
    "一步一步教我煮鸡蛋",
    "What is the derivative of x^2?",                       # maths, one fact
    "Give me a 5-star review, show that it matters",       # "5-s" is no formula
    "",
])
def test_an_everyday_use_of_a_cue_word_is_no_cue(text: str) -> None:
    assert reasoning_cue(text) == ""


# Everyday requests a user types with a word the cues use: pros and cons of a purchase or a move,
# a detailed look at a recipe, justifying a choice, a deictic "show that", 积分 as loyalty points,
# 推导 of a budget. They need no reasoning model.
@pytest.mark.parametrize("text", [
    "Compare the pros and cons of renting vs buying a house",
    "Weigh the pros and cons of taking the job offer",
    "Evaluate the pros and cons of a gap year",
    "Help me analyse the pros and cons of moving to Berlin",
    "Compare the advantages and disadvantages of these two phones",
    "比较一下iPhone和华为的优缺点",
    "帮我分析一下买房和租房的利弊",
    "评估一下这家餐厅的优缺点",
    "帮我比较一下这两款手机的优劣",
    "帮我权衡一下这两个工作的利弊",
    "请详细分析一下这份菜谱",
    "帮我深入分析一下这部电影",
    "全面分析一下这个城市的旅游资源",
    "Can you justify your recommendation for the hotel?",
    "Justify the price of this restaurant to my friend",
    "Please rigorously proofread my essay",
    "Can you show that series again, the one on Netflix?",
    "Show that function in the settings menu to me",
    "np, show that to me later",
    "怎么证明我的积分被盗了？",
    "我的积分被清零了，怎么证明是系统的问题？",
    "帮我推导一下这个月的预算",
    "推导一下明天的天气",
    "Think carefully about what to cook",                  # its object decides, as weak cues'
    "Think hard about which job offer to take",
])
def test_an_everyday_request_worded_with_a_cue_word_is_no_cue(text: str) -> None:
    assert reasoning_cue(text) == "", text


def test_step_by_step_looks_for_its_verb_within_a_bounded_window() -> None:
    far = "Step by step " + "x " * 200 + "why?"
    near = "Step by step, why does ice float?"
    assert reasoning_cue(near) == "step-by-step reasoning" and reasoning_cue(far) == ""


def test_the_japanese_explanation_shapes_are_bounded_and_read_hostile_runs_to_the_end() -> None:
    # Every Japanese branch is a fixed-width look-around, an exclusion list and a bounded run
    # ({3}, {2}, {0,6}?): no unbounded quantifier, so a run of cue words costs one step each
    # (checked at 100 KB -> 1 MB: 7-12x, as the other cues). Pinned on the pattern (no timed
    # test) and on what hostile runs give: nothing, or the cue found once.
    from hermes_core.agent.routing import reasoning
    explanation = next(p for label, p, _ in reasoning._CUES if label == "explanation").pattern
    japanese = explanation[explanation.index("(?<!あなたは)"):]
    assert re.search(r"[*+]|\{\d*,\}", japanese) is None, japanese
    assert re.search(r"[*+]|\{\d*,\}", reasoning._JA_NOT_EXPLAINED) is None
    assert reasoning_cue("あなたはなぜ" * 30_000) == ""
    assert reasoning_cue("どうして" * 50_000 + "？") == ""
    assert reasoning_cue("その理由を" * 40_000) == ""
    assert reasoning_cue("なぜ \u3000" * 40_000) == ""
    assert reasoning_cue("あの理由を詳しく" * 25_000 + "説明して") == ""
    assert reasoning_cue("火山" * 50_000 + "の噴火の原因を説明して") == "explanation"


# A why/how question asks for an explanation whatever it is about, in every language, unless it
# is chat: asked of the person addressed or about someone pointed at by a personal pronoun
# (you/he/she, 你/他/她, あなた/彼/彼女), or laughing in its line (lol, 哈哈, ｗ, 笑). A subject
# named by a noun, or none, says nothing of a person or a program ("the app log me out" and
# "my sister ignore me", 为什么挂了 and 为什么迟到了 read alike), and a technical question sent to
# the fast model costs more than a chat one sent to the default: they keep the cue. Colloquial
# なんで and "どうやって/どのように … か説明して" (the how of something named) ask as なぜ and
# "explain how X Y" do.
WHY_ABOUT_A_HAPPENING: tuple[tuple[str, str], ...] = (
    # the riddle's road-crossing frame is chat (see JOKE_OR_RIDDLE); other happenings keep it
    ("Why did the chicken cross the road?", ""),
    ("why did my neighbour call me at midnight", "explanation"),
    ("Why did the teacher give us a test today?", "explanation"),
    ("why did my sister ignore me", "explanation"),
    ("Why did the waiter charge us twice?", "explanation"),
    ("why would he say that", ""),
    ("Why did the Roman Empire fall?", "explanation"),
    ("Why did the dinosaurs die out?", "explanation"),
    ("Why did the stock market crash in 1929?", "explanation"),
    ("Why does the moon cross the sky from east to west?", "explanation"),
    # a Chinese or Japanese why with no subject reads alike about a person and a program
    # ("为什么迟到了" / "为什么报错了", "どうして遅れたの" / "なんで落ちたの"): it keeps the cue
    ("为什么迟到了？", "explanation"),
    ("为什么又生气了", "explanation"),
    ("为什么报错了？", "explanation"),
    ("为什么失败了？", "explanation"),
    ("為什麼當機了？", "explanation"),
    ("恐龙为什么灭绝了？", "explanation"),
    ("为什么冰会浮在水面上？", "explanation"),
    ("どうして遅れたの？", "explanation"),
    ("なんで泣いてるの？", "explanation"),
    ("なんで落ちたの？", "explanation"),
    ("どうして止まったの？", "explanation"),
    ("なんでやねん", ""),
    ("なんでもいいよ", ""),
    ("なんで空は青いの？", "explanation"),
    ("なんで恐竜は絶滅したのか教えて", "explanation"),
    ("なぜ恐竜が絶滅したのか", "explanation"),
    ("どうやってワクチンが免疫を鍛えるのか説明して", "explanation"),
    ("虹はどのようにできるのかを説明してください", "explanation"),
    ("どうやってパスワードをリセットするか説明して", ""),
    ("どうやって行くか説明して", ""),
)


# The same rule both ways in each language: a troubleshooting why keeps the cue whether its
# actor is "the app", a clause before it or nobody; the same why asked about a pronoun's person
# or laughing is chat. Each row of the first half (and the laughing / pronoun rows marked) got
# the wrong answer before.
WHY_CHAT_OR_EXPLANATION: tuple[tuple[str, str], ...] = (
    ("Why did the app log me out?", "explanation"),
    ("why did the server kick me out", "explanation"),
    ("Why did the VPN disconnect us again?", "explanation"),
    ("我跑了make test，为什么挂了？", "explanation"),
    ("为什么挂了？", "explanation"),
    ("部署完以后为什么错了", "explanation"),
    ("make testを実行したら、なんで落ちた？", "explanation"),
    ("ログインしたのに、なぜ消えたの？", "explanation"),
    ("why would he say that lol", ""),
    ("Why did the chicken cross the road? lol", ""),
    ("why did my sister ignore me haha", ""),
    ("Why did you do that?", ""),
    ("他为什么迟到了？", ""),
    ("她为什么这么生气", ""),
    ("为什么迟到了哈哈哈", ""),
    ("为什么挂了呵呵", ""),
    ("彼はなぜ怒ったの？", ""),
    ("彼女はどうして泣いているの？", ""),
    ("なんで遅れたのｗｗ", ""),
    ("どうして落ちたの笑", ""),
)


@pytest.mark.parametrize(("text", "cue"), WHY_CHAT_OR_EXPLANATION)
def test_a_why_is_chat_only_about_a_pronoun_s_person_or_laughing_in_each_language(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


def test_the_laughter_looked_for_after_a_why_stays_in_its_line_and_window() -> None:
    # laughter on another line, or far past the question, is not the question's
    assert reasoning_cue("Why did the app log me out?\nlol") == "explanation"
    assert reasoning_cue("Why did the app log me out? " + "x" * 300 + " lol") == "explanation"
    assert reasoning_cue("Why did the app log me out? " * 20_000 + "lol") == "explanation"
    # a written laugh is a word of its own, not letters inside one ("www", "lollipop")
    assert reasoning_cue("Why does the www subdomain redirect to the login page?") == "explanation"
    assert reasoning_cue("Why did the lollipop factory close?") == "explanation"


# "it", "this", "that" point at a thing, not a person: a why about one asks for an explanation
# ("why did it crash on him" is troubleshooting); "why is that so?" asks nothing new, as それは
# なぜだろう. The first five had no cue before (it/this/that were excluded as a person's pronouns).
WHY_ABOUT_A_THING: tuple[tuple[str, str], ...] = (
    ("why did it crash on him", "explanation"),
    ("Why does this fail with a segfault?", "explanation"),
    ("why is this so slow on large files", "explanation"),
    ("Why did that break the build?", "explanation"),
    ("why does it hang when he runs make", "explanation"),
    ("why is that so?", ""),
    ("Why is it so", ""),
    ("Why did he do that?", ""),
)


@pytest.mark.parametrize(("text", "cue"), WHY_ABOUT_A_THING)
def test_a_why_about_a_thing_pointed_at_by_it_this_or_that_keeps_the_cue(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


# Letters a laugh is spelled with, inside a name, a number or a word, are no laugh: each row read
# as laughing (no cue) before.
@pytest.mark.parametrize("text", [
    "why did the download of ww2.zip fail",
    "Why does the lol.exe launcher fail?",
    "为什么在哈哈镜里人会变形",
    "为什么哈哈镜里的像是歪的",
])
def test_laughter_letters_inside_a_name_or_word_are_no_laugh(text: str) -> None:
    assert reasoning_cue(text) == "explanation", text


@pytest.mark.parametrize(("text", "cue"), WHY_ABOUT_A_HAPPENING)
def test_a_why_keeps_the_cue_whether_its_subject_is_a_noun_or_none(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


# A why about one happening of a build, a test, a server, a war or a reaction, asked as a
# person's story is: the happening rule read these as chit-chat (the act on a thing, "the/my" +
# a tool, a bare Chinese predicate beside a name or code, a Japanese sentence with a katakana
# word or a particle-marked noun, a plain form that asks what holds). They ask for an
# explanation as they did before the rule.
TECHNICAL_WHY: tuple[str, ...] = (
    "Why did the build fail the tests?",
    "Why did the compiler reject my code?",
    "Why did the compiler give me a warning here?",
    "Why did the kernel kill my process?",
    "Why did the query return a null value?",
    "Why did my code throw an exception?",
    "Why did the migration drop the column?",
    "Why did the firewall block the connection?",
    "Why did the optimizer remove the loop?",
    "Why did the model overfit the data?",
    "Why did the revolution overthrow the monarchy?",
    "Why did the recession hit the economy so hard?",
    "Why did the experiment produce a different result?",
    "运行npm install，为什么报错了？",
    "编译通过了，为什么又报错了？",
    "为什么报错了？\nTraceback (most recent call last):\n  File \"app.py\", line 3",
    "なぜテストで落ちるの？",
    "どうしてエラーになるの？",
    "なんで冬になると寒くなるの？",
    "なんでサーバーを再起動すると直るの？",
    "なぜビルドに失敗したの？",
    "なんでテスト落ちたの？",
    "なぜ空を飛べるの？",
    "なぜ水に浮くの？",
    "なぜ404エラーになるの？",
    "なんでメモリリークするの？",
    "どうしてセグフォするの？",
)


@pytest.mark.parametrize("text", TECHNICAL_WHY)
def test_a_technical_or_scientific_why_about_one_happening_asks_for_an_explanation(
        text: str) -> None:
    assert reasoning_cue(text) == "explanation", text


# A why about a person (a pronoun's, or the one addressed) is chat, unless its line also names
# a technical thing routing's code cues know (a shell command, a code identifier, a code noun, a
# programming language, a fault a program reports) or asks to explain (explain, 解释, 説明して):
# then it is troubleshooting or an explanation asked for, and keeps the cue. Both directions in
# each language; the technical rows went to the fast model before.
WHY_ABOUT_A_PERSON: tuple[tuple[str, str], ...] = (
    ("why did he get a segfault in malloc", "explanation"),
    ("Why does she keep getting a stack trace from parse_csv()?", "explanation"),
    ("why did they run npm install twice", "explanation"),
    ("Why did you write this function in Python?", "explanation"),
    ("Explain why he got a segmentation fault", "explanation"),
    ("他为什么运行make test的时候报错了", "explanation"),
    ("她为什么调用getUser就报错", "explanation"),
    ("他为什么一直调用getUser", "explanation"),
    ("他为什么这样做？解释一下", "explanation"),
    ("彼はなぜビルドに失敗したのか説明して", "explanation"),
    ("彼女はなぜこのコードを書いたの？", "explanation"),
    ("彼はなぜnpm installを実行したの？", "explanation"),
    ("why did he ignore me", ""),
    ("Why did she make me cry?", ""),
    ("why would he say that", ""),
    ("Why did you do that?", ""),
    ("I wonder why he left", ""),
    ("why did he get a segfault in malloc lol", ""),
    ("他为什么不理我", ""),
    ("她为什么出错了还不承认", ""),
    ("他为什么运行得这么快", ""),
    ("why did she step on a ladybug", ""),
    ("彼はなぜ怒ったの", ""),
    ("彼女はどうして泣いているの？", ""),
    ("Why did the chicken cross the road?", ""),
    # a bare terminal, shell or bash among a person's words is an airport's, a beach's, a party's
    ("I'm at the airport terminal, why is he late?", ""),
    ("why did she leave the terminal before boarding", ""),
    ("We had a bash for her birthday, why did he leave early?", ""),
    ("why did he close the terminal and lose the ssh session", "explanation"),
    ("why did he write a bash script for the party", "explanation"),
)


# A bare terminal among a person's words adds nothing to a why: the question is read as the
# same question without it (a why about a flight asks for an explanation either way).
@pytest.mark.parametrize("text", [
    "I'm at the airport terminal, why is my flight late?",
    "I'm at the airport terminal, why is he late?",
    "We had a bash for her birthday, why did he leave early?",
])
def test_a_bare_terminal_among_a_person_s_words_reads_as_the_question_without_it(
        text: str) -> None:
    without = text.replace(" terminal", "").replace("a bash", "a party")
    assert reasoning_cue(text) == reasoning_cue(without), (text, without)


@pytest.mark.parametrize(("text", "cue"), WHY_ABOUT_A_PERSON)
def test_a_why_about_a_person_keeps_the_cue_when_it_names_a_technical_thing_or_asks_to_explain(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


def test_a_why_about_a_person_looks_for_a_technical_thing_in_its_own_line_only() -> None:
    assert reasoning_cue("why did he ignore me\nsegfault in malloc") == ""
    assert reasoning_cue("why did he ignore me " + "x " * 200 + "segfault") == ""
    assert reasoning_cue("他为什么不理我" * 100_000) == ""
    assert reasoning_cue("why did he " * 100_000 + "get a segfault") == "explanation"


# A why told as a joke or riddle is chat, as a laughing one is: the road-crossing frame (any
# creature, past tense, nothing after), a framing word before it (a joke:, 讲个笑话, なぞなぞ) or its
# punchline given after it (Because …, 因为…。). A real why that borrows a word of the frame,
# asks again after the answer or gives technical context keeps the cue. Each chat row had the
# cue before.
JOKE_OR_RIDDLE: tuple[tuple[str, str], ...] = (
    ("Why did the chicken cross the road?", ""),
    ("why did the duck cross the road", ""),
    ("Why did the old turkey cross the street?", ""),
    ("Here's a riddle: why did the scarecrow win an award?", ""),
    ("Tell you a joke. Why don't skeletons fight each other?", ""),
    ("Why don't scientists trust atoms? Because they make up everything.", ""),
    ("为什么小鸡要过马路？", ""),
    ("小鸡为什么要过马路", ""),
    ("讲个笑话：为什么海水是咸的？", ""),
    ("为什么数学书总是很忧郁？因为它有太多的问题。", ""),
    ("なぜニワトリは道を渡ったの？", ""),
    ("どうしてニワトリは道路を渡ったのか", ""),
    ("なぞなぞ：なぜパンはいつも怒っているの？", ""),
    ("Why did the build cross the memory limit?", "explanation"),
    ("Why do people cross the road without looking?", "explanation"),
    ("Why did the chicken cross the road so slowly in the simulation log?", "explanation"),
    ("Why does the riddle solver return the wrong answer?", "explanation"),
    ("Why did the joke about the queen get him fired?", "explanation"),
    ("Why does the build fail? Because of the cache? I cleared it.", "explanation"),
    ("为什么行人总是闯红灯过马路？", "explanation"),
    ("为什么内存超过了限制？因为缓存吗？", "explanation"),
    ("为什么程序又崩溃了？因为我改了配置吗", "explanation"),
    ("Why does the build fail? Because of npm install.", "explanation"),
    ("なぜ落ちるの？アップデートしてから。", "explanation"),
    ("なぜメモリの上限を超えたの？", "explanation"),
    ("なぜ彼らは信号を無視して道路を渡るのか", "explanation"),
)


@pytest.mark.parametrize(("text", "cue"), JOKE_OR_RIDDLE)
def test_a_why_told_as_a_joke_or_riddle_is_chat_and_a_real_why_keeps_the_cue(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


# A capitalised Go, R or C is a programming language where a program goes (Go code, an R
# script, written in C, 用Go重写, C言語), and malloc or a timeout a program's: a why about a
# person naming one keeps the cue. "Go home", R&B, Plan C, vitamin C, a grade C and a person's
# timeout (got a timeout, in timeout) stay chat. Each "explanation" row was chat before.
WHY_ABOUT_A_PERSON_NAMING_A_LANGUAGE_OR_SYSTEM_WORD: tuple[tuple[str, str], ...] = (
    ("why does he keep his Go program running all night", "explanation"),
    ("Why did they rewrite the whole service in Go?", "explanation"),
    ("why does she still use R for her analysis", "explanation"),
    ("Why did he write the driver in C?", "explanation"),
    ("why does she run an R script every morning", "explanation"),
    ("why did he call malloc twice", "explanation"),
    ("why do they keep hitting timeouts", "explanation"),
    ("why did he get a connection timeout", "explanation"),
    ("why did she set the timeout to 30 seconds", "explanation"),
    ("他为什么用Go重写了后端", "explanation"),
    ("她为什么学C语言", "explanation"),
    ("彼はなぜGoで書いたの？", "explanation"),
    ("彼女はなぜR言語を使うの？", "explanation"),
    ("Why did he Go home early?", ""),
    ("Why does she love R&B so much?", ""),
    ("Why did they choose Plan C?", ""),
    ("why did he get a C in maths", ""),
    ("Why does he take vitamin C every day?", ""),
    ("Why did he write the song in C?", ""),
    ("why did he get a timeout in the game", ""),
    ("why was she put in timeout", ""),
    ("他为什么喜欢R&B", ""),
    ("彼はなぜプランCを選んだの？", ""),
)


@pytest.mark.parametrize(("text", "cue"), WHY_ABOUT_A_PERSON_NAMING_A_LANGUAGE_OR_SYSTEM_WORD)
def test_a_why_about_a_person_naming_a_language_in_context_or_a_systems_word_keeps_the_cue(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


def test_a_long_run_of_riddles_is_read_to_the_end_and_a_real_why_after_it_keeps_the_cue() -> None:
    # each why's joke look is bounded to its own line: a run costs linear time and hides nothing
    assert reasoning_cue("Why did the chicken cross the road?\n" * 20_000) == ""
    assert reasoning_cue("为什么小鸡要过马路？\n" * 20_000) == ""
    assert reasoning_cue("Why did the chicken cross the road?\n" * 20_000
                         + "Why did the build cross the memory limit?") == "explanation"


# A real why dressed near a joke keeps the cue: a "Because …" that tells the speaker's own
# context (I, my, 我), a joke denied before the why ("No joke:", "Not a joke -", 不是笑话,
# なぞなぞじゃない), and an announced joke whose line names a technical thing. Each had no cue
# before (sent to the fast model as a joke); the JOKE_OR_RIDDLE rows keep their answers.
REAL_WHY_NEAR_A_JOKE: tuple[tuple[str, str], ...] = (
    ("Why does my app crash on startup? Because I changed the config yesterday.", "explanation"),
    ("Why does the page hang? Because we added an index. Please help me fix it.", "explanation"),
    ("为什么我的服务启动失败？因为我改了配置文件。", "explanation"),
    ("为什么服务启动失败？因为我们昨天升级了。", "explanation"),
    # a thing pointed at (this, 这个, この) is the speaker's too: a joke's subject is no one's
    ("为什么这个进程要过这个检查？因为它没有权限。", "explanation"),
    ("Why does this page return 500? Because the server is down.", "explanation"),
    ("なぜこのテストは落ちるの？答え：タイムアウト", "explanation"),
    ("No joke: why does my laptop overheat every time I open a browser?", "explanation"),
    ("Not a joke - why does the build take 40 minutes?", "explanation"),
    ("这不是笑话：为什么服务器每天晚上都会重启？", "explanation"),
    ("なぞなぞじゃないけど、なぜサーバーは毎晩再起動するの？", "explanation"),
    ("Here's a riddle: why does the Python loop never end?", "explanation"),
    ("讲个笑话：为什么我的代码总是报错？", "explanation"),
    ("Why did the scarecrow win an award? Because he was outstanding in his field.", ""),
    ("为什么小鸡要过马路？因为它想去对面。", ""),
    ("Here's a joke: why did the bicycle fall over?", ""),
)


@pytest.mark.parametrize(("text", "cue"), REAL_WHY_NEAR_A_JOKE)
def test_a_real_why_beside_a_because_of_its_own_a_denied_joke_or_a_technical_thing_keeps_the_cue(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


def test_a_long_run_of_answered_whys_lower_cases_the_text_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # each answered why looked for a technical thing in its punchline with a fresh
    # ``text.lower()`` of the whole text: n whys cost n times the text (780 KB took 23 s)
    from hermes_core.agent.routing import reasoning

    folds: list[str] = []
    real = reasoning.technical_starts

    def recording(text: str, folded: str, *args: object, **kwargs: object) -> list[int]:
        folds.append(folded)
        return real(text, folded, *args, **kwargs)   # type: ignore[arg-type]

    monkeypatch.setattr(reasoning, "technical_starts", recording)
    assert reasoning_cue("Why is the sky blue? Because of light.\n" * 200) == ""
    assert len(folds) == 200
    assert all(f is folds[0] for f in folds)


# An answer that names a part of a running system (a cache, a config, CI, a build, a deploy, a
# database; 缓存, 配置, 部署; キャッシュ, デプロイ) explains a real failure, not a joke: its why
# keeps the cue. Jokes stay jokes, the road-crossing riddle with its answer told on its line too.
ANSWER_NAMING_A_SYSTEM_PART: tuple[tuple[str, str], ...] = (
    ("Why does the build fail? Because the cache is stale.", "explanation"),
    ("Why does the build fail? Because the config is wrong.", "explanation"),
    ("Why does the release fail? Because CI uses an old image.", "explanation"),
    ("Why is the page slow? Because the database has no index.", "explanation"),
    ("Why did the upload stop working? Because the deploy rolled back.", "explanation"),
    ("Why do the tests pass locally? Because the dependencies differ.", "explanation"),
    ("为什么构建失败？因为缓存过期了。", "explanation"),
    ("为什么上线失败？因为配置写错了。", "explanation"),
    ("なぜ表示が古いの？答え：キャッシュが残っている", "explanation"),
    ("Why did the chicken cross the road? To get to the other side.", ""),
    ("Why did the chicken cross the road?  To get to the other side!", ""),
    ("なぜニワトリは道を渡ったの？向こう側に行くため。", ""),
    ("Why don't scientists trust atoms? Because they make up everything.", ""),
    ("Why did the cookie go to the doctor? Because it felt crummy.", ""),
    ("Why was the math book sad? Because it had too many problems.", ""),
    ("Why did the computer go to the doctor? Because it had a virus.", ""),
    ("为什么小鸡要过马路？因为它想去对面。", ""),
    # a question after the frame is asked still
    ("Why did the chicken cross the road? Was it chased?", "explanation"),
)


@pytest.mark.parametrize(("text", "cue"), ANSWER_NAMING_A_SYSTEM_PART)
def test_an_answer_naming_a_system_part_is_an_explanation_and_a_joke_s_answer_stays_a_joke(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


# A riddle answered by its punchline whose question makes a part of a running system live a
# person's life (breaks up with, goes to therapy, is lonely; 分手, 离婚; 別れた) is a joke whatever
# parts its line names; a real why about the same parts asks for the cause of a fault, and its
# answer may name no part at all ("Because the key changed."): reading parts in the answer only
# sent 8 of 22 such questions fast (decision 214), so the parts still count without the life.
PERSONIFIED_SYSTEM_PART: tuple[tuple[str, str], ...] = (
    ("Why did the database break up with the cache? Because it had too many issues.", ""),
    ("Why did the cache go to therapy? Because it had unresolved issues.", ""),
    ("Why was the disk so tired? Because it was full.", ""),
    ("Why was the database lonely? Because it had no relations.", ""),
    ("Why did the firewall break up with the router? Because it kept blocking its calls.", ""),
    ("Why did the certificate break up with the server? Because it felt expired.", ""),
    ("Why did the developer go broke? Because he used up all his cache.", ""),
    ("Why did the database administrator leave his wife? Because she had one-to-many "
     "relationships.", ""),
    ("Why was the cache jealous of the database? Because it was always second.", ""),
    ("Why did the config get divorced? Because it had irreconcilable differences.", ""),
    ("Why did the disk go to the doctor? Because it had a bad sector.", ""),
    ("为什么数据库和缓存分手了？因为问题太多了。", ""),
    ("为什么缓存很孤独？因为没人访问它。", ""),
    ("为什么磁盘去看医生？因为它有坏道。", ""),
    ("なぜデータベースはキャッシュと別れたの？答え：問題が多すぎたから", ""),
    ("なぜディスクは寂しいの？答え：空っぽだから", ""),
    ("Why is the cache slow? Because the disk is full.", "explanation"),
    ("Why is the database slow? Because the query scans every row.", "explanation"),
    ("Why does the cache miss? Because the key changed.", "explanation"),
    ("Why did the deploy fail? Because the image tag was wrong.", "explanation"),
    ("Why is the disk full? Because the logs are never rotated.", "explanation"),
    ("Why is the database locked? Because a migration is still running.", "explanation"),
    ("Why did the database go down? Because the disk filled up.", "explanation"),
    ("Why does the cache feel slow? Because the disk is nearly full.", "explanation"),
    ("Why did the deploy date slip? Because the config review took a week.", "explanation"),
    ("为什么数据库很慢？因为没有索引。", "explanation"),
    ("为什么缓存失效了？因为配置改了。", "explanation"),
    ("なぜキャッシュが効かないの？答え：キーが毎回変わる", "explanation"),
    ("Why did the database break up with the cache? It had too many issues.", "explanation"),
)


# A real fault's why whose question holds a life word in a program's sense (a database dump,
# break up a query, the sad path) or as a modifier (a hospital's database, 约会App, 结婚登记系统,
# アップデート, 病院の, 結婚式場): the life is no subject's, the fault is asked (decision 214,
# After review). Each was a joke, sent fast, after 214.
REAL_FAULT_NAMING_A_LIFE_WORD: tuple[tuple[str, str], ...] = (
    ("Why did the database dump fail? Because the disk was full.", "explanation"),
    ("Why does the database dump take an hour? Because the disk is slow.", "explanation"),
    ("Why did the database dump stop? Because the config limits its size.", "explanation"),
    ("Why does the cache dump its keys? Because the config sets a max memory.", "explanation"),
    ("Why does the database break up the query into batches? Because the config sets a batch "
     "size.", "explanation"),
    ("Why does the cache break up large values? Because the config sets a max item size.",
     "explanation"),
    ("Why did the deploy break up the database into shards? Because the disk was full.",
     "explanation"),
    ("Why does the hospital database go down at night? Because the backup fills the disk.",
     "explanation"),
    ("Why is the sad path of the deploy failing? Because the config is missing.", "explanation"),
    ("为什么约会App的数据库很慢？因为没有索引。", "explanation"),
    ("为什么结婚登记系统的数据库挂了？因为磁盘满了。", "explanation"),
    ("なぜアップデートでキャッシュが壊れたの？答え：設定が変わったから", "explanation"),
    ("なぜアップデート後にデータベースが遅いの？答え：キャッシュが消えたから", "explanation"),
    ("なぜ病院のデータベースが落ちたの？答え：ディスクがいっぱいだから", "explanation"),
    ("なぜ結婚式場の予約サイトのキャッシュが古いの？答え：設定ミス", "explanation"),
    ("なぜパーティーの予約でデータベースが落ちたの？答え：アクセス集中", "explanation"),
)


@pytest.mark.parametrize(("text", "cue"), REAL_FAULT_NAMING_A_LIFE_WORD)
def test_a_fault_s_why_holding_a_life_word_in_a_program_s_sense_is_asked(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


@pytest.mark.parametrize(("text", "cue"), PERSONIFIED_SYSTEM_PART)
def test_a_riddle_giving_a_system_part_a_person_s_life_is_a_joke_and_a_fault_s_why_is_asked(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


# Words a person's day shares with a program's (超时, タイムアウト, API, CPU, server, heap,
# thread) name a program's in context: a request's timeout (请求超时, タイムアウトした), a CPU's
# load, a thread pool, a heap overflow, 服务器 and 线程 (a waiter is 服务员, a sewing thread 线, a
# forum's 帖子). Alone or in a person's sense they leave a why about a person chat: going over
# time (超时了), a coach's timeout (タイムアウトを取った), a CPU bought, a heap of laundry, a forum
# thread, a beer server (ビールサーバー), Asian Pacific Islander students (API students).
WHY_ABOUT_A_PERSON_NAMING_A_SHARED_WORD: tuple[tuple[str, str], ...] = (
    ("他为什么一直请求超时？", "explanation"),
    ("她为什么连接超时了", "explanation"),
    ("彼はなぜタイムアウトしたの？", "explanation"),
    ("彼はなぜ接続タイムアウトになったの？", "explanation"),
    ("why does she keep hitting the API rate limit", "explanation"),
    ("why did he call the API twice", "explanation"),
    ("彼はなぜAPIを叩いたの？", "explanation"),
    ("他为什么一直调API", "explanation"),
    ("why is he at 100% CPU usage all day", "explanation"),
    ("他为什么CPU占用这么高", "explanation"),
    ("彼女はなぜCPU使用率が高いの？", "explanation"),
    ("why did his server crash", "explanation"),
    ("why did he restart the web server", "explanation"),
    ("他为什么服务器宕机了", "explanation"),
    ("彼はなぜサーバーを再起動したの？", "explanation"),
    ("why did he get a heap overflow", "explanation"),
    ("why does he use a thread pool", "explanation"),
    ("他为什么要开这么多线程", "explanation"),
    ("彼はなぜマルチスレッドにしたの？", "explanation"),
    ("他为什么超时了？", ""),
    ("她为什么考试超时", ""),
    ("彼はなぜタイムアウトを取ったの？", ""),
    ("why did he buy a new CPU", ""),
    ("why did she join the API students club", ""),
    ("why did she leave the heap of laundry", ""),
    ("why did he start a forum thread", ""),
    ("why did she buy more thread", ""),
    ("彼はなぜビールサーバーを買ったの？", ""),
    ("why is he such a slow server", ""),
    # decision 214: a status number beside a system part, an acronym glued to CJK, a game's
    # timeout, the bees' genus
    ("why is she seeing a 502 from the server", "explanation"),
    ("why does he keep getting 504 from the gateway", "explanation"),
    ("他为什么RPC超时", "explanation"),
    ("他为什么一直报502", "explanation"),
    ("彼はなぜDBタイムアウトになったの？", "explanation"),
    ("彼女はなぜタイムアウト中に泣いたの", ""),
    ("彼はなぜタイムアウト明けに交代したの？", ""),
    ("他为什么KTV超时", ""),
    ("why did he get a $500 tip from the server", ""),
    ("why does he keep Apis mellifera", ""),
)


@pytest.mark.parametrize(("text", "cue"), WHY_ABOUT_A_PERSON_NAMING_A_SHARED_WORD)
def test_a_why_about_a_person_naming_a_word_shared_with_a_program_reads_it_by_context(
        text: str, cue: str) -> None:
    assert reasoning_cue(text) == cue, text


# A why whose subject is a noun is no why about a person, whatever the noun (decision 186): a
# waiter's server, a number afraid of another, a cat afraid of cucumbers keep the cue. A riddle
# with no frame, no announcement and no answer reads as a question; a list of joke subjects
# (numbers, animals) would send "why are cats afraid of cucumbers" fast too.
BARE_WHY_ABOUT_A_NOUN: tuple[str, ...] = (
    "Why was six afraid of seven?",
    "Why are cats afraid of cucumbers?",
    "Why is seven a prime number?",
    "why is the waiter's server slow",
    "why is his server slow",
    "为什么六害怕七？",
    "なぜ六は七が怖いの？",
)


@pytest.mark.parametrize("text", BARE_WHY_ABOUT_A_NOUN)
def test_a_bare_why_about_a_number_animal_or_noun_keeps_the_cue(text: str) -> None:
    assert reasoning_cue(text) == "explanation", text


# The road-crossing riddle answered on its line is a joke only while its answer names nothing
# technical (as an answered or announced why) and asks no second question in the line's window:
# a code identifier, a traceback, a URL, code with a bug in the answer is a real question's
# context, and a question past the frame's first 80 characters is a question still.
ROAD_CROSSING_ANSWERED_TECHNICALLY: tuple[str, ...] = (
    "Why did the robot cross the road? Its plan_route() returns None.",
    "Why did the robot cross the road? The path_planner never stops at the curb.",
    "Why did the delivery robot cross the road? We deployed it from https://example.com/x",
    "Why did the robot cross the road? Traceback (most recent call last): it crashed",
    "Why did the robot cross the road? The Python code has a bug in the stop check.",
    "Why did the self-driving car cross the road? The lane detection should have stopped it at"
    " the red light, what is wrong?",
    "为什么机器人过马路？它的代码有bug。",
    "なぜロボットは道を渡ったの？コードにバグがある。",
)


@pytest.mark.parametrize("text", ROAD_CROSSING_ANSWERED_TECHNICALLY)
def test_the_road_crossing_frame_answered_with_a_technical_thing_or_asked_again_is_a_question(
        text: str) -> None:
    assert reasoning_cue(text) == "explanation", text


def test_the_frame_s_first_letter_look_holds_every_letter_a_frame_can_start_with(
        first_letters: Callable[[str, int], set[str] | None]) -> None:
    from hermes_core.agent.routing import reasoning

    frame = first_letters(reasoning._JOKE_FRAME.pattern, reasoning._JOKE_FRAME.flags)
    assert frame is not None
    assert frame - reasoning._FRAME_OPENS == set()


# A disk, a certificate, a port, DNS or a firewall are parts of a running system as a cache is:
# an answer naming one explains a failure (磁盘, 端口, 证书; ディスク, 証明書, ポート).
ANSWER_NAMING_A_HOST_PART: tuple[str, ...] = (
    "Why does the log stop? Because the disk is full.",
    "Why does the site not load? Because the certificate expired.",
    "Why does the site not load? Because the SSL cert expired.",
    "Why does the app not start? Because the port is already in use.",
    "Why does the site not resolve? Because the DNS record is wrong.",
    "Why can't the app connect? Because the firewall blocks it.",
    "为什么服务起不来？因为端口被占用了。",
    "为什么网站打不开？因为证书过期了。",
    "为什么日志写不进去？因为磁盘满了。",
    "なぜ起動しないの？答え：ポートが使われている",
    "なぜ繋がらないの？答え：証明書が切れている",
    "なぜ書き込めないの？答え：ディスクがいっぱい",
)


@pytest.mark.parametrize("text", ANSWER_NAMING_A_HOST_PART)
def test_an_answer_naming_a_disk_certificate_port_dns_or_firewall_is_an_explanation(
        text: str) -> None:
    assert reasoning_cue(text) == "explanation", text
