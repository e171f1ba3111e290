"""A Chinese manner phrase after a negation: a noun phrase the negation reaches over, or a verb
phrase of its own that ends what the negation forbids."""

from __future__ import annotations

import re

import pytest

from hermes_core import tokenize
from hermes_core.injection import zh_grammar
from hermes_core.injection.patterns import NEGATED_BEFORE_ZH


@pytest.mark.parametrize("manner", ["用中文回答", "用英文写", "向他解释"])
def test_a_manner_phrase_ending_in_a_verb_is_told_apart(manner: str) -> None:
    assert zh_grammar.manner_ends_in_verb(manner)


@pytest.mark.parametrize("manner", ["通过聊天", "用邮件", "向任何人", "借助工具", "在群里"])
def test_a_means_direction_or_place_with_its_noun_is_not_a_verb_phrase(manner: str) -> None:
    assert not zh_grammar.manner_ends_in_verb(manner)


def test_a_negation_holds_over_a_noun_phrase_and_not_over_a_verb_phrase() -> None:
    assert zh_grammar.negation_holds(NEGATED_BEFORE_ZH.search("不要通过聊天"))
    assert not zh_grammar.negation_holds(NEGATED_BEFORE_ZH.search("不要用中文回答"))
    assert zh_grammar.negation_holds(NEGATED_BEFORE_ZH.search("不要"))     # no manner phrase
    assert not zh_grammar.negation_holds(None)
    assert zh_grammar.negation_holds(re.search("never", "never"))        # a pattern without one


def test_without_jieba_the_negation_holds_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenize, "_load_jieba", lambda: None)
    zh_grammar.manner_ends_in_verb.cache_clear()
    try:
        assert zh_grammar.negation_holds(NEGATED_BEFORE_ZH.search("不要用中文回答"))
    finally:
        zh_grammar.manner_ends_in_verb.cache_clear()
