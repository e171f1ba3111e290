"""Tests of ``hermes_core/config_layers.py``: layer names in ``skill_utils.weights``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.config import load_settings
from hermes_core.errors import ConfigError


def test_an_unknown_layer_weight_is_one_config_error_at_load_with_file_line_and_nearest_name(
        tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("skill_utils:\n  top_k: 3\n  weights:\n    bm25: 0.3\n    dense_: 0.7\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, home=tmp_path)
    err = info.value
    assert err.file == str(path) and err.line == 5
    assert err.key_path == "skill_utils.weights.dense_"
    assert "did you mean 'dense'?" in str(err)


def test_layer_weights_by_name_or_by_number_load(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("skill_utils:\n  weights:\n    bm25: 0.3\n    L3: 0.2\n    l4: 0.7\n", encoding="utf-8")
    assert load_settings(path, home=tmp_path).skill_utils.weights == {"bm25": 0.3, "L3": 0.2, "l4": 0.7}


def test_an_unknown_layer_weight_given_as_a_mapping_is_a_config_error_naming_the_layers() -> None:
    with pytest.raises(ConfigError, match="bm25, synonyms, dense") as info:
        load_settings({"skill_utils": {"weights": {"recency": 1.0}}}, env={})
    assert info.value.key_path == "skill_utils.weights.recency"
