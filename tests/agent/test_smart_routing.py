"""Tests of ``hermes_core/agent/smart_routing.py``.

The router's choice against the models' context windows: a rule, the classifier's label or the
default never sends a request to a model it does not fit when another configured model holds it.
The labelled table, code requests in plain words and the reason given. Routing by difficulty
(reasoning, explanations, chit-chat) is in ``test_smart_routing_difficulty.py``.
"""

from __future__ import annotations

import pytest

from hermes_core.agent.smart_routing import Router
from hermes_core.config import parse_yaml
from hermes_core.types import Message, Prompt
from tests.agent.conftest import TABLE_ROUTING, assert_routed, routed_by


@pytest.fixture
def router() -> Router:
    return routed_by(default_model="gpt-4o", fast_model="tiny-fast", code_model="gpt-4",
                     long_context_model="gpt-4.1", context_windows={"tiny-fast": 2000},
                     providers=[{"name": "openai",
                                 "models": ["gpt-4o", "tiny-fast", "gpt-4", "gpt-4.1"]}])


def code_request(lines: int) -> str:
    return "```python\n" + "x = compute_value(alpha, beta)  # one line\n" * lines + "```\nwhy slow?"


def test_a_long_code_request_passes_over_a_code_model_it_does_not_fit(router: Router) -> None:
    d = router.select(code_request(1500))          # ~18,000 tokens; gpt-4 holds 8,192
    assert d.features["prompt_tokens"] > 8192
    assert d.model == "gpt-4o"
    assert "code_model gpt-4 (8,192 tokens) is too small" in d.reason


def test_a_short_code_request_still_goes_to_the_code_model(router: Router) -> None:
    assert router.select(code_request(5)).model == "gpt-4"


def test_a_short_turn_behind_a_large_system_prompt_skips_a_small_fast_model(router: Router) -> None:
    prompt = Prompt(system="persona " * 3000, messages=(Message("user", "hi"),))
    d = router.select(prompt)
    assert d.features["token_estimate"] < 500 < 2000 < d.features["prompt_tokens"]
    assert d.model == "gpt-4o" and "fast_model tiny-fast (2,000 tokens) is too small" in d.reason


def test_a_default_model_too_small_gives_way_to_the_long_context_model() -> None:
    r = routed_by(default_model="gpt-4", long_context_model="gpt-4.1",
                  rules=[{"condition": "turn_count > 99", "model": "default_model"}])
    d = r.select("word " * 9000)        # ~12,000 tokens: over gpt-4's 8,192, under 50,000
    assert d.model == "gpt-4.1"
    assert "default_model gpt-4 (8,192 tokens) is too small" in d.reason


def test_a_model_of_unknown_window_is_trusted_to_fit() -> None:
    r = routed_by(default_model="gpt-4o", code_model="house-coder")
    assert r.select(code_request(1500)).model == "house-coder"


def test_a_requested_model_is_sent_whatever_its_window(router: Router) -> None:
    d = router.select(code_request(1500), requested_model="gpt-4")
    assert d.model == "gpt-4" and d.reason == "requested model"


def test_a_requested_model_no_provider_lists_says_what_is_sent_instead() -> None:
    r = routed_by(providers=[{"name": "openai", "priority": 1, "models": ["gpt-4o"]},
                             {"name": "anthropic", "priority": 2, "models": ["claude-haiku"]}])
    d = r.select("hi", requested_model="gpt-9-typo")
    assert d.model == "gpt-9-typo"
    assert d.reason == ("requested model; no provider lists gpt-9-typo: sent as openai/gpt-4o, "
                        "anthropic/claude-haiku")


def test_a_requested_model_a_provider_lists_keeps_the_plain_reason() -> None:
    r = routed_by(providers=[{"name": "openai", "models": ["gpt-4o", "o3"]}])
    assert r.select("hi", requested_model="o3").reason == "requested model"


