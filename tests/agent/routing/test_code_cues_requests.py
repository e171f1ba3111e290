"""Tests of ``hermes_core/agent/routing/code_cues.py``: requests for code as people type them
(``asks_for_code``), in English, Chinese and Japanese, go to the code model or the default, never
the fast one; their twins that ask for no code keep their slot; a name read cased keeps its case.
Where a text names something technical, and what reading it costs, is in ``test_code_cues.py``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from hermes_core.agent.routing.rules import extract_features
from hermes_core.agent.smart_routing import Router
from hermes_core.config import parse_yaml

# Short requests for code as people type them, English and Chinese (simplified, some
# traditional): an algorithm or data structure by its name, a function, one-liner, regex, query,
# command, Dockerfile or test for something, a language named in either script, code converted
# between languages, code pointed at and worked on. Each asks for code: the code model when one
# is configured, else the default model, never the fast one. 56 of the first 70 went to the fast
# model before (decision 236's *Left*: 实现二分查找, 给我一个JS函数去重数组, 用SQL查询每个部门的
# 最高工资, "Write a bash one-liner to count lines", "Implement binary search").
CODE_REQUESTS: tuple[str, ...] = (
    # an algorithm or data structure asked for by its name
    "Implement binary search",
    "Implement quicksort",
    "Implement an LRU cache",
    "implement a trie with insert and search",
    "Implement Dijkstra's algorithm",
    "Write a binary search",
    "Write a merge sort",
    "Code a bubble sort",
    "Give me a quicksort implementation",
    "Write a recursive binary search",
    "Implement a min heap",
    "Implement FizzBuzz",
    "How do I implement a stack?",
    "How to reverse a linked list",
    "binary search in Python",
    "Reverse a linked list in Java",
    # review (stop 52): the twins of the rows above that are travel and prose stay code
    "Find the largest number in a list in Java", "Find the cheapest flight in a JSON list in Python",
    "写一个快排，再讲个笑话", "给我来个快排的代码",
    "Implement a priority queue in Python", "Implement a priority queue with a binary heap",
    # "program" as a verb of the task done in a language
    "Program a calculator in C", "Program a tic tac toe game in Python",
    "How do I read a file in Java?", "Rewrite this function in C",
    "Sort a dictionary by value in Python",
    "Reverse a string in JavaScript",
    "Implement merge sort in TypeScript",
    "Write me a quicksort in Go",
    "Code a snake game in Python",
    "java program to check palindrome",
    "python script to download a web page",
    "C++ program to find prime numbers",
    # a function, one-liner, regex, query, command, Dockerfile, test for something
    "Write a JS function to dedupe an array",
    "Write a bash one-liner to count lines",
    "bash one-liner to count lines in all .py files",
    "Write a PowerShell command to list installed programs",
    "one-liner in bash to count lines",
    "git command to undo the last commit",
    "awk command to print the second column",
    "Regex to match an email address",
    "regex for US phone numbers",
    "SQL query for the second highest salary",
    "Write a Dockerfile for a Node app",
    "Dockerfile for a Flask app",
    "Write a Makefile for a C project",
    "Write a cron expression for every Monday at 9am",
    "Write a GitHub Actions workflow that runs pytest",
    "unit tests for the date parser",
    "Write a Kotlin data class for a user",
    "Write a TS type for a deeply partial object",
    "Write a Go function that reverses a string",
    "Create a React component for a login form",
    "Write a REST API for a todo app",
    "Write a Flask app with login",
    # code converted between languages
    "Convert this function to TypeScript",
    "Translate this Java snippet to Kotlin",
    "convert this Python code to JS",
    "Port this script to PowerShell",
    # code pointed at: fixed, refactored, optimised
    "Write code that generates a QR code", "Generate the code for a login form",
    "write a code to get the current value of a Bitcoin",
    "Optimise this function",
    "Make this function faster",
    "Speed up this query",
    "Clean up this code",
    "Fix this SQL",
    "Refactor this class",
    # Chinese, simplified
    "实现二分查找",
    "实现快速排序",
    "写一个快速排序",
    "帮我写个冒泡排序",
    "来一个冒泡排序",
    "手写一个LRU缓存",
    "链表反转怎么写",
    "深度优先搜索怎么写",
    "帮我写一个爬虫",
    "爬虫怎么写",
    "实现一个单例模式",
    "请用Java写一个单例",
    "给我一个JS函数去重数组",
    "用SQL查询每个部门的最高工资",
    "用Python画一个爱心",
    "写一个Dockerfile部署Node应用",
    "帮我写个正则匹配手机号",
    "写个shell脚本备份目录",
    "把这段Python代码转成Java",
    "这个函数怎么优化",
    "Python实现快速排序",
    "用Go写一个并发爬虫",
    "给我一条SQL查出重复的邮箱",
    "快速排序的代码",
    "Kotlin怎么写单例",
    # Chinese, traditional
    "實現二分搜尋",
    "幫我寫一個快速排序",
    "給我一個JS函數去重陣列",
    "用SQL查詢每個部門的最高薪資",
    "用Python畫一個愛心",
    "幫我寫個正則表達式驗證email",
    # a data structure or algorithm worked on, or named beside a language or a judge
    "reverse linked list", "invert a binary tree", "detect a cycle in a linked list",
    "merge two sorted linked lists", "two sum leetcode python", "LeetCode 1 two sum",
    "longest common subsequence in Java", "Write a stack in C", "Implement a queue in Go",
    "build a min heap in C",
    # a language naming the thing made
    "Make a Python class for a bank account", "Write a Go HTTP server", "Build a Rust CLI",
    "Create a Java class for a linked list node", "Make an R script that plots sales",
    "Write a C program that reads a file",
    # a well-known library named with the task
    "read a CSV file with pandas", "How can I read a CSV file with pandas?",
    "Scrape a page with BeautifulSoup", "Plot a histogram with matplotlib",
    "Train a classifier with scikit-learn", "Fetch the users with axios",
    # review (s53rR): C++ and C# end a phrase as any language does (no word edge after + or #),
    # and C言語で is Cで
    "Write a stack in C++", "two sum in C++", "binary search in C#", "How do I read a file in C++?",
    "Sort a list in C++", "C言語でスタックを実装して", "C言語でクイックソートを書いて",
    "QRコードを生成するコードを書いて",
    # a framework's part with what it is for, as a Dockerfile for one is; a Japanese algorithm
    # or structure made (スタックを実装して, as "Implement a stack")
    "django model for a blog", "fastapi endpoint for file upload", "flask route to upload a file",
    "LRUキャッシュを実装して", "クイックソートを実装して", "スタックを実装して", "二分探索を書いて",
)

# Their twins, which are not requests for code and keep the slot the rules gave them before:
# chit-chat; a question about an algorithm or a language (a concept, not code: "what is" stays
# fast, "explain how" goes to the default model by the reasoning cue, as any explanation does);
# prose, plans, a career, maths and economics worded with the same verbs and names.
NOT_CODE: tuple[tuple[str, str], ...] = (
    # chit-chat
    ("hi there", "fast"),
    ("thanks, that helped a lot", "fast"),
    ("你好呀", "fast"),
    # about an algorithm or a language
    ("What is binary search?", "fast"),
    ("What is a trie?", "fast"),
    ("How does quicksort work?", "fast"),
    ("Explain how binary search works", "default"),
    ("Who invented quicksort?", "fast"),
    ("Is quicksort faster than merge sort?", "fast"),
    ("What does LRU stand for?", "fast"),
    ("What is a REST API?", "fast"),
    ("Recommend a book on algorithms", "fast"),
    ("What's the difference between Java and JavaScript?", "fast"),
    ("Who created the C++ language?", "fast"),
    ("SQL is hard to learn", "fast"),
    ("Is JavaScript worth learning in 2026?", "fast"),
    ("How long does it take to learn Kotlin?", "fast"),
    ("Binary search is how I find a word in a dictionary", "fast"),
    ("The linked list in Java is slow", "fast"),
    ("什么是二分查找？", "fast"),
    ("二分查找的原理是什么", "fast"),
    ("二分查找的实现原理", "fast"),
    ("快速排序的时间复杂度是多少", "fast"),
    ("快速排序是谁发明的", "fast"),
    ("链表是什么", "fast"),
    ("LRU是什么意思", "fast"),
    ("SQL好学吗", "fast"),
    ("JS和Java有什么区别", "fast"),
    ("我想学Python", "fast"),
    ("Python程序员工资高吗", "fast"),
    ("用SQL的公司多吗", "fast"),
    ("什麼是二分搜尋？", "fast"),
    ("我想學Python", "fast"),
    # prose, plans, careers and everyday tasks worded as code requests are
    ("Write a poem about the sea", "fast"),
    ("Write a haiku about Python snakes", "fast"),
    ("Write a fibonacci poem", "fast"),
    ("Write a linked list of my favourite songs", "fast"),
    ("Write a blog post about Python decorators", "fast"),
    ("Write an essay on binary search and its history", "fast"),
    ("Implement a new hiring policy", "fast"),
    ("How do we implement the new tax rules?", "fast"),
    ("Implement the plan by Friday", "fast"),
    ("Implement a queue system at the bakery", "fast"),
    ("Write a cover letter for a Java developer job", "fast"),
    ("Find a job in Java", "fast"),
    ("Get certified in SQL", "fast"),
    ("Take a class in Python", "fast"),
    ("Write a one-liner for my Instagram bio", "fast"),
    ("Give me a one-liner to open my speech", "fast"),
    ("Give me a one-liner joke", "fast"),
    ("Draft a query letter to a literary agent", "fast"),
    ("Convert 10 km to miles", "fast"),
    ("Convert 30 C to F", "fast"),
    ("Convert this recipe to metric", "fast"),
    ("Translate this paragraph to French", "fast"),
    ("Translate this letter into Spanish", "fast"),
    ("Fix my bike chain", "fast"),
    ("Optimise my morning routine", "fast"),
    ("Make this email shorter", "fast"),
    ("Make a quick sort of these receipts by date", "fast"),
    ("Sort these names alphabetically: Tom, Ann, Bob", "fast"),
    ("Reverse the order of these words: sun moon star", "fast"),
    ("How do I build a cache of emergency food?", "fast"),
    ("Write a program for the spring concert", "fast"),
    ("Improve this script for my YouTube video", "fast"),
    ("Make this class more fun for my students", "fast"),
    ("Speed up my commute", "fast"),
    ("Clean up my desk routine", "fast"),
    ("Regex for dummies: is it a good book?", "fast"),
    ("Download the American Express app", "fast"),
    ("Git is hard to learn", "fast"),
    # Chinese prose, plans, maths and economics
    ("实现梦想", "fast"),
    ("如何实现梦想", "fast"),
    ("实现共同富裕需要多久", "fast"),
    ("写一首关于春天的诗", "fast"),
    ("写一篇介绍快速排序的科普文章", "fast"),
    ("写一篇关于LRU的论文", "fast"),
    ("写一篇介绍爬虫类动物的作文", "fast"),
    ("用二分法求方程x^3-x-1=0的近似解", "fast"),
    ("经济学里的二分法是什么意思", "fast"),
    ("查询每个部门的预算", "fast"),
    ("用Excel查询每个部门的最高工资", "fast"),
    ("帮我查询快递到哪了", "fast"),
    ("给我一个减肥计划", "fast"),
    ("给我一个学Java的计划", "fast"),
    ("给我一个Python学习路线", "fast"),
    ("我要一个SQL课程", "fast"),
    ("帮我写一份Java工程师的简历", "fast"),
    ("写一个Java程序员的自我介绍", "fast"),
    ("反转人生的电影推荐", "fast"),
    ("快速排队有什么技巧", "fast"),
    ("快排队吧", "fast"),
    ("用C盘存东西", "fast"),
    ("把这句话翻译成英文", "fast"),
    ("用Python的人多吗", "fast"),
    ("實現夢想", "fast"),
    ("寫一首關於秋天的詩", "fast"),
    # review (stop 52): Java the island is travelled in, and a joke or a lesson plan about an
    # algorithm is prose, as a poem or an essay about one is
    ("Find a hostel in Java", "fast"),
    ("Find a cheap hotel in Java", "fast"),
    ("Find a beach in Java", "fast"),
    ("Check the flights in Java", "fast"),
    ("给我来个快排的段子", "fast"),
    ("写一个关于二分查找的笑话", "fast"),
    ("编写一份关于链表的教案", "fast"),
    ("写一份二叉树的讲义", "fast"),
    ("给我一个冒泡排序的口诀", "fast"),
    ("Download the photos I took in Java", "fast"),
    # a priority queue for patients is a plan, as a queue system at the bakery is
    ("Implement a new priority queue at the ER", "fast"),
    ("Implement a priority queue system for patients", "fast"),
    # a chorus, a verse or a solo in C is in a key; the way to a city in Java is travel
    ("Rewrite the chorus in C", "fast"),
    ("Rewrite the second verse in C", "fast"),
    ("How do I get from the airport to the city in Java?", "fast"),
    ("How can we find a cheap hotel in Java?", "fast"),
    # the everyday twins of a data structure worked on, a language naming a thing made, a
    # library named with a task, and a code one scans or redeems
    ("Write a story in C major", "fast"),
    ("Write a song in C", "fast"),
    ("Make a class schedule", "fast"),
    ("Make a Python class for beginners", "fast"),
    ("Create a Java class for my students", "fast"),
    ("Make a Go game for the kids", "fast"),
    ("read a book with pandas in it", "fast"),
    ("pandas at the zoo", "fast"),
    ("Draw a picture with pandas", "fast"),
    ("Take photos with pandas", "fast"),
    ("Go to the store", "fast"),
    ("reverse the list of guests", "fast"),
    ("sort the list of guests by surname", "fast"),
    ("stack the plates", "fast"),
    ("Make a stack of pancakes", "fast"),
    ("two sum homework: what is 3 plus 4?", "fast"),
    ("My son's two sum worksheet has 20 problems", "fast"),
    ("Is LeetCode worth it?", "fast"),
    ("Is LeetCode 75 enough?", "fast"),
    ("What is the two sum problem on LeetCode?", "fast"),
    ("Make a Python tool shed", "fast"),
    ("Write a Ruby app review", "fast"),
    ("Draw a panda with pandas", "fast"),
    ("Compare zinc with selenium", "fast"),
    ("How many leetcode problems should I solve?", "fast"),
    ("The linked list in Python is slow", "fast"),
    ("generate a QR code", "fast"),
    ("Generate a QR code for my wifi password", "fast"),
    ("Write the dress code for the wedding", "fast"),
    ("Generate a discount code for my customers", "fast"),
    ("Fix my zip code on the form", "fast"),
    # review (s53rR): a code one scans, redeems or dresses by in Japanese, and life's code
    ("QRコードを作って", "fast"), ("バーコードを作成して", "fast"), ("ドレスコードを書いて", "fast"),
    ("クーポンコードを作って", "fast"), ("招待コードを作成して", "fast"),
    ("Explain the genetic code to kids", "fast"),
    ("Django model for beginners", "fast"), ("Django film for a Friday night", "fast"),
    ("二分探索とは何ですか", "fast"), ("クイックソートについての記事を書いて", "fast"),
    ("スタックについての詩を書いて", "fast"), ("トラックがスタックしたことを書いて", "fast"),
    ("バーベキューの段取りを書いて", "fast"), ("キューに並ぶ", "fast"),
)

_ROUTING = {"default_model": "gpt-4o", "fast_model": "gpt-4o-mini", "code_model": "gpt-4.1"}


def _router(**routing: str) -> Router:
    return Router.from_settings(parse_yaml(json.dumps({"llm": {"routing": routing}})))


@pytest.fixture(scope="module")
def routers() -> tuple[Router, Router]:
    """The table's routing with a code model, and the same without one."""
    without = {k: v for k, v in _ROUTING.items() if k != "code_model"}
    return _router(**_ROUTING), _router(**without)


