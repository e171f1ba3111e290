"""The retriever's tuning: ``SkillSettings`` overlaid with the keywords a caller passes.

Kept apart from the retriever so the rule for which keywords are accepted is one small piece.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from hermes_core.config import GateWeightSettings, SkillSettings
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