def test_a_long_history_is_no_reason_to_leave_a_small_default() -> None:
    """The agent compacts the history to the window of the model chosen: only what it cannot
    compact (system, tools, context, the message) has to fit."""
    r = routed_by(default_model="gpt-4", long_context_model="gpt-4.1")
    history = tuple(Message("user" if i % 2 == 0 else "assistant", "word " * 1500)
                    for i in range(12))
    prompt = Prompt(system="s", messages=(*history, Message("user", "and now?")),
                    tokens={"system": 10, "tools": 0, "history": 24_000, "total": 24_100})
    assert r.select(prompt).model == "gpt-4"
    long_message = Prompt(system="s", messages=(Message("user", "word " * 9000),),
                          tokens={"system": 10, "tools": 0, "history": 0, "total": 12_010})
    assert r.select(long_message).model == "gpt-4.1"

# --------------------------------------------------------------------------- a labelled table

_TRACEBACK = ('Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
              "    x = 1 / 0\nZeroDivisionError: division by zero")
_DIFF = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a = 1\n+a = 2"
_ZH_SENTENCES = ("春天来了，公园里的花都开了，孩子们在草地上奔跑。",
                 "经济学家认为，利率的变化会影响居民的消费和储蓄。",
                 "这座古老的城市有着两千多年的历史，吸引了许多游客。",
                 "研究人员在实验中发现了一种新的蛋白质结构。")
_EN_SENTENCES = ("Spring has come and the flowers in the park are blooming. ",
                 "Economists think that changes in interest rates shape saving. ",
                 "This old city has a history of more than two thousand years. ")


def _document(sentences: tuple[str, ...], chars: int) -> str:
    out, i = [], 0
    while sum(map(len, out)) < chars:
        out.append(sentences[i % len(sentences)] + str(i))
        i += 1
    return "".join(out)[:chars]


# (request, the slot it must go to); English and Chinese (simplified, traditional) and Japanese
# requests of the same meaning stand side by side
LABELLED: tuple[tuple[str, str], ...] = (
    # asking for code to be written, fixed or explained is code, in every language
    ("Write a Python function that parses a CSV file", "code"),
    ("帮我写一个Python函数解析CSV", "code"),
    ("幫我寫一個Python函數解析CSV", "code"),
    ("CSVを解析するPython関数を書いてください", "code"),
    ("Fix the bug in my code", "code"),
    ("修复我代码里的bug", "code"),
    ("Implement quicksort in Rust", "code"),
    ("用Rust实现快速排序", "code"),
    ("Write a regex that matches an email address", "code"),
    ("写一个匹配邮箱地址的正则表达式", "code"),
    ("How do I reverse a list in Python?", "code"),
    ("在Python里怎么反转一个列表？", "code"),
    ("Refactor this function to be shorter", "code"),
    ("重构这个函数，让它短一点", "code"),
    ("Write unit tests for the parser module", "code"),
    ("给解析模块写单元测试", "code"),
    # pasted code with no fences around it
    (_TRACEBACK, "code"),
    ("这个报错是什么意思？\n" + _TRACEBACK, "code"),
    (_DIFF, "code"),
    ("Why does this return nothing? SELECT name FROM users WHERE age > 30 GROUP BY name;",
     "code"),
    ("为什么这条语句没有结果？SELECT name FROM users WHERE age > 30;", "code"),
    ('Why is this invalid? {"name": "a", "tags": [1, 2,]}', "code"),
    ('这个JSON哪里错了？{"name": "a", "tags": [1, 2,]}', "code"),
    ("def add(a, b):\n    return a + b\n\nwhy does add('1', 2) fail?", "code"),
    ("$ pip install numpy\nERROR: Could not find a version", "code"),
    ("run the tests please", "code"),
    ("帮我运行一下测试", "code"),
    # talking about code, programming or running is not code
    ("What is Python's history?", "fast"),
    ("Python的历史是什么？", "fast"),
    ("Python的歷史是什麼？", "fast"),
    ("Pythonの歴史を教えてください", "fast"),
    ("Who invented the JavaScript language?", "fast"),
    ("JavaScript语言是谁发明的？", "fast"),
    ("Select the best answer from the list below: apples or pears", "fast"),
    ("What is the code of conduct at work?", "fast"),
    ("这个程序运行很慢，怎么提高执行力", "fast"),
    ("这部电影的脚本写得很好", "fast"),
    ("Write a letter to my landlord about the broken heater", "fast"),
    ("给房东写一封信，说暖气坏了", "fast"),
    # short questions
    ("Answer in one sentence: what is 1+1?", "fast"),
    ("用一句话回答：1+1等于几", "fast"),
    ("用一句話回答：1+1等於幾", "fast"),
    ("一言で答えて：1+1は？", "fast"),
    ("What is the capital of France?", "fast"),
    ("法国的首都是哪里？", "fast"),
    # long documents: counted in tokens, not characters
    ("Summarise this document:\n" + _document(_ZH_SENTENCES, 150_000), "long_context"),
    ("请总结这篇文档：\n" + _document(_ZH_SENTENCES, 150_000), "long_context"),
    # 150,000 English characters are ~33,000 tokens: a long request, not a long-context one
    ("Summarise this document:\n" + _document(_EN_SENTENCES, 150_000), "default"),
    ("Summarise this document:\n" + _document(_EN_SENTENCES, 300_000), "long_context"),
    # neither short nor code
    ("Tell me about the causes of the First World War. " * 60, "default"),
    ("请详细讲讲第一次世界大战的起因。" * 120, "default"),
)


