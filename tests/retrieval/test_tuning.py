"""Tests of ``hermes_core/retrieval/tuning.py``: keywords overlaid on ``SkillSettings``."""

from __future__ import annotations

import pytest

from hermes_core.config import GateWeightSettings, SkillSettings
from hermes_core.config_layers import LAYERS
from hermes_core.errors import ConfigError
from hermes_core.retrieval.fusion import GateWeights
from hermes_core.retrieval.tuning import DEFAULT_WEIGHTS, as_settings, layer_weights


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
