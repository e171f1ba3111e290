"""Review round 2: "the longest matching trigger wins" measures the phrase that matched."""

from __future__ import annotations

from pathlib import Path

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