@pytest.mark.parametrize(("text", "slot"), LABELLED,
                         ids=[f"{i}-{slot}" for i, (_, slot) in enumerate(LABELLED)])
def test_the_labelled_requests_route_to_their_slot(text: str, slot: str) -> None:
    assert_routed(text, slot)


# Ordinary requests that use the words code requests use ("function", "class", "import", "run",
# "script", 写, 实现, 函数, 程序, テスト), an address, a URL, a formula, numbered steps, a table:
# written apart from the rules (in review, before they were changed) to measure their false
# positives: a fast request sent to the code model costs money. 25 of these 49 went to code before.
ORDINARY: tuple[str, ...] = (
    "What is the function of the liver?",
    "What's the function of a mitochondrion in a cell?",
    "Explain the function of the Federal Reserve",
    "Explain the class system in Victorian England",
    "Write a class schedule for my yoga studio",
    "What does import duty mean for a small business?",
    "How do I import photos from my iPhone to my Mac?",
    "Can you run through the main points of the meeting again?",
    "I want to run a marathon next year, how should I train?",
    "Write an essay about the history of computers",
    "Write a poem about programming languages",
    "Explain the rules of chess to me",
    "Email me at john.doe@example.com about the meeting",
    "Is https://example.com/path?a=1 a safe site?",
    "If f(x) = x^2 + 3x, what is f(2)?",
    "function f(x) = x^2 + 1, find its derivative",
    "function f(x) is continuous on [0, 1]; what does continuous mean?",
    "Recipe:\n1. Boil water\n2. Add pasta\n3. Cook 10 minutes\n4. Drain",
    "| Name | Age |\n|------|-----|\n| Ann  | 30  |\n| Bob  | 25  |\nWho is older?",
    "Explain the methods used in the Manhattan Project",
    "Review the methods section of my paper",
    "Write a script for a 2 minute wedding toast",
    "Write a program for the school concert",
    "Write tests for my 5th grade students about fractions",
    "Explain the program of the conference",
    "How do I send money abroad with SWIFT?",
    "How can I claim tax credits with R&D spending?",
    "How do I clean a ring with ruby stones?",
    "How do I make coffee with java beans?",
    "Generate test questions for my class",
    "帮我写一个SQL培训的通知",
    "写一篇关于人工智能算法的文章",
    "实现代码审查流程的制度化，写个方案",
    "写一篇关于春天的作文",
    "如何实现财务自由？",
    "我们公司怎么实现数字化转型？",
    "这个程序的流程是什么？报名需要哪些材料？",
    "帮我优化一下这段文案",
    "请解释一下这个函数的几何意义：y=x²",
    "写出函数f(x)=x^2的导数",
    "我的邮箱是 zhang.san@example.com，请回复",
    "解释一下什么是算法推荐对社会的影响",
    "写一个接口人变更的通知",
    "帮我写一个短视频脚本",
    "写一个直播带货的脚本",
    "這個程式的報名流程是什麼？",
    "プログラムの予定を作ってください",
    "テストの勉強の計画を作って",
)

