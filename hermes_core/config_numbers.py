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
from dataclasses import dataclass
from typing import Annotated, Any

from annotated_types import Ge, Gt, Le, Lt
from pydantic import AfterValidator, BeforeValidator
from pydantic_core import PydanticCustomError, PydanticKnownError

# Larger than any real duration in seconds (31 years), token count, limit or weight, and below
# threading.TIMEOUT_MAX (~9.2e9 s), so a timer can always be set from a setting.
MAX_SETTING = 1_000_000_000


def _declares_upper_bound(metadata: list[Any]) -> bool:
    return any(isinstance(m, Le | Lt) for m in metadata)


#: The unit a setting's name declares, by the word that says it (see :func:`unit_word`): a
#: ``window`` is a model's context window, in tokens; a name ending in another word is a count,
#: ratio, weight or score (``tests/test_config_numbers.py`` fails for a word it does not know).
UNITS = {"s": "seconds", "bytes": "bytes", "days": "days", "tokens": "tokens", "token": "tokens",
         "window": "tokens", "chars": "characters", "char": "characters",
         "rpm": "requests a minute", "tpm": "tokens a minute"}


def unit_word(name: str) -> str:
    """The word of a setting's name that says its unit: the last (``retention_days``), or the
    one before a last ``limit`` or ``budget`` (``memory_char_limit``, ``file_token_budget``)."""
    words = name.split("_")
    return words[-2] if len(words) > 1 and words[-1] in ("limit", "budget") else words[-1]


@dataclass(frozen=True, slots=True)
class Unit:
    """The unit of a setting whose name does not say it, in its ``Annotated`` metadata: a
    price's name (``input``, ``cache_read``) is the part of the call it prices, not its unit."""

    words: str


#: The unit of every price of ``llm.prices``.
PRICE = Unit("USD per million tokens")


def _unit(name: str, metadata: list[Any]) -> str:
    """`` seconds`` for ``request_timeout_s``, `` days`` for ``retention_days``, a declared
    :class:`Unit` before either; else ""."""
    declared = next((m.words for m in metadata if isinstance(m, Unit)), None)
    unit = declared or (UNITS.get(unit_word(name)) if name else None)
    return f" {unit}" if unit else ""


def _shown(number: float) -> str:
    """``268,435,456`` and ``60`` rather than ``2.68435e+08`` and ``60.0``."""
    if isinstance(number, int) or number.is_integer():
        return f"{int(number):,}"
    return f"{number:g}"


def allowed_range(metadata: list[Any], *, name: str = "", default: Any = None,
                  non_negative: bool = False) -> str:
    """The range a setting bounded only by :data:`MAX_SETTING` above takes, in the config
    reader's words: its own lower bound (a size of ``gt=0`` is not told it may be -10**9), the
    ceiling, its unit and its default."""
    lower = next((m for m in metadata if isinstance(m, Gt | Ge)), None)
    low = (f"greater than {lower.gt:g}" if isinstance(lower, Gt)
           else f"at least {lower.ge:g}" if isinstance(lower, Ge)
           else "at least 0" if non_negative else f"at least -{MAX_SETTING:,}")
    unit = _unit(name, metadata)
    said = f"{low} and at most {MAX_SETTING:,}{unit}"
    if isinstance(default, int | float) and not isinstance(default, bool):
        said += f" (default {_shown(default)}{unit})"
    return said


def check_numbers(value: Any, metadata: list[Any], *, non_negative: bool = False,
                  name: str = "", default: Any = None) -> None:
    """Raise ValueError (a sentence for the config's reader) when the number ``value`` is not
    finite or exceeds :data:`MAX_SETTING` in size (anything else passes: a mapping's numbers are
    checked one by one, as :data:`Int`, :data:`Float` or :data:`Weight`, so the error's key path
    ends at the entry). ``non_negative``: a weight, which cannot be below zero. ``name`` and
    ``default`` (the setting's) let the error say the unit and the default."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {value}")
    if not _declares_upper_bound(metadata) and abs(value) > MAX_SETTING:
        said = allowed_range(metadata, name=name, default=default, non_negative=non_negative)
        raise ValueError(f"must be {said}; got {digits(int(value))}")
    if non_negative and value < 0:
        raise ValueError(f"weights must be 0 or more, got {value:g}")


def digits(value: int) -> str:
    """``a number of 400 digits`` (``a negative number of ...``): the size of a number too long
    to show, never its digits (YAML's reader refuses one past Python's 4,300-digit limit)."""
    return f"a {'negative ' if value < 0 else ''}number of {len(str(abs(value)))} digits"


def as_number(value: Any, annotation: Any, metadata: list[Any], *, name: str = "",
              default: Any = None, non_negative: bool = False) -> Any:
    """The checks before pydantic reads a number setting: no boolean (:func:`not_a_boolean`),
    and a whole number too large for a float (``weights: {dense: 10**399}``) is told what a
    15-digit one is, not pydantic's "not a number": the bound of the setting's own it breaks
    (``less than or equal to 2.0``), else the range :func:`check_numbers` says, with its
    default. Anything else passes unchanged."""
    value = not_a_boolean(value, annotation)
    if isinstance(value, bool) or not isinstance(value, int) or _number_kind(annotation) != "float":
        return value
    try:
        float(value)
    except OverflowError:
        pass
    else:
        return value
    # pydantic's own error for the bound broken, in a float field's words ("greater than 0.0")
    for bound in metadata:
        if value > 0 and isinstance(bound, Le):
            raise PydanticKnownError("less_than_equal", {"le": float(typing.cast(float, bound.le))})
        if value > 0 and isinstance(bound, Lt):
            raise PydanticKnownError("less_than", {"lt": float(typing.cast(float, bound.lt))})
        if value < 0 and isinstance(bound, Ge):
            raise PydanticKnownError("greater_than_equal", {"ge": float(typing.cast(float, bound.ge))})
        if value < 0 and isinstance(bound, Gt):
            raise PydanticKnownError("greater_than", {"gt": float(typing.cast(float, bound.gt))})
    check_numbers(value, metadata, non_negative=non_negative, name=name, default=default)
    return value


def _entry(*, non_negative: bool = False) -> AfterValidator:
    """The check of one number of a mapping, run where pydantic knows the entry's key."""
    def check(value: Any) -> Any:
        check_numbers(value, [], non_negative=non_negative)
        return value
    return AfterValidator(check)


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


#: Number types for the values of a mapping: they refuse booleans and a number past
#: :data:`MAX_SETTING`, and the error's key path then ends at the entry
#: (``skill_utils.gate_thresholds.lexical``), with its line; a ``Weight`` is also 0 or more. A
#: ``Whole`` refuses booleans only: it is for whole numbers with a ``Field`` bound of their own
#: (``le``), which then says the range (``context_windows``).
Whole = Annotated[int, BeforeValidator(lambda v: not_a_boolean(v, int))]
Float = Annotated[float, BeforeValidator(lambda v: as_number(v, float, [])), _entry()]
Weight = Annotated[float, BeforeValidator(lambda v: as_number(v, float, [], non_negative=True)),
                   _entry(non_negative=True)]
