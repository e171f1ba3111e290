"""Tests of ``hermes_core/retrieval/synonyms.py``.

Synonym phrases in mixed Chinese/English text (no spaces between scripts).
"""

from __future__ import annotations

import pytest

from hermes_core.retrieval.synonyms import PHRASE_WEIGHT, SynonymIndex

NAMES = ["meeting", "mail"]


@pytest.mark.parametrize("query", ["用zoom开个会", "明天3点开个会", "开个会3点开始", "开个会abc"])
def test_cjk_phrase_next_to_latin_letters_or_digits_is_found_whole(query: str) -> None:
    idx = SynonymIndex({"meeting": ["开个会"]}, NAMES)
    scores, whole = idx.score(query)
    assert whole and scores[0] == PHRASE_WEIGHT


def test_ascii_phrase_keeps_its_word_boundaries() -> None:
    idx = SynonymIndex({"mail": ["mail"]}, NAMES)
    assert idx.score("send an email")[1] is False
    assert idx.score("发mail给他")[1] is True  # CJK beside it is a boundary