# Requests for code without a language named or code pasted, kept as code by the same change
STILL_CODE: tuple[str, ...] = (
    "Write a function that returns the nth prime",
    "Write a script to rename all files in a folder",
    "Write a Python script that renames files",
    "Explain this function",
    "Debug this function",
    "Review my code",
    "Write a query that finds duplicate emails",
    "Fix the bug where login fails",
    "Write a test for this function",
    "写一个函数计算最大公约数",
    "帮我写个脚本批量重命名文件",
    "解释一下这段代码",
    "関数を書いてください",
    "このコードを修正して",
    "function add(a, b) {\n  return a + b\n}\nwhy do I get NaN?",
    "func Add(a int, b int) int {\n\treturn a + b\n}",
    "fn area(w: u32, h: u32) -> u32 {\n    w * h\n}",
    "def area(w, h) -> int:\n    return w * h",
    "How do I read a CSV in Python using pandas?",
    "How do I make a website with HTML?",
    "How do I print hello in Swift?",
    "How do I fit a linear model in R",
    "Fix my script",
    "帮我修改这段代码，让它跑得快一点",
    "Write a recursive function for fibonacci",
    "Write an async method for fetching pages",
    "Write tests for the parser",
    "Explain the compiler's error",
)


@pytest.mark.parametrize("text", ORDINARY)
def test_an_ordinary_request_that_uses_code_words_routes_fast(text: str) -> None:
    assert_routed(text, "fast")


@pytest.mark.parametrize("text", STILL_CODE)
def test_a_request_for_code_in_plain_words_routes_to_code(text: str) -> None:
    assert_routed(text, "code")


# --------------------------------------------------------------------------- Japanese

# Japanese requests route by the same features as the Chinese: code named or pointed at, a
# proof or derivation beside a sign of maths; thanks, the weather and a certificate stay fast.
JAPANESE: tuple[tuple[str, str], ...] = (
    ("コードを書いて", "code"),
    ("この関数を説明して", "code"),
    ("このコードを説明してください", "code"),
    ("このメソッドが何をしているか解説して", "code"),
    ("Pythonでリストを逆順にする方法は？", "code"),
    ("テストを実行して", "code"),
    ("√2が無理数であることを証明して", "default"),
    ("素数が無限に存在することを証明せよ", "default"),
    ("数学的帰納法で1+2+…+n=n(n+1)/2を証明して", "default"),
    ("漸化式a(n)=2a(n-1)+1の一般項を求めよ", "default"),
    ("方程式x²-2y²=1のすべての整数解を求めよ", "default"),
    ("一歩ずつ推論して：すべてのAはBで、すべてのBはCなら、すべてのAはCか？", "default"),
    ("マイクロサービスとモノリスのトレードオフを分析して", "default"),
    ("ありがとう", "fast"),
    ("今日の天気は", "fast"),
    ("こんにちは", "fast"),
    ("証明して", "fast"),
    ("在職証明書を発行してください", "fast"),
    ("フェルマーの最終定理を証明したのは誰？", "fast"),
    ("この関数電卓の使い方を説明して", "fast"),
    ("この関数のグラフの形を説明して：y=x²", "fast"),
    ("一歩ずつ卵のゆで方を教えて", "fast"),
    ("このパズルを解いて", "fast"),
    ("来週のテストの日程を教えて", "fast"),
    ("分散投資のメリットを教えて", "fast"),
)


