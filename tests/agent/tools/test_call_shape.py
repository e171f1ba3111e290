"""Parameters a model cannot fill by keyword: the call that puts its arguments back."""

from __future__ import annotations

import inspect
import json
import typing
from typing import Any

import typing_extensions
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from hermes_core.agent.tools.call_shape import CallShape, Key, shape_of, unpacked_keys
from hermes_core.agent.tools.schema import make_tool


def test_parameters_before_a_spread_go_by_position_and_keyword_only_ones_by_name() -> None:
    def f(a: int, /, b: int, *rest: int, c: int = 0, **more: int) -> None: ...

    def g(a: int, /, b: int, *, c: int = 0) -> None: ...

    assert shape_of(list(inspect.signature(f).parameters.values())) == CallShape(("a", "b"), "rest")
    # without *args, b may go by name, as every tool's parameters always did
    assert shape_of(list(inspect.signature(g).parameters.values())) == CallShape(("a",), None)
    assert CallShape(("a",), "rest").call(lambda *p, **k: (p, k),
                                          {"a": 1, "rest": [2, 3], "c": 4}) == ((1, 2, 3), {"c": 4})


@hyp_settings(max_examples=60, deadline=None)
@given(first=st.text(max_size=8), rest=st.lists(st.integers(), max_size=5),
       scale=st.floats(allow_nan=False, allow_infinity=False, width=32),
       extra=st.dictionaries(st.text(min_size=1, max_size=6).filter(
           lambda k: k not in {"first", "rest", "scale"}), st.integers(), max_size=4))
def test_every_parameter_kind_reaches_the_function_as_the_model_sent_it(
        first: str, rest: list[int], scale: float, extra: dict[str, int]) -> None:
    """Whatever JSON the model sends within the schema, the function is called as Python would
    call it with those values: positional-only first, the array spread, the rest by keyword."""
    t = make_tool(every_kind)
    payload = {"first": first, "rest": rest, "scale": scale, **extra}
    assert t.invoke(t.parse(json.dumps(payload))) == (first, tuple(rest), scale, extra)


def every_kind(first: str, /, *rest: int, scale: float = 1.0,
               **extra: int) -> tuple[Any, ...]:
    """Every kind of parameter."""
    return first, rest, scale, extra


class Window(typing.TypedDict):
    start: str
    end: typing.NotRequired[str]
    note: typing_extensions.ReadOnly[typing_extensions.NotRequired[str]]


class Wide(Window, total=False):
    zone: str
    day: typing.Required[int]


def test_unpacked_keys_are_required_as_the_typed_dict_says_even_under_quoted_annotations() -> None:
    """This module quotes its annotations (``from __future__ import annotations``), so Python
    3.11's ``__required_keys__`` holds ``end`` and ``note`` too: the evaluated qualifiers
    decide, inherited keys keep their class's totality, and the qualifiers leave the type."""
    assert unpacked_keys("kw", typing_extensions.Unpack[Wide]) == (
        Key("start", str, True), Key("end", str, False), Key("note", str, False),
        Key("zone", str, False), Key("day", int, True))
    assert unpacked_keys("kw", int) is None
