"""The retriever's tuning: ``SkillSettings`` overlaid with the keywords a caller passes, and the
layers' fusion weights.

Kept apart from the retriever so the rule for which keywords (and weight names) are accepted is one
small piece.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from hermes_core.config import GateWeightSettings, SkillSettings
from hermes_core.config_layers import layer_of, unknown_layer
from hermes_core.errors import ConfigError
from hermes_core.retrieval.fusion import GateWeights

#: Tuning knobs a caller may still pass as keywords; each overrides the field of the same name
#: on the ``SkillSettings`` the retriever is built from.
TUNING_FIELDS = frozenset(("top_k", "weights", "fusion", "rrf_k", "threshold", "gate_thresholds",
                           "anchor_weight", "gate_weights", "hint_ratio", "hint_margin", "enabled",
                           "refresh_interval_s"))


def as_settings(settings: SkillSettings | None, tuning: Mapping[str, Any]) -> SkillSettings:
    unknown = sorted(set(tuning) - TUNING_FIELDS)
    if unknown:
        raise TypeError(f"SkillRetriever got unexpected keyword argument(s): {', '.join(unknown)}")
    base = settings if settings is not None else SkillSettings()
    update = dict(tuning)
    if "gate_weights" in update:
        update["gate_weights"] = {
            k: GateWeightSettings(**(asdict(v) if isinstance(v, GateWeights) else dict(v)))
            if not isinstance(v, GateWeightSettings) else v
            for k, v in (update["gate_weights"] or {}).items()}
    for key in ("weights", "gate_thresholds"):
        if key in update and update[key] is None:
            update[key] = {}
    return base.model_copy(update=update) if update else base


# z-score fusion weights (re-normalised over answering layers). Dev sweep of bm25 vs dense:
# 0.2/0.8 -> MetaTool 0.800, HammerBench-zh 0.903 Recall@5; 0.3/0.7 -> 0.794, 0.903; 0.4/0.6 -> 0.77, 0.90.
# Synonyms have no dev data: weighted between the two so an explicit synonym can lift a skill.
DEFAULT_WEIGHTS = {"bm25": 0.2, "synonyms": 0.3, "dense": 0.8}


def layer_weights(weights: Mapping[str, float] | None, *, file: str | None = None) -> dict[str, float]:
    """The fusion weights: tuned defaults overlaid with ``weights``, keyed bm25 / synonyms / dense.

    The issue names the layers L2 / L3 / L4, so those keys are accepted too. Any other key, or a
    weight that is negative or not a number, is a ConfigError: fusion reads only the three names,
    so a misspelt key would otherwise leave the defaults in force without a word.
    """
    out = dict(DEFAULT_WEIGHTS)
    for key, value in (weights or {}).items():
        name = layer_of(key)
        if name is None:
            raise ConfigError(unknown_layer(key), file=file, key_path=f"skill_utils.weights.{key}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise ConfigError(f"weight must be a number >= 0 (got {value!r})", file=file,
                              key_path=f"skill_utils.weights.{key}")
        out[name] = float(value)
    return out
