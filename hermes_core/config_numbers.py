"""Every number a config sets is finite and of a size a setting can have.

YAML reads ``1e400`` as infinity and ``.nan`` as NaN; a timeout, limit, budget or weight of either,
or of 10**24, is a mistake that would otherwise be accepted and fail far from the file: a timer
refusing a timeout past ``threading.TIMEOUT_MAX``, SQLite refusing an integer past 64 bits, a
provider refusing ``max_tokens``, a fused score that is NaN for every skill. One ceiling holds for
every number that declares no bound of its own (a seed may use all 64 bits, and says so). And a
number is never a boolean: pydantic would read ``yes`` as 1.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any

from annotated_types import Le, Lt
from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

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


def _number_kind(annotation: Any) -> str | None:
    """``"int"`` or ``"float"`` for a number setting (optional or not), else None."""
    kinds = typing.get_args(annotation) if typing.get_origin(annotation) in (
        types.UnionType, typing.Union) else (annotation,)
    if bool in kinds:
        return None
    return "int" if int in kinds else "float" if float in kinds else None


def not_a_boolean(value: Any, annotation: Any) -> Any:
    """Refuse a YAML boolean where a number belongs: pydantic reads True as 1, so
    ``max_tokens: yes`` capped every reply at one token and ``max_results: false`` turned recall
    off without a word. Raised as pydantic's own type error, so the message is the config's."""
    if isinstance(value, bool) and (kind := _number_kind(annotation)) is not None:
        raise PydanticCustomError(f"{kind}_type", "a boolean is not a number")
    return value


#: Number types that refuse booleans, for the values of a mapping (the error's key path then
#: ends at the mapping key, ``skill_utils.weights.bm25``).
Int = Annotated[int, BeforeValidator(lambda v: not_a_boolean(v, int))]
Float = Annotated[float, BeforeValidator(lambda v: not_a_boolean(v, float))]
