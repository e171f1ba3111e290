"""Tests of ``hermes_core/agent/routing/joke_cues.py``: a joke, pun or riddle asked for about
programming is chat; the code, shell or library it is about is its topic, not a request. A
request for code that happens to print or tell a joke stays code."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hermes_core.agent.routing.joke_cues import without_joke_topics
from hermes_core.agent.routing.rules import extract_features

from .conftest import CpuOf

# A joke asked for whose topic (before the joke's word or after "about") names code, a shell, a
# library: each went to the code model.
JOKES_ABOUT_CODE: tuple[str, ...] = (
    "Make up a joke about a bash script", "Tell me a bash joke", "Write a regex joke",
    "Write a SQL joke", "Write a joke about pandas groupby", "Write a joke about JavaScript code",
    "Give me a pun about pandas dataframes", "Tell me a joke about a Django model",
    "Tell me a joke about the terminal",
    "讲一个关于bash脚本的笑话", "讲个pandas groupby的笑话", "讲一个关于终端的笑话",
    "コードについてのジョークを書いて", "関数についてのジョークを書いて",
    "Pythonのコードについてのジョークを書いて", "bashについてのジョークを教えて",
    "シェルスクリプトのジョークを書いて", "正規表現についてのなぞなぞを作って",
)

# Their neighbours that passed before and pass still: jokes about programming with no code
# request in them, in the three languages (the brief's own rows among them).
JOKES_ABOUT_PROGRAMMING: tuple[str, ...] = (
    "tell me a joke about recursion", "Tell me a programming joke", "Write a joke about code",
    "Give me a pun about regex", "Tell me a joke about git commands", "Write a joke about a segfault",
    "Write a limerick about a segfault", "Tell me a joke about quicksort", "Any jokes about SQL?",
    "Write a knock knock joke about Java", "Here's a joke: why do programmers prefer dark mode?",
    "写一个关于程序员的笑话", "讲一个关于递归的笑话", "写一个关于Python代码的笑话", "讲个关于bug的笑话",
    "给我讲个关于SQL查询的冷笑话", "来个关于JavaScript代码的段子",
    "プログラマーについてのジョークを教えて", "再帰についてのジョークを言って", "SQLのジョークを書いて",
)

# A request for code that is funny, or that asks for a joke beside code in another clause: code.
FUNNY_CODE_REQUESTS: tuple[str, ...] = (
    "write a Python function that prints a joke", "Write a Python script that tells a joke",
    "Write a program that prints a random pun", "Write a joke-telling bot in Python",
    "Write a program to tell a joke", "Write a function that tells a joke",
    "Write code for a joke generator",
    "Tell me a joke about recursion, then write a recursive function in Python",
    "Write a joke about code and then write a function to reverse a string",
    "写一个打印笑话的Python函数", "写一个Python函数，返回一个随机笑话", "用Python写一个笑话",
    "写一个快排，再讲个笑话", "ジョークを表示するPythonの関数を書いて", "Pythonでジョークを書いて",
)


@pytest.mark.parametrize("text", JOKES_ABOUT_CODE + JOKES_ABOUT_PROGRAMMING)
def test_a_joke_about_programming_is_chat(text: str, tier_of: Callable[..., str]) -> None:
    features = extract_features(text)
    assert not features.asks_for_code and not features.requires_shell_execution, text
    assert tier_of(text) == "fast"


@pytest.mark.parametrize("text", FUNNY_CODE_REQUESTS)
def test_a_request_for_code_that_tells_a_joke_is_code(
        text: str, tier_of: Callable[..., str]) -> None:
    assert extract_features(text).asks_for_code, text
    assert tier_of(text) == "code"
    assert tier_of(text, code_model=False) == "default"


# A why told as a joke and a why asked of programmers: not code. The bare why keeps the
# explanation cue (decision 207: no list of joke subjects tells it from a real why), so it goes
# to the default model, not the code one; announced, it is chat.
@pytest.mark.parametrize(("text", "slot"), [
    ("why do programmers prefer dark mode?", "default"),
    ("Why do programmers prefer dark mode?", "default"),
    ("Here's a joke: why do programmers prefer dark mode?", "fast"),
    ("讲个笑话：为什么程序员喜欢深色模式？", "fast"),
    ("なぞなぞ：なぜプログラマーはダークモードが好き？", "fast"),
])
def test_a_why_about_programmers_is_not_code(
        text: str, slot: str, tier_of: Callable[..., str]) -> None:
    assert not extract_features(text).asks_for_code, text
    assert tier_of(text) == slot


def test_the_topics_are_blanked_and_the_text_keeps_its_length() -> None:
    text = "Tell me a bash joke, then run ls in bash"
    blanked = without_joke_topics(text)
    assert len(blanked) == len(text)
    assert "bash joke" not in blanked and blanked.endswith("then run ls in bash")
    assert without_joke_topics("hi there") == "hi there"


@pytest.mark.parametrize("unit", [
    "tell me a joke about ", "a bash joke ", "joke ", "write a regex regex regex ",
    "笑话", "关于代码的", "についてのジョーク", "ジョーク", "tell me a ",
    "tell me a joke about x and a ", "write a python joke scraper ", "写个bash脚本输出笑话",
    "Pythonで面白いジョーク",
])
def test_a_long_run_of_joke_words_is_read_in_linear_time(unit: str, cpu_of: CpuOf) -> None:
    small, large = (cpu_of(without_joke_topics, unit, n) for n in (20_000, 80_000))
    assert large < 8 * small + 0.05, (small, large)


# Review s55rF. A request for code that names a joke, whose language or second request the joke
# look blanked as the joke's topic: a joke made into a program the list did not name (a scraper,
# a model, a query), a second request joined without a verb ("and a recursive function", "and
# how to", "while you write"), a Chinese script that prints jokes (bash脚本输出笑话) and a
# Japanese joke written with a language an adjective away (Pythonで面白いジョーク). Each went to
# the code model on 499df94d and fast on fa811165.
CODE_REQUESTS_THE_JOKE_LOOK_BLANKED: tuple[str, ...] = (
    "Write a Python joke scraper", "write a JavaScript meme scraper",
    "give me a Python joke scraper", "make a Django joke model", "write a SQL jokes query",
    "Write a joke about recursion and a recursive function in Python",
    "Write a joke about cats and a Python function that sorts a list",
    "Tell me a joke about bash and how to list files in bash",
    "Tell me a joke about Python while you write a parser in Python",
    "写个bash脚本输出笑话", "写个bash脚本随机输出一个笑话", "Pythonで面白いジョークを書いて",
)


@pytest.mark.parametrize("text", CODE_REQUESTS_THE_JOKE_LOOK_BLANKED)
def test_a_code_request_naming_a_joke_keeps_its_language_and_second_request(
        text: str, tier_of: Callable[..., str]) -> None:
    assert tier_of(text) == "code"
