"""Every number a config sets is finite and of a size a setting can have.

YAML reads ``1e400`` as infinity and ``.nan`` as NaN; a timeout, limit, budget or weight of either,
or of 10**24, is a mistake that would otherwise be accepted and fail far from the file: a timer
refusing a timeout past ``threading.TIMEOUT_MAX``, SQLite refusing an integer past 64 bits, a
provider refusing ``max_tokens``, a fused score that is NaN for every skill. One ceiling holds for
every number that declares no bound of its own (a seed may use all 64 bits, and says so).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from annotated_types import Le, Lt

# Larger than any real duration in seconds (31 years), token count, limit or weight, and below
# threading.TIMEOUT_MAX (~9.2e9 s), so a timer can always be set from a setting.
MAX_SETTING = 1_000_000_000


def _declares_upper_bound(metadata: list[Any]) -> bool:
    return any(isinstance(m, Le | Lt) for m in metadata)


def check_numbers(value: Any, metadata: list[Any], *, non_negative: bool = False) -> None:
    """Raise ValueError (a sentence for the config's reader) when ``value``, or a number inside
    a mapping or list of them, is not finite or exceeds :data:`MAX_SETTING` in size.
    ``non_negative``: the numbers of a mapping are weights, which cannot be below zero."""
    items = (value.values() if isinstance(value, Mapping)
             else value if isinstance(value, list | tuple) else (value,))
    bounded = _declares_upper_bound(metadata)
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int | float):
            continue
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"expected a finite number, got {item}")
        if not bounded and abs(item) > MAX_SETTING:
            raise ValueError(f"must be between -{MAX_SETTING:,} and {MAX_SETTING:,}; got a number "
                             f"of {len(str(int(abs(item))))} digits")
        if non_negative and item < 0:
            raise ValueError(f"weights must be 0 or more, got {item:g}")
