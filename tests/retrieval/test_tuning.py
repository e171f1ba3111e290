"""Tests of ``hermes_core/retrieval/tuning.py``: keywords overlaid on ``SkillSettings``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.config import GateWeightSettings, SkillSettings, load_settings
from hermes_core.config_layers import LAYERS
from hermes_core.errors import ConfigError
from hermes_core.retrieval.fusion import GateWeights
from hermes_core.retrieval.retriever import SkillRetriever, build_retriever
from hermes_core.retrieval.tuning import DEFAULT_WEIGHTS, as_settings, layer_weights
from tests.retrieval.conftest import SKILLS, TOPIC_SKILLS


def test_keywords_override_the_fields_of_the_same_name() -> None:
    base = SkillSettings(top_k=3)
    su = as_settings(base, {"top_k": 2, "weights": None,
                            "gate_weights": {"m": GateWeights(anchor_max=0.1)}})
    assert su.top_k == 2 and su.weights == {} and base.top_k == 3
    assert su.gate_weights["m"] == GateWeightSettings(anchor_max=0.1)
    assert as_settings(None, {}) == SkillSettings()


def test_an_unknown_keyword_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        as_settings(None, {"list_unjudged": False})


def test_default_weights_cover_exactly_the_layers_a_config_may_weight() -> None:
    assert tuple(DEFAULT_WEIGHTS) == LAYERS


def test_an_unknown_layer_keyword_names_the_nearest_layer() -> None:
    with pytest.raises(ConfigError, match="did you mean 'synonyms'"):
        layer_weights({"synonym": 0.5})


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


def test_settings_object_is_the_source_of_tuning_and_keywords_override_it() -> None:
    su = SkillSettings(top_k=2, hint_ratio=0.0, fusion="rrf")
    r = SkillRetriever(su, skills=TOPIC_SKILLS)
    assert (r.top_k, r.fusion, r.hint_ratio) == (2, "rrf", 0.0)
    assert r.settings is su
    r2 = SkillRetriever(su, skills=TOPIC_SKILLS, top_k=3)
    assert r2.top_k == 3 and r2.fusion == "rrf"
    with pytest.raises(TypeError, match="unexpected keyword"):
        SkillRetriever(su, skills=TOPIC_SKILLS, top_kk=3)  # type: ignore[call-arg]
