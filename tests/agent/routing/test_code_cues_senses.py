"""Tests of ``hermes_core/agent/routing/code_cues.py`` on words with a program's sense and a
person's: a secret code, a stack-based plan, a handler; and on requests in a plain word order
(the language last with no "in", the Japanese verb first).

(``test_code_cues.py`` holds the module's first tables; these rows are apart to keep each file
under 800 lines.)"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hermes_core.agent.routing.rules import extract_features

from .conftest import CpuOf

# Each asks for code: the code model when one is configured, else the default.
PLAIN_CODE_REQUESTS: tuple[str, ...] = (
    # a program's kind made with a language: a handler, middleware, worker, plugin
    "Write a Go HTTP handler", "Write a Rust HTTP middleware", "Write a Python Lambda handler",
    "Build a Go worker that reads a queue", "Write a Java plugin for Jenkins",
    # a task on data, the language last with no "in"
    "sort a dict by value python", "reverse a string javascript",
    "remove duplicates from a list python", "sort a list of tuples by second element python",
    "read a json file java", "convert a string to a date kotlin", "python sort a dict by value",
    "javascript remove duplicates from an array",
    # the Japanese verb first, the thing made after it
    "実装してLRUキャッシュ", "実装してクイックソート", "書いて二分探索", "実装してスタック",
    # a stack-based program is code, as a stack is
    "Implement a stack-based virtual machine", "Implement a stack-based calculator in Python",
    # a code that is a program's stays one
    "Write code for a treasure hunt game in Python", "Write the code for a secret santa draw",
)

# Their twins: a code one keeps secret, types into a door or lives by; a stack or a queue in a
# plan's name; a task on a person's list; the Japanese verb first before an article.
PLAIN_TWINS: tuple[tuple[str, str], ...] = (
    ("Write a secret code for my kids' treasure hunt", "fast"),
    ("Write a secret code word for the party", "fast"), ("Create a code name for our project", "fast"),
    ("Generate a door code for the guests", "fast"), ("Write the alarm code on a sticky note", "fast"),
    ("Write a cheat code list for the game", "fast"), ("Explain the tax code to me", "fast"),
    ("Write a summary of the building code for decks", "fast"),
    ("Implement a stack-based filing system at work", "fast"),
    ("Implement a stack-based seating plan at the office", "fast"),
    ("Implement a queue-based system at the bakery", "fast"),
    ("Stack the chairs after the party", "fast"), ("Make a stack of books", "fast"),
    ("Find my python", "fast"), ("count the eggs my python laid", "fast"),
    ("read a story about a python", "fast"),
    ("sort the books by colour", "fast"),
    ("書いてクイックソートについての記事", "fast"), ("実装して新しい制度", "fast"),
)


@pytest.mark.parametrize("text", PLAIN_CODE_REQUESTS)
def test_a_plainly_worded_request_for_code_goes_to_the_code_model(
        text: str, tier_of: Callable[..., str]) -> None:
    assert extract_features(text).asks_for_code, text
    assert tier_of(text) == "code"
    assert tier_of(text, code_model=False) == "default"


@pytest.mark.parametrize(("text", "slot"), PLAIN_TWINS)
def test_a_secret_code_a_stack_based_plan_or_a_person_s_task_keeps_its_slot(
        text: str, slot: str, tier_of: Callable[..., str]) -> None:
    features = extract_features(text)
    assert not features.asks_for_code and not features.has_code, text
    assert tier_of(text) == slot


# Review s54rC. A code one lives by (an honour, ethics, moral, pirate or conduct code), a novel's
# title, a gift card's code and a treasure hunt's 秘密代码: each went to the code model.
CODES_ONE_LIVES_BY: tuple[str, ...] = (
    "Write an honor code for my class", "Write an honour code for our school",
    "Write an ethics code for our company", "Write a moral code for my D&D character",
    "Write a pirate code for the kids' party", "Write a conduct code for volunteers",
    "Write a Da Vinci Code style mystery", "Generate a gift card code for my customers",
    "给孩子们的寻宝游戏写一个秘密代码", "帮我写一个门禁代码的提示牌",
)
# Their twins: the same words beside a program's.
CODES_ONE_LIVES_BY_TWINS: tuple[str, ...] = (
    "Write a Python script to generate gift card codes",
    "Write code for an honor roll calculator in Python",
    "写一段Python代码生成秘密代码", "写一个生成礼品卡代码的函数",
)


@pytest.mark.parametrize("text", CODES_ONE_LIVES_BY)
def test_a_code_one_lives_by_or_a_treasure_hunt_s_secret_code_is_no_program(
        text: str, tier_of: Callable[..., str]) -> None:
    features = extract_features(text)
    assert not features.asks_for_code and not features.has_code, text
    assert tier_of(text) != "code"


@pytest.mark.parametrize("text", CODES_ONE_LIVES_BY_TWINS)
def test_the_same_codes_beside_a_program_s_words_are_code(
        text: str, tier_of: Callable[..., str]) -> None:
    assert extract_features(text).asks_for_code, text
    assert tier_of(text) == "code"


# A near miss of each new shape repeated: 80,000 characters cost about four times what 20,000
# do (each window is bounded), so no request stalls a turn.
@pytest.mark.parametrize("unit", [
    "sort a list ", ". sort a dict by ", ". sort a list python x ", ". python sort ",
    ". python sort a ", "implement a stack-based ", "implement a stack-based vm x ", "実装して",
    "実装してスタックについ", "secret code ", "a Go http ", "write a Go ",
])
def test_a_long_run_of_a_near_miss_of_a_plain_request_is_read_in_linear_time(
        unit: str, cpu_of: CpuOf) -> None:
    from hermes_core.agent.routing.code_cues import asks_for_code

    small, large = (cpu_of(asks_for_code, unit, n) for n in (20_000, 80_000))
    assert large < 8 * small + 0.05, (small, large)


# A language's name after "starting with", "beginning with", "ending with" is a word the list's
# items start or end with, not the language the list is made in: each went to the code model.
STARTING_WITH_A_NAME: tuple[str, ...] = (
    "Write a list of baby names starting with Python", "Write a list of names starting with Go",
    "Write a list of words that start with Python", "Write names beginning with Java",
    "Write a list of words ending with Java",
)
# Their neighbours: the same words where a program checks the start, the language the list is
# made in, and the same letters in Chinese and Japanese (fast before and after).
STARTING_WITH_NEIGHBOURS: tuple[tuple[str, str], ...] = (
    ("Write a Python function that checks if a string starts with Python", "code"),
    ("Write a list comprehension of names starting with A in Python", "code"),
    ("Give me baby names starting with R", "fast"), ("写一些以Python开头的宝宝名字", "fast"),
    ("Pythonで始まる赤ちゃんの名前を書いて", "fast"),
)


@pytest.mark.parametrize("text", STARTING_WITH_A_NAME)
def test_a_language_s_name_a_list_starts_with_is_no_language(
        text: str, tier_of: Callable[..., str]) -> None:
    assert not extract_features(text).asks_for_code, text
    assert tier_of(text) == "fast"


@pytest.mark.parametrize(("text", "slot"), STARTING_WITH_NEIGHBOURS)
def test_a_string_s_start_checked_in_code_stays_code(
        text: str, slot: str, tier_of: Callable[..., str]) -> None:
    assert tier_of(text) == slot


# Decided: a spreadsheet formula is not code. It is an expression typed into a cell, asked for
# and answered in a line, by people doing office work; the fast model writes it as well as the
# code model (decision 238 pinned 用Excel查询 fast). A macro or a script for the sheet is a
# program (VBA, Apps Script), and so is the same sum asked of SQL or pandas.
@pytest.mark.parametrize(("text", "slot"), [
    ("write an Excel formula to sum column B where A is 'x'", "fast"),
    ("VLOOKUP across two sheets", "fast"), ("How do I use VLOOKUP across two sheets?", "fast"),
    ("Write a Google Sheets formula to count the blanks", "fast"),
    ("写一个Excel公式，统计A列等于x的B列之和", "fast"), ("ExcelでVLOOKUPの式を書いて", "fast"),
    ("Write a VBA macro to sum column B where A is 'x'", "code"),
    ("Write a SQL query to sum column B where A is 'x'", "code"),
    ("用VBA写一个宏，统计A列等于x的B列之和", "code"),
])
def test_a_spreadsheet_formula_is_no_code_and_a_macro_is(
        text: str, slot: str, tier_of: Callable[..., str]) -> None:
    assert tier_of(text) == slot


# Everyday lines beside this file's and the library and joke cues' new rules, written after the
# fixes (jokes, riddles and puns about anything, a newsroom's or a team's response, lists of
# words starting with a name, a sentence typed with no blank after its full stop). On the base,
# three of them went to the code model: "The Axios response was fast and fair", "I hate
# math.then again, who doesn't?" and "I closed the window.then I went to bed".
BENIGN_PROSE: tuple[str, ...] = (
    'She told a joke about her boss and everyone laughed',
    'My son wrote a riddle about a snake',
    'Tell me a joke about pandas at the zoo',
    'Write a pun about the python that escaped from the zoo',
    'Any riddles about the ocean?',
    'What did the Axios newsletter say about the budget?',
    'The Axios response was fast and fair',
    'The pandas series on the BBC won an award',
    'How did the React team respond to the fire?',
    'Write a list of cities starting with San',
    'Write a list of songs starting with Java Jive',
    'Name ten words ending with Go',
    "I hate math.then again, who doesn't?",
    'I closed the window.then I went to bed',
    'Tell me a funny story about my cat',
    'Give me a pun about bread',
    'Write a limerick about a terminal at the airport',
    '讲个关于熊猫的笑话',
    '写一个关于猫的谜语',
    '给我讲个冷笑话',
    'ネコについてのジョークを教えて',
    'なぞなぞを出して',
    'Write a joke about a flask of tea',
    'The torch response team arrived',
)


@pytest.mark.parametrize("text", BENIGN_PROSE)
def test_an_everyday_line_beside_a_code_cue_s_words_is_no_code(
        text: str, tier_of: Callable[..., str]) -> None:
    features = extract_features(text)
    assert not features.asks_for_code and not features.requires_shell_execution, text
    assert tier_of(text) == "fast"


# Review s55rF (decision 266's Left). A web service built in Flask or Express, named by a bare
# "API", "server" or "backend" rather than "Flask API" or "REST API": each went to the fast
# model on 499df94d and fa811165. Their twins keep their slot: a flask of tea, express shipping.
WEB_SERVICES_BUILT_IN_A_FRAMEWORK: tuple[str, ...] = (
    "Build a joke API in Flask", "Build an API in Flask", "Write an API in Flask",
    "Create a todo API in Flask", "Build a joke API with Flask", "Build a joke API in Express",
    "Make a backend for my shop using Flask", "Set up a server with Express.js",
)
BUILT_WITH_A_FLASK_OR_EXPRESS_SHIPPING: tuple[str, ...] = (
    "Build a campfire and make tea with a flask", "Make a server tray with express shipping",
    "Build a website for my shop with express delivery",
)


@pytest.mark.parametrize("text", WEB_SERVICES_BUILT_IN_A_FRAMEWORK)
def test_a_web_service_built_in_flask_or_express_is_code(
        text: str, tier_of: Callable[..., str]) -> None:
    assert extract_features(text).asks_for_code, text
    assert tier_of(text) == "code"


@pytest.mark.parametrize("text", BUILT_WITH_A_FLASK_OR_EXPRESS_SHIPPING)
def test_a_thing_built_with_a_flask_or_express_shipping_is_no_code(
        text: str, tier_of: Callable[..., str]) -> None:
    assert not extract_features(text).asks_for_code, text
    assert tier_of(text) == "fast"
