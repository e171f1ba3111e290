"""Triggers and synonyms files go through the bounded YAML loader: one ConfigError, never a hang."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.errors import ConfigError
from hermes_core.retrieval.synonyms import load_mapping_file

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
