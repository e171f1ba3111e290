"""The retrieval layers a config may weight (``skill_utils.weights``), and the check at load.

Fusion reads only these names, so a misspelt key would leave the default weight in force without
a word; it is refused when the config is read, with the file, line and key, not later by the
retriever. Kept apart from ``config`` (at its size limit) and from ``retrieval`` (which imports
config, not the other way round).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from hermes_core.config_messages import safe_path
from hermes_core.errors import ConfigError

#: The weighted layers, by name; fusion weights are keyed by these.
LAYERS = ("bm25", "synonyms", "dense")
#: The same layers by the numbers the issue gives them.
LAYER_NAMES = {"L2": "bm25", "L3": "synonyms", "L4": "dense"}


def layer_of(key: Any) -> str | None:
    """The layer a weight key names (``bm25`` or ``L2``, ``l2``), or None for no layer."""
    name = LAYER_NAMES.get(str(key).upper(), str(key))
    return name if name in LAYERS else None


def unknown_layer(key: Any) -> str:
    """The message for a key that names no layer, with the nearest name when one is close."""
    near = difflib.get_close_matches(str(key), [*LAYERS, *LAYER_NAMES], n=1, cutoff=0.6)
    return (f"unknown layer; use {', '.join(LAYERS)} (or {', '.join(LAYER_NAMES)})"
            + (f"; did you mean '{near[0]}'?" if near else ""))


def check_layer_weights(weights: Mapping[Any, Any], *, file: str | None,
                        lines: Mapping[str, int], secrets: Iterable[str] = ()) -> None:
    """Refuse the first key of ``weights`` that names no layer, as one ConfigError. A key that
    is, or looks like, a secret (one of ``secrets``, or of a key's shape: a key pasted as a
    layer's name) is masked in the key path, and no layer is suggested for it."""
    for key in weights:
        if layer_of(key) is None:
            key_path = f"skill_utils.weights.{key}"
            shown = safe_path(("skill_utils", "weights", key), secrets)
            why = unknown_layer(key) if shown == key_path else unknown_layer("")
            raise ConfigError(why, file=file, key_path=shown,
                              line=lines.get(key_path) or lines.get("skill_utils.weights"))
