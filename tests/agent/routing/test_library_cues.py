"""Tests of ``hermes_core/agent/routing/library_cues.py``: a library named with one of its own
methods or parts, or a module's member written as code, is a request about code."""

from __future__ import annotations

from collections.abc import Callable

import pytest

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


@pytest.mark.parametrize("text", LIBRARY_REQUESTS)
def test_a_library_named_with_its_own_method_or_part_goes_to_the_code_model(
        text: str, tier_of: Callable[..., str]) -> None:
    assert extract_features(text).asks_for_code, text
    assert tier_of(text) == "code"
    assert tier_of(text, code_model=False) == "default"


@pytest.mark.parametrize(("text", "slot"), LIBRARY_TWINS)
def test_the_same_name_as_an_animal_a_word_or_a_topic_keeps_its_slot(
        text: str, slot: str, tier_of: Callable[..., str]) -> None:
    features = extract_features(text)
    assert not features.asks_for_code and not features.has_code, text
    assert tier_of(text) == slot


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
])
def test_a_long_run_of_library_names_is_read_in_linear_time(
        unit: str, cpu_of: CpuOf) -> None:
    from hermes_core.agent.routing.library_cues import names_a_library_call

    small, large = (cpu_of(names_a_library_call, unit, n) for n in (20_000, 80_000))
    assert large < 8 * small + 0.05, (small, large)
