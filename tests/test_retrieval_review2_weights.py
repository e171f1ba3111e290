"""Review round 2: fusion weights written as the issue names the layers (L2/L3/L4) take effect,
and a misspelt or negative weight is a clear error instead of being silently ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.config import load_settings
from hermes_core.errors import ConfigError
from hermes_core.retrieval.retriever import DEFAULT_WEIGHTS, SkillRetriever, build_retriever
from hermes_core.types import Skill

SKILLS = [Skill("weather", "Get the weather forecast"), Skill("email", "Send an email")]


def test_layer_numbers_are_accepted_as_weight_keys() -> None:
    r = SkillRetriever(skills=SKILLS, weights={"L2": 0.45, "L3": 0.35, "L4": 0.2})
    assert r.weights == {"bm25": 0.45, "synonyms": 0.35, "dense": 0.2}


def test_partial_weights_keep_the_other_defaults() -> None:
    r = SkillRetriever(skills=SKILLS, weights={"dense": 0.5})
    assert r.weights == {**DEFAULT_WEIGHTS, "dense": 0.5}


@pytest.mark.parametrize("weights, key", [
    ({"bm-25": 0.3}, "bm-25"),
    ({"L5": 0.3}, "L5"),
    ({"dense": -0.1}, "dense"),
    ({"L3": float("nan")}, "L3"),
])
def test_unknown_or_negative_weight_is_a_config_error_naming_the_key(weights: dict[str, float],
                                                                     key: str) -> None:
    with pytest.raises(ConfigError) as e:
        SkillRetriever(skills=SKILLS, weights=weights)
    assert e.value.key_path == f"skill_utils.weights.{key}"


def test_config_file_weights_reach_the_retriever_and_errors_name_the_file(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("skill_utils:\n  embeddings: false\n  weights: {L2: 0.45, L3: 0.35, L4: 0.2}\n")
    r = build_retriever(load_settings(good), home=tmp_path)
    assert r.weights == {"bm25": 0.45, "synonyms": 0.35, "dense": 0.2}
    bad = tmp_path / "bad.yaml"
    bad.write_text("skill_utils:\n  embeddings: false\n  weights: {bm-25: 0.45}\n")
    with pytest.raises(ConfigError) as e:
        build_retriever(load_settings(bad), home=tmp_path)
    assert e.value.file == str(bad)
    assert "bm25, synonyms, dense" in str(e.value)



def test_unknown_fusion_rule_fails_at_construction_not_on_every_query() -> None:
    with pytest.raises(ConfigError) as e:
        SkillRetriever(skills=SKILLS, fusion="RRF ")
    assert e.value.key_path == "skill_utils.fusion" and "zscore" in str(e.value)
