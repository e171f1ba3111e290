"""Tests of ``hermes_core/agent/routing/code_cues.py``: where a text names something technical."""

from __future__ import annotations

import pytest

from hermes_core.agent.routing.code_cues import technical_starts


def _named(text: str) -> list[str]:
    """The words at each place ``technical_starts`` finds, for a readable failure."""
    return [text[i:i + 12] for i in technical_starts(text, text.lower())]


# Go, R and C where a program goes, in English, Chinese and Japanese; malloc and a program's
# timeout. Each was found nowhere before (the lower-cased text holds no capitalised Go/R/C).
@pytest.mark.parametrize("text", [
    "his Go program runs all night",
    "they rewrote the service in Go.",
    "she still uses R for her analysis",
    "he wrote the driver in C",
    "an R script every morning",
    "an R package",
    "用Go重写了后端",
    "学C语言",
    "Goで書いた",
    "R言語を使う",
    "he called malloc twice",
    "they keep hitting timeouts",
    "a connection timeout",
    "set the timeout to 30 seconds",
])
def test_a_capitalised_language_in_context_or_a_systems_word_is_technical(text: str) -> None:
    assert _named(text), text


# The same letters as ordinary words: a verb, a music genre, a plan, a grade, a vitamin, a key,
# a person's timeout.
@pytest.mark.parametrize("text", [
    "He will Go home early",
    "She loves R&B",
    "They chose Plan C",
    "he got a C in maths",
    "vitamin C every day",
    "he wrote the song in C",
    "he got a timeout in the game",
    "she was put in timeout",
    "喜欢R&B",
    "プランCを選んだ",
])
def test_go_r_or_c_as_an_ordinary_word_and_a_person_s_timeout_are_not_technical(text: str) -> None:
    assert _named(text) == [], text
