"""Tests of ``hermes_core/agent/routing/library_cues.py``: a library named with one of its own
methods or parts, or a module's member written as code, is a request about code."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hermes_core.agent.routing.library_cues import names_a_library_call
from hermes_core.agent.routing.rules import extract_features

from .conftest import CpuOf

# A library followed (or, at the end of the line, preceded) by its own method or part, a library
# made with or used ("Write an Express.js server", "Use axios to post JSON"), and a module's
# member written as code ("requests.get", "np.argsort"). Each is a question about code: the code
# model when one is configured, else the default.
LIBRARY_REQUESTS: tuple[str, ...] = (
    "pandas groupby two columns", "pandas merge on index", "pandas pivot table with two columns",
    "pandas read_csv skip the first row", "df groupby agg pandas", "pandas apply lambda to a column",
    "numpy argsort descending",
    "numpy reshape array", "numpy broadcasting two arrays", "lodash debounce example",
    "lodash groupBy nested", "axios interceptors retry", "axios post JSON body",
    "Use axios to post JSON", "set up an Express.js middleware for auth",
    "Express.js error handling middleware", "Write an Express.js server",
    "SQLAlchemy lazy loading question", "SQLAlchemy session rollback",
    "Write a SQLAlchemy model for users", "sklearn train test split",
    "scikit-learn GridSearchCV example", "matplotlib subplots shared x axis",
    "seaborn heatmap annotations", "torch DataLoader shuffle", "tensorflow early stopping",
    "jquery ajax post", "Django queryset filter by date", "FastAPI dependency injection",
    "boto3 presigned url", "tokio spawn blocking", "serde rename field",
    "opencv resize image keep aspect ratio", "BeautifulSoup find_all by class",
    "requests.get with headers", "np.argsort in reverse", "how does df.groupby work",
    "console.log prints undefined", "JSON.parse throws on an empty string",
    # decided: a question whether a framework has a part for a job is a software question
    "Is there a Django app for a blog?",
)

# Their twins: the animal, the snake, the torch, the word "express", the film, a library named
# with no method (a question about it, not about its code), and a dotted word that is no module.
LIBRARY_TWINS: tuple[tuple[str, str], ...] = (
    ("pandas eat bamboo all day", "fast"), ("pandas and their cubs in the wild", "fast"),
    ("How many pandas are left in the wild?", "fast"), ("pandas sleep in the trees", "fast"),
    ("Python the snake escaped from the zoo", "fast"), ("How long does a python snake live?", "fast"),
    ("What do pythons eat?", "fast"), ("Write a poem about a python in the jungle", "fast"),
    ("Draw a ball python", "fast"), ("Feed the python a mouse", "fast"),
    ("Shine the torch on the path", "fast"), ("the torch relay passed our street", "fast"),
    ("Express my thanks to the team", "fast"), ("Express shipping to Spain", "fast"),
    ("Is there a Django film on tonight?", "fast"), ("Django Reinhardt's guitar style", "fast"),
    ("What is numpy?", "fast"), ("Is lodash still popular?", "fast"),
    ("axios is a nice name for a cat", "fast"), ("Who maintains SQLAlchemy?", "fast"),
    ("Visit google.com for the rules", "fast"), ("Where is my document.pdf?", "fast"),
    ("Email me at sam.smith@example.com about the trip", "fast"),
)


# Review s54rC. A library's name written in Latin letters among Chinese or Japanese ones ("用"
# and "で" are word characters to ``\w``, so the name's edges were never found): went to the
# fast model.
CJK_LIBRARY_REQUESTS: tuple[str, ...] = (
    "用pandas怎么分组", "pandasで集計したい", "pandas的groupby怎么用", "pandasでgroupbyする方法",
    "怎么用pandas合并两个表", "numpy的reshape是什么意思", "用np.argsort怎么降序",
    "用requests.get加headers", "torchでDataLoaderを使う方法",
)
# Their neighbours: the library only named (a topic, as "What is numpy?"), and the animal in
# its own script.
CJK_LIBRARY_TOPICS: tuple[tuple[str, str], ...] = (
    ("pandas是什么", "fast"), ("我喜欢React", "fast"), ("熊猫怎么吃竹子", "fast"),
    ("Djangoは人気がありますか", "fast"),
)


@pytest.mark.parametrize("text", LIBRARY_REQUESTS + CJK_LIBRARY_REQUESTS)
def test_a_library_named_with_its_own_method_or_part_goes_to_the_code_model(
        text: str, tier_of: Callable[..., str]) -> None:
    assert extract_features(text).asks_for_code, text
    assert tier_of(text) == "code"
    assert tier_of(text, code_model=False) == "default"


@pytest.mark.parametrize(("text", "slot"), LIBRARY_TWINS + CJK_LIBRARY_TOPICS)
def test_the_same_name_as_an_animal_a_word_or_a_topic_keeps_its_slot(
        text: str, slot: str, tier_of: Callable[..., str]) -> None:
    features = extract_features(text)
    assert not features.asks_for_code and not features.has_code, text
    assert tier_of(text) == slot


# Review s54rC. A sentence typed with no blank after its full stop, ending on a word that is
# also a module's alias or a JavaScript global ("math", "promise", "window", "document",
# "console", "object"): the next sentence's first word is no member. Each went to the code model.
FULL_STOP_WITHOUT_A_BLANK: tuple[str, ...] = (
    "I hate math.Why is it so hard?", "I broke a promise.What should I do now?",
    "Close the window.It is cold in here", "I signed the document.Then they left",
    "I need to buy a new console.Any advice?", "My husband hid the object.Help me find it",
)
# Their neighbours: a global's member written with its capital ("Math.PI", a class's name after
# a module), and the same words as code.
MEMBERS_WITH_A_CAPITAL: tuple[str, ...] = (
    "Math.PI is not exact in JavaScript", "Math.max of an empty list",
    "Promise.all rejects on the first error", "Object.keys order of numeric keys",
    "collections.Counter most common words", "tf.Variable vs tf.constant",
    "nn.Module forward not called", "Why is document.getElementById null?",
)


# Review s54rC. A name that is also an animal, a flame, a dish, a newsroom, a guitarist or a
# verb, with a part that is also an everyday word (pandas roll and melt hearts, a tiki torch
# has models, a soup is served at the table, Axios posts articles, Django Reinhardt had views):
# each went to the code model.
LIBRARY_NAMES_AS_THINGS: tuple[str, ...] = (
    "Watch the pandas rolling in the snow", "Baby pandas melt my heart",
    "I loved the pandas series on BBC", "a documentary series about pandas",
    "I wrote a column about pandas", "Giant pandas apply for nothing at the zoo",
    "Did the pandas merge into one group at the zoo?",
    "Which tiki torch model is best for the garden?",
    "Which blow torch device is best for creme brulee?",
    "Serve this beautiful soup at the table", "Did Axios post the article about the election?",
    "How do fish react to the hook?", "Django Reinhardt's views on jazz",
)


# Their neighbours: the library with a part no day says, or named first with its part, in a
# request about the same things (a zoo's data, a fishing app, an election's results).
LIBRARY_CALLS_ABOUT_THINGS: tuple[str, ...] = (
    "pandas groupby for our zoo's visitor data", "pandas merge zoo visitor tables",
    "React hooks for a fishing app", "axios post election results to the API",
    "Flask route for a coffee shop menu", "torch model for snow detection",
)


@pytest.mark.parametrize("text", FULL_STOP_WITHOUT_A_BLANK + LIBRARY_NAMES_AS_THINGS)
def test_a_prose_dot_or_a_library_s_name_as_a_thing_is_no_library_call(
        text: str, tier_of: Callable[..., str]) -> None:
    assert not names_a_library_call(text), text
    assert tier_of(text) != "code"


@pytest.mark.parametrize("text", MEMBERS_WITH_A_CAPITAL + LIBRARY_CALLS_ABOUT_THINGS)
def test_a_capitalised_member_or_a_library_call_about_the_same_things_is_code(
        text: str, tier_of: Callable[..., str]) -> None:
    assert names_a_library_call(text), text
    assert tier_of(text) == "code"


def test_each_library_s_parts_are_single_words_as_the_text_is_split_into_them() -> None:
    import re

    from hermes_core.agent.routing.library_cues import LIBRARY_PARTS

    for library, parts in LIBRARY_PARTS.items():
        assert parts, library
        assert [p for p in parts if not re.fullmatch(r"[a-z0-9_]+", p)] == [], library


# A library's name repeated (each is read with the words after it) costs, at 80,000 characters,
# about four times what 20,000 do: no request stalls a turn.
@pytest.mark.parametrize("unit", [
    "pandas ", "numpy numpy ", "pandas eat bamboo ", "np.", "np.x ", "df groupby pandas ",
    "sklearn train test ", "express.js ", "window.", "x.y", "a" * 30 + ".b ",
    "用pandas", "pandas的", "baby pandas rolling ", "Math.Why ", "column about pandas ",
    "the pandas series ", "window.then she ", "convert the pandas series to ", "the axios ",
])
def test_a_long_run_of_library_names_is_read_in_linear_time(
        unit: str, cpu_of: CpuOf) -> None:
    from hermes_core.agent.routing.library_cues import names_a_library_call

    small, large = (cpu_of(names_a_library_call, unit, n) for n in (20_000, 80_000))
    assert large < 8 * small + 0.05, (small, large)


# A name that is also a newsroom or an animal, its one part an everyday noun, in a sentence with
# no code verb or object ("the Axios response to the hurricane" is a newsroom's), and a global's
# name ending a sentence typed with no blank before a lower-case "then she ...": no library
# call. Each went to the code model.
NAMES_WITH_NO_CODE_VERB_OR_OBJECT: tuple[str, ...] = (
    "What was the Axios response to the hurricane?", "She watched the pandas series on Netflix",
    "She cleaned the window.then she slept", "I hate math.then I failed",
    "We broke the promise.then we apologised",
)
# Their neighbours: the same part with a code verb or object, named first with its part, a
# library's own type converted to data (with or without the animal's words near), and a
# global's real member.
NAMES_WITH_A_CODE_VERB_OR_OBJECT: tuple[str, ...] = (
    "What is the axios response object?", "axios response undefined",
    "Why is the axios response empty?", "How do I read the axios response?",
    "Convert a pandas series to a list", "turn the pandas series into a dict",
    "convert the pandas series of zoo visits to a list", "How does promise.then work?",
    "the promise.then callback never runs", "window.then is undefined",
)


@pytest.mark.parametrize("text", NAMES_WITH_NO_CODE_VERB_OR_OBJECT)
def test_a_library_s_name_with_no_code_verb_or_object_is_no_library_call(
        text: str, tier_of: Callable[..., str]) -> None:
    assert not extract_features(text).asks_for_code, text
    assert tier_of(text) != "code"


@pytest.mark.parametrize("text", NAMES_WITH_A_CODE_VERB_OR_OBJECT)
def test_a_library_s_part_with_a_code_verb_or_object_or_converted_is_code(
        text: str, tier_of: Callable[..., str]) -> None:
    assert names_a_library_call(text), text
    assert tier_of(text) == "code"


# Review s55rF. A name that is also a thing, with one everyday part the thing itself never has
# (a newsroom has no timeout, an animal no pivot, a guitarist no signals), in a question about
# the user's own code that names no code verb or object; and a name against a Chinese or
# Japanese letter (the animal is 熊猫). Each went to the code model on 499df94d and fast on
# fa811165: decision 266 dropped every everyday part wherever no code word was near.
THING_NAMES_WITH_A_PART_THE_THING_HAS_NOT: tuple[str, ...] = (
    "I'm stuck on a pandas merge on two columns", "what's the best way to do a pandas pivot",
    "The pandas pivot drops the totals", "my pandas series has duplicates",
    "Help with django signals vs overrides", "Can you explain django signals?",
    "Should I use django signals or override save?", "the django signals fire twice",
    "my django model field won't save", "Why does my django admin look unstyled?",
    "in my app the axios timeout does nothing", "I keep hitting the axios timeout",
    "Our axios retry logic fires twice", "Question about flask blueprint registration",
    "the flask blueprint 404s", "My React hooks run twice", "the torch model overfits",
    "Why is my torch training so slow?", "my beautiful soup find misses tags",
    "pandasで2つの表をmerge", "我的axios response拦截器一直重试", "我的torch model训练太慢",
)


@pytest.mark.parametrize("text", THING_NAMES_WITH_A_PART_THE_THING_HAS_NOT)
def test_a_thing_s_name_with_a_part_the_thing_never_has_is_a_library_call(
        text: str, tier_of: Callable[..., str]) -> None:
    assert names_a_library_call(text), text
    assert tier_of(text) == "code"