@pytest.mark.parametrize(("text", "slot"), JAPANESE)
def test_a_japanese_request_routes_by_the_same_features_as_a_chinese_one(text: str,
                                                                       slot: str) -> None:
    assert_routed(text, slot)


# --------------------------------------------------------------------------- language names that are words

# Go, Rust, Swift, R, C, Ruby, Dart and Julia are also words and names: they name a language in a
# code context ("in Go" at a phrase's end, "Go code", 用Go写), else they are the word.
WORD_LANGUAGE_CODE: tuple[str, ...] = (
    "Implement binary search in Go",
    "Write a web server in Go",
    "用Go写一个HTTP服务器",
    "Why does this Go code panic?",
    "Write a Julia function that sums a vector",
    "Implement a linked list in C",
    "用C语言实现链表",
    "Write a Dart class for a user profile",
    "How do I parse JSON in Rust?",
    "How do I sort an array in Ruby?",
    "Why does this Swift code crash?",
    "How do I parse JSON with Rust?",
    "How do I read a CSV file in Julia?",
    "Port this function to C",
)
WORD_LANGUAGE_ORDINARY: tuple[str, ...] = (
    "Let's go to the store",
    "Go to the doctor if the pain persists",
    "Write a song in C",
    "How do I play a scale in C?",
    "How do I get rid of rust on my bike?",
    "Write a thank-you note to Julia",
    "Is Ruby a good name for a dog?",
    "How do I go to Shanghai in one day?",
    "What time does the Swift concert start?",
    "我想去Go超市买东西",
    # the bank network's code; Julia and Ruby are people, R a letter; a melody rewritten in C
    "What is the SWIFT code for HSBC UK?",
    "I need the Swift code for Barclays to receive a transfer",
    "Swift code for Bank of China Shanghai branch",
    "How do I get along with Julia?",
    "Write a blog post about my trip with Julia",
    "Write a toast for my wedding with Julia",
    "Write a list of baby names starting with R",
    "How do I pronounce words with R?",
    "Rewrite this chord progression in C",
    "Can you rewrite this melody in C?",
)


@pytest.mark.parametrize("text", WORD_LANGUAGE_CODE)
def test_a_language_named_by_an_ordinary_word_counts_in_a_code_context(text: str) -> None:
    assert_routed(text, "code")


@pytest.mark.parametrize("text", WORD_LANGUAGE_ORDINARY)
def test_a_language_name_used_as_an_ordinary_word_stays_fast(text: str) -> None:
    assert_routed(text, "fast")


# --------------------------------------------------------------------------- 解释这个函数

# "this function" points at something: code unless the message shows it is school maths
EXPLAIN_FUNCTION: tuple[tuple[str, str], ...] = (
    ("解释这个函数", "code"),
    ("解释一下这个函数是做什么的", "code"),
    ("解释这个函数 parse_csv 做了什么", "code"),
    ("解释这个函数 getUserName() 的作用", "code"),
    ("請解釋這個函數的作用", "code"),
    ("解释这个函数 f(x)=x^2", "fast"),
    ("解释一下这个函数的单调性：y=x³", "fast"),
    ("请解释一下这个函数的几何意义：y=x²", "fast"),
)


@pytest.mark.parametrize(("text", "slot"), EXPLAIN_FUNCTION)
def test_explaining_this_function_is_code_unless_the_message_is_school_maths(
        text: str, slot: str) -> None:
    assert_routed(text, slot)


# --------------------------------------------------------------------------- the reason says why

