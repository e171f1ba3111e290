"""Tests of ``hermes_core/retrieval/synonyms.py``.

Synonym phrases in mixed Chinese/English text (no spaces between scripts).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.errors import ConfigError
from hermes_core.retrieval.synonyms import PHRASE_WEIGHT, SynonymIndex, load_mapping_file

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


BOMB = "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9 if i else ["x"] * 9) + "]\n"
    for i in range(7))


@pytest.mark.parametrize("text,why", [(BOMB, "alias"), ("a: " + "[" * 500 + "]" * 500, "levels deep"),
                                      ("a: &x\n  b: *x\n", "recursive alias"), ("a: [1\n", "not valid YAML")])
def test_hostile_mapping_file_is_one_config_error(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "triggers.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_mapping_file(path, "triggers")
    assert why in str(info.value) and str(path) in str(info.value)


def test_empty_values_and_ordinary_mappings_load(tmp_path: Path) -> None:
    path = tmp_path / "synonyms.yaml"
    path.write_text("deploy: [ship, release]\nweather: forecast\n", encoding="utf-8")
    assert load_mapping_file(path, "synonyms") == {"deploy": ("ship", "release"), "weather": ("forecast",)}
