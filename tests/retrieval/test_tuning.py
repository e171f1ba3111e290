"""Tests of ``hermes_core/retrieval/tuning.py``: keywords overlaid on ``SkillSettings``."""

from __future__ import annotations

import pytest

from hermes_core.config import GateWeightSettings, SkillSettings
from hermes_core.retrieval.fusion import GateWeights
from hermes_core.retrieval.tuning import as_settings


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