@pytest.mark.parametrize(("text", "said"), [
    ("Write a Python function that parses a CSV file", "because asks_for_code"),
    ('Traceback (most recent call last):\n  File "a.py", line 1\nKeyError: 1', "because has_code"),
    ("run the tests please", "because requires_shell_execution"),
    ("hi", "because token_estimate=1"),
    ("Prove that the square root of 2 is irrational", "needs reasoning (proof)"),
])
def test_the_reason_names_the_feature_that_chose_the_model(text: str, said: str) -> None:
    d = routed_by(**TABLE_ROUTING).select(text)
    assert said in d.reason, d.reason


@pytest.mark.parametrize("rules", [
    "",                                                          # no fast model: default anyway
    "    fast_model: gpt-4o-mini\n    rules:\n      - {condition: has_url, model: fast_model}\n",
])
def test_the_default_says_needs_reasoning_only_when_a_rule_read_it(rules: str) -> None:
    # a proof lands on the default here because no rule matched at all, not for its reasoning
    routing = parse_yaml("llm:\n  routing:\n    default_model: gpt-4o\n" + rules).llm.routing
    d = Router(routing).select("Prove that there are infinitely many primes")
    assert d.features["needs_reasoning"] and d.reason == "default_model", d.reason


# --------------------------------------------------------------------------- the model's own tokenizer

_HINDI = "नमस्ते दुनिया, यह एक परीक्षण वाक्य है। "   # cl100k counts it ~3x o200k


def test_a_request_s_size_is_counted_in_the_tokenizer_of_the_model_it_would_go_to() -> None:
    """Size features were o200k counts for every model: gpt-4 reads Hindi in cl100k, three
    times as many tokens, so a request past the fast rule's 500 tokens for gpt-4 was "short"."""
    from hermes_core.tokens import count_tokens

    text = _HINDI * 15
    assert count_tokens(text) < 500 < count_tokens(text, "cl100k_base")
    r = routed_by(default_model="gpt-4", fast_model="gpt-4o-mini")
    d = r.select(text)
    assert d.features["token_estimate"] == count_tokens(text, "cl100k_base")
    assert d.model == "gpt-4"
    # a requested model's own family; a model of no known family counts in o200k
    assert r.select(text, requested_model="gpt-4o").features["token_estimate"] \
        == count_tokens(text)
    claude = routed_by(default_model="claude-sonnet-4")
    assert claude.select(text).features["token_estimate"] == count_tokens(text)


def test_a_rule_s_model_that_reads_the_request_as_too_large_in_its_own_tokenizer_is_skipped(
        ) -> None:
    from hermes_core.tokens import count_tokens

    text = _HINDI * 250
    assert count_tokens(text) < 8192 < count_tokens(text, "cl100k_base")
    r = routed_by(default_model="gpt-4o", fast_model="gpt-4",
                  rules=[{"condition": "turn_count < 1", "model": "fast_model"}])
    d = r.select(text)
    assert d.model == "gpt-4o", d.reason
    assert f"fast_model gpt-4 (8,192 tokens) is too small for " \
           f"{count_tokens(text, 'cl100k_base'):,} tokens" in d.reason


@pytest.mark.parametrize(("text", "slot"), [
    *((t, "default") for t in STILL_CODE[:6]), ("用Python写一个快速排序", "default"),
    ("```python\nprint(1)\n```\nrename this variable", "default"),
    *((t, "fast") for t in ORDINARY[:4]), ("hi, how are you?", "fast"),
])
def test_a_code_request_with_no_code_model_goes_to_the_default_not_the_fast_one(
        text: str, slot: str) -> None:
    """With no ``code_model`` the code rule is absent and "Write a Python script that renames
    files" went to ``fast_model``, the tier for chit-chat: code goes to the default model then,
    as a request needing reasoning does (decision 145), and the reason says why."""
    routing = {k: v for k, v in TABLE_ROUTING.items() if k != "code_model"}
    d = routed_by(**routing).select(text)
    assert d.model == routing[f"{slot}_model"], (d.reason, d.features)
    if slot == "default":
        assert d.reason == "default_model: a code request, and no code_model is configured"
