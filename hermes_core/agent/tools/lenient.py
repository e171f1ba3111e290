"""A model's tool arguments read for what they plainly mean, when they fail as sent.

Models send arguments in a few shapes a strict reading refuses though their meaning is plain:
a list or an object parameter as JSON text (reported of Claude Opus, GLM and local Qwen models:
anthropics/claude-code#32524, and agent frameworks that now decode such a parameter), the whole
object encoded twice (a JSON string holding it), ``null`` for a parameter that has a default (a
model filling in every key the schema lists). Refused, the model believes it sent the right
thing and sends it again; each such round costs a paid call and may end the turn on the cap.

Read only after validation failed, only where pydantic's own error names the place and the
value, and only to the one reading that value has: a valid call is never changed, and a value
that reads two ways (text that is not JSON of the kind asked for, a ``null`` for a parameter
without a default) stays the error it was. A number where text is asked for is not read as its
digits: the zip code 01234 arrives as 1234, and "1234" would be a wrong answer told as right.
Nor is ``true`` or ``false`` where a number is asked for (pydantic's lax mode takes them as 1
and 0), or a choice of numbers (``Literal[1, 2]``, an ``IntEnum``): the model meant a flag, or
filled in the wrong parameter, and the tool would run on a number it never wrote
(:func:`flags_for_numbers`, :func:`flags_made_numbers`). A flag keeps pydantic's plain spellings
("true", "False", "1", "0", 1, 0: the text forms are what Nemotron and Qwen send).

Each reading is logged (INFO, naming the tool and the place, never the value, which may hold a
key): read silently, the model's mistake was hidden from the author, who could fix the prompt or
the schema that caused it, or learn which model to watch.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

log = logging.getLogger(__name__)

#: pydantic's error types for a value that should have been an array, or an object.
_ARRAYS = frozenset({"list_type", "tuple_type", "set_type", "frozen_set_type"})
_OBJECTS = frozenset({"dict_type", "model_type", "model_attributes_type", "dataclass_type",
                      "dataclass_exact_type"})


def _decoded(text: str) -> Any:
    """``text`` as JSON, or None when it is none (NaN and Infinity are not JSON either)."""
    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    try:
        return json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError):
        return None


def unwrapped(data: Any, tool: str = "") -> Any:
    """The object a JSON string holds, when ``data`` is one (the arguments encoded twice);
    anything else as it is. ``tool``: the name a reading is logged under."""
    if isinstance(data, str):
        inner = _decoded(data)
        if isinstance(inner, dict):
            log.info("%s: the arguments sent as a JSON string, read as the object it holds", tool)
            return inner
    return data


def _place(data: dict[str, Any], loc: Sequence[int | str]
           ) -> tuple[Any, int | str, str] | None:
    """The container and key of the deepest value of ``data`` that ``loc`` reaches, and its
    place as the error names it ("stops.0"; a loc goes on past a value into a union's member
    names, which are no keys of the data)."""
    found: tuple[Any, int | str, str] | None = None
    here: Any = data
    for depth, step in enumerate(loc, 1):
        keyed = isinstance(here, dict) and isinstance(step, str) and step in here
        indexed = (isinstance(here, list) and isinstance(step, int)
                   and not isinstance(step, bool) and 0 <= step < len(here))
        if not (keyed or indexed):
            break
        found = (here, step, ".".join(str(x) for x in loc[:depth]))
        here = here[step]
    return found


def _has_default(arguments: type[BaseModel], sent_as: int | str) -> bool:
    """Whether the parameter the model sends as ``sent_as`` may be left out."""
    for name, info in arguments.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        if (alias or name) == sent_as:
            return not info.is_required()
    return False


def reread(data: Mapping[str, Any], error: ValidationError, arguments: type[BaseModel],
           readings: list[str] | None = None) -> dict[str, Any] | None:
    """``data`` with each value ``error`` names read for its plain meaning (see the module), or
    None when no value has one. ``arguments``: the model ``data`` failed, for which top-level
    parameters have a default; ``readings`` gains a line for each reading made."""
    out = copy.deepcopy(dict(data))
    changed = False
    said = readings if readings is not None else []
    for err in error.errors():
        place = _place(out, err.get("loc", ()))
        given = err.get("input")
        if place is None:
            continue
        holder, key, where = place
        value = holder[key]
        if type(value) is not type(given) or value != given:   # the loc ran past the value
            continue
        kind = err.get("type", "")
        if isinstance(value, str) and kind in _ARRAYS | _OBJECTS:
            decoded = _decoded(value)
            if ((isinstance(decoded, list) and kind in _ARRAYS)
                    or (isinstance(decoded, dict) and kind in _OBJECTS)):
                holder[key], changed = decoded, True
                said.append(f"{where} sent as JSON text, read as the "
                            f"{'array' if isinstance(decoded, list) else 'object'} it holds")
        elif value is None and holder is out and _has_default(arguments, key):
            del out[str(key)]
            changed = True
            said.append(f"{where} sent as null, left out for its default")
    return out if changed else None


#: How many times a call is read again: a list sent as text may hold items sent as text.
_READINGS = 3


def validated(arguments: type[BaseModel], data: Mapping[str, Any], tool: str = "") -> BaseModel:
    """``data`` validated by ``arguments``, read again by :func:`reread` while it fails and a
    reading applies; what fails then is the error of the data as read (its places are where the
    model's values still fall short: inside a list it sent as text, say). ``tool``: the name
    the readings are logged under, in one line (2,000 items sent as text are not 2,000 lines)."""
    readings: list[str] = []
    try:
        for _ in range(_READINGS):
            try:
                return _no_flags_for_numbers(arguments, data, arguments.model_validate(data))
            except ValidationError as e:
                if e.title == _FLAGS:
                    raise
                again = reread(data, e, arguments, readings)
                if again is None:
                    raise
                data = again
        return _no_flags_for_numbers(arguments, data, arguments.model_validate(data))
    finally:
        if readings:
            more = len(readings) - _LOGGED
            log.info("%s: %s%s", tool, "; ".join(readings[:_LOGGED]),
                     f"; and {more} more places" if more > 0 else "")


#: How many readings of one call its log line names.
_LOGGED = 3


#: pydantic's strict-mode errors for a value that should have been a number.
_NUMBER_TYPES = frozenset({"int_type", "float_type", "decimal_type", "complex_type"})
#: The title of the error :func:`_no_flags_for_numbers` raises (no reading saves it).
_FLAGS = "a flag for a number"
_FLAG_FOR_NUMBER = PydanticCustomError("bool_for_number",
                                       "a JSON true or false is no number; send a number")


def _holds_a_flag(data: Any) -> bool:
    """Whether ``true`` or ``false`` is anywhere in ``data`` (most calls hold none)."""
    stack = [data]
    while stack:
        here = stack.pop()
        if isinstance(here, bool):
            return True
        if isinstance(here, dict):
            stack.extend(here.values())
        elif isinstance(here, list):
            stack.extend(here)
    return False


def _data_place(data: Any, loc: Sequence[int | str]) -> tuple[tuple[int | str, ...], Any]:
    """The path through ``data`` that ``loc`` names and the value there: the steps that are no
    key or index of the data (a union's member names, "int" in ``size.int``) are passed over."""
    here, path = data, []
    for step in loc:
        keyed = isinstance(here, dict) and isinstance(step, str) and step in here
        indexed = (isinstance(here, list) and isinstance(step, int)
                   and not isinstance(step, bool) and 0 <= step < len(here))
        if keyed or indexed:
            here = here[step]
            path.append(step)
    return tuple(path), here


def flags_for_numbers(arguments: type[BaseModel], data: Mapping[str, Any]
                      ) -> list[tuple[int | str, ...]]:
    """The places in ``data`` where a ``true`` or ``false`` stands for a number: pydantic's lax
    mode takes them as 1 and 0 (``bool`` is an ``int`` in Python), its strict mode names each
    (a flag is no number in JSON), read here only for those errors; strict's other complaints
    ("3" for an int) are lax readings kept. A parameter that takes a bool (``bool | int``)
    takes one. Checked only when the data holds a flag: a second validation, in strict mode."""
    if not _holds_a_flag(data):
        return []
    try:
        arguments.model_validate_json(json.dumps(data), strict=True)
    except ValidationError as e:
        found: list[tuple[int | str, ...]] = []
        for err in e.errors():
            path, value = _data_place(data, err.get("loc", ()))
            if (err.get("type") in _NUMBER_TYPES and isinstance(value, bool)
                    and value is err.get("input") and path not in found):
                found.append(path)
        return found
    return []


def _a_number(value: Any) -> bool:
    """Whether a validated ``value`` is a number or a choice of numbers (an ``IntEnum``, an
    ``Enum`` of ints): what a flag must not have become. An ``Enum`` whose value is a bool is
    the flag's own meaning."""
    if isinstance(value, enum.Enum):
        value = value.value
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fields_sent(model: BaseModel) -> Iterator[tuple[str, str]]:
    """Each name a field of ``model`` may be sent under (alias, then its own), with the field."""
    for name, info in type(model).model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        yield (alias or name), name
        if alias and alias != name:
            yield name, name


def flags_made_numbers(data: Any, value: Any, here: tuple[int | str, ...] = ()
                       ) -> Iterator[tuple[int | str, ...]]:
    """The places where ``data`` holds a flag and the validated ``value`` beside it holds a
    number: ``Literal[1, 2]`` and an ``IntEnum`` take ``true`` as 1 even in pydantic's strict
    mode (its literal and enum checks compare by ``==``, and ``True == 1``), so only the value
    made tells. Walks models, dataclasses, mappings and sequences; a set is passed over (its
    order is not the data's)."""
    if isinstance(data, bool):
        if _a_number(value):
            yield here
        return
    if isinstance(data, dict):
        if isinstance(value, BaseModel):
            pairs = [(sent, getattr(value, name)) for sent, name in _fields_sent(value)
                     if sent in data]
        elif isinstance(value, Mapping):
            pairs = [(k, value[k]) for k in data if k in value]
        elif dataclasses.is_dataclass(value):
            pairs = [(k, getattr(value, k)) for k in data if isinstance(k, str)
                     and hasattr(value, k)]
        else:
            return
        for key, made in pairs:
            if isinstance(data[key], _MAY_HOLD_A_FLAG):
                yield from flags_made_numbers(data[key], made, (*here, key))
    elif (isinstance(data, list) and isinstance(value, Sequence)
          and not isinstance(value, str | bytes) and len(value) == len(data)):
        for i, (sent, made) in enumerate(zip(data, value, strict=True)):
            if isinstance(sent, _MAY_HOLD_A_FLAG):
                yield from flags_made_numbers(sent, made, (*here, i))


#: The JSON values a flag can be, or be inside (text, numbers and null are passed over).
_MAY_HOLD_A_FLAG = (bool, dict, list)


def _no_flags_for_numbers(arguments: type[BaseModel], data: Mapping[str, Any],
                          model: BaseModel) -> BaseModel:
    """``model``, or the error naming each place a flag was sent for a number."""
    places = flags_for_numbers(arguments, data)
    if _holds_a_flag(data):
        places += [p for p in flags_made_numbers(dict(data), model) if p not in places]
    if not places:
        return model
    raise ValidationError.from_exception_data(_FLAGS, [
        InitErrorDetails(type=_FLAG_FOR_NUMBER, loc=place, input=_data_place(data, place)[1])
        for place in places])