@pytest.mark.parametrize("text", CODE_REQUESTS)
def test_a_request_for_code_as_people_type_it_goes_to_the_code_model_or_the_default(
        text: str, routers: tuple[Router, Router]) -> None:
    with_code, without_code = routers
    assert extract_features(text).asks_for_code, text
    assert with_code.select(text).model == "gpt-4.1", with_code.select(text).reason
    assert without_code.select(text).model == "gpt-4o", without_code.select(text).reason


@pytest.mark.parametrize(("text", "slot"), NOT_CODE)
def test_its_twin_that_asks_for_no_code_keeps_its_slot(
        text: str, slot: str, routers: tuple[Router, Router]) -> None:
    with_code, _ = routers
    features = extract_features(text)
    assert not features.asks_for_code and not features.has_code, text
    d = with_code.select(text)
    assert d.model == _ROUTING[f"{slot}_model"], (d.reason, d.features)


def test_the_request_tables_are_large_enough_to_weigh_both_sides() -> None:
    assert len(CODE_REQUESTS) >= 60 and len(NOT_CODE) >= 60
    assert len(set(CODE_REQUESTS)) == len(CODE_REQUESTS)
    assert len({t for t, _ in NOT_CODE}) == len(NOT_CODE)


def test_the_chinese_request_look_holds_every_letter_its_branches_can_start_with(
        first_letters: Callable[[str, int], set[str] | None]) -> None:
    from hermes_core.agent.routing import code_cues as cc

    chinese = first_letters(cc._ZH_ASKS, re.IGNORECASE)
    assert chinese is not None
    assert chinese - set(cc.ZH_ASK_OPENS) == set()
    english = first_letters(cc._EN_ASKS, re.IGNORECASE)
    assert english is not None
    assert {c.lower() for c in english} - set("abcdefghijklmnopqrstuvwxyz") == set()


# The English requests are read on the lower-cased text, keeping the names read cased (Go, R,
# C, TS, SWIFT): a language so named is one, the same word in lower case is not; a text whose
# lower case is longer (a Turkish İ) is read as it is, to the same answers.
@pytest.mark.parametrize(("text", "asks"), [
    ("Write me a quicksort in Go", True), ("Sort a list in R", True),
    ("Implement a stack in C", True), ("Write a linked list in C#", True),
    ("C program to find prime numbers", True), ("Go binary search", True),
    ("TS function to deep merge two objects", True),
    ("go to the store and sort the list in go", False), ("Find a job in C#", False),
    ("İ. Reverse a linked list in Go", True), ("İstanbul: implement binary search", True),
    ("İstanbul: what is binary search?", False), ("İ. Find a job in Java", False),
])
def test_a_name_read_cased_keeps_its_case_and_a_longer_lower_case_reads_the_text(
        text: str, asks: bool) -> None:
    assert extract_features(text).asks_for_code is asks, text
