"""Tests of ``hermes_core/retrieval/triggers.py``.

"the longest matching trigger wins" measures the phrase that matched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.retrieval.synonyms import load_mapping_file
from hermes_core.retrieval.triggers import TriggerIndex


def test_padding_around_a_trigger_does_not_make_it_longer() -> None:
    # a quoted YAML string or a folded block scalar (`- >`) keeps spaces / a trailing newline
    idx = TriggerIndex({"ship-skill": ["ship    ", "\n"], "release-skill": ["ship it"]})
    hit = idx.match("please ship it now")
    assert hit is not None and hit.skill == "release-skill"


def test_compatibility_characters_count_as_what_they_normalise_to() -> None:
    # "㎏" (one character) normalises to "kg" and matches as a two-letter phrase: at equal length
    # the one found earlier in the query wins
    idx = TriggerIndex({"weigh": ["㎏"], "fruit": ["苹果"]})
    hit = idx.match("买 2 ㎏ 苹果")
    assert hit is not None and hit.skill == "weigh"


def test_triggers_file_phrases_are_stripped(tmp_path: Path) -> None:
    p = tmp_path / "triggers.yaml"
    p.write_text('deploy:\n  - "ship it  "\n  - >\n    roll out\n')
    assert load_mapping_file(p, "triggers") == {"deploy": ("ship it", "roll out")}


@pytest.mark.parametrize("trigger, query", [
    ("PDF转换", "把 PDF 转换成 Word"),      # the query spaces Latin from Chinese, the trigger does not
    ("PDF 转换", "把PDF转换成Word"),        # and the other way round (already worked)
    ("git提交代码", "帮我 git 提交一下代码"),
])
def test_mixed_script_trigger_matches_whether_or_not_the_scripts_are_spaced(trigger: str, query: str) -> None:
    hit = TriggerIndex({"skill": [trigger]}).match(query)
    assert hit is not None and hit.skill == "skill"


def test_mixed_script_fuzzy_match_keeps_ascii_word_boundaries() -> None:
    assert TriggerIndex({"skill": ["PDF转换"]}).match("把 xpdf 转换成 Word") is None


def test_a_single_cjk_character_beside_latin_is_not_a_fuzzy_segment() -> None:
    assert TriggerIndex({"x": ["查PDF"]}).match("查一下PDF") is None
