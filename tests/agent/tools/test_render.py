"""A tool's return value as the text the model reads: JSON forms, bytes, NaN, cuts."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import fractions
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from hermes_core.agent.tools.render import render_output
from hermes_core.finite_json import non_finite, nulled


class Point(BaseModel):
    x: int
    y: int


@pytest.mark.parametrize("value, text", [
    ("plain", "plain"),
    (Point(x=1, y=2), '{"x": 1, "y": 2}'),
    ({"a": [1, 2]}, '{"a": [1, 2]}'),
    (None, "null"),
])
def test_outputs_are_rendered_as_text(value: Any, text: str) -> None:
    assert render_output(value) == text


class Unit(enum.Enum):
    CELSIUS = "c"


@dataclasses.dataclass
class Place:
    city: str


def test_values_inside_a_returned_dict_are_json_not_python_reprs() -> None:
    """A dict holding an Enum, a dataclass, a pydantic model, a set or a datetime went to the
    model as ``"Unit.CELSIUS"``, ``"Place(city='Oslo')"``, ``"x=1 y=2"``: Python reprs, not data."""
    value = {"unit": Unit.CELSIUS, "place": Place("Oslo"), "point": Point(x=1, y=2),
             "tags": {"a"}, "at": datetime.datetime(2026, 1, 2, 3, 4), "名": "奥斯陆"}
    assert json.loads(render_output(value)) == {
        "unit": "c", "place": {"city": "Oslo"}, "point": {"x": 1, "y": 2}, "tags": ["a"],
        "at": "2026-01-02T03:04:00", "名": "奥斯陆"}
    assert json.loads(render_output([Place("Bergen")])) == [{"city": "Bergen"}]
    assert render_output(Place("Oslo")) == '{"city": "Oslo"}'


@dataclasses.dataclass
class _Blob:
    name: str
    data: bytes


@pytest.mark.parametrize("value, data", [
    (np.int64(5), 5), (np.bool_(True), True), (np.float32(0.5), 0.5),
    (np.arange(3), [0, 1, 2]), ({"n": np.int64(3), "m": np.array([[1.5]])}, {"n": 3, "m": [[1.5]]}),
    ({"a": 1}.keys(), ["a"]), (range(3), [0, 1, 2]),
    (collections.OrderedDict(a=Place("Oslo")), {"a": {"city": "Oslo"}}),
    ({"frac": fractions.Fraction(1, 3), "err": ValueError("bad")}, {"frac": "1/3", "err": "bad"}),
    (_Blob("a.txt", b"hi"), {"name": "a.txt", "data": "hi"}),
], ids=["np-int", "np-bool", "np-float32", "np-array", "np-nested", "keys-view", "range",
        "mapping", "own-str", "utf8-bytes-field"])
def test_each_kind_of_return_value_is_sent_as_its_json_form(value: Any, data: Any) -> None:
    """What a tool naturally returns reached the model as a Python repr: numpy's scalars as
    strings ("5", "True"), an array as "[0 1 2]", a dict view as "dict_keys(['a'])". Each is
    JSON now; an object whose class writes its own ``__str__`` is that text."""
    assert json.loads(render_output(value)) == data


def test_long_outputs_are_cut_with_a_note() -> None:
    out = render_output("x" * 50, limit=10)
    assert out.startswith("x" * 10) and "first 10 of 50 characters" in out


def test_a_result_with_undecodable_bytes_as_surrogates_can_be_sent() -> None:
    """A tool listing a folder with a Latin-1 file name (os.listdir gives a lone surrogate for
    each undecodable byte): a surrogate cannot be encoded, so the request body failed to build and
    the turn ended in a UnicodeEncodeError."""
    import os
    name = os.fsdecode(b"caf\xe9.txt")
    for value in (name, [name], {"files": [name]}):
        text = render_output(value)
        text.encode("utf-8")             # raised UnicodeEncodeError
        assert "caf" in text and ".txt" in text


@pytest.mark.parametrize("value", [b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40,
                                   bytearray(b"\x00\xff" * 5000),
                                   memoryview(b"\xff\xfe\x00" * 4000)])
def test_binary_results_are_named_by_size_not_sent_as_a_python_repr(value: Any) -> None:
    """The repr of 10 kB of binary ("b'\\x89PNG...") is 40 kB of escapes the model cannot use,
    and a memoryview rendered as "<memory at 0x7f...>"."""
    text = render_output(value)
    assert text == f"[binary data: {len(bytes(value))} bytes, not shown]"


def test_bytes_that_are_utf8_text_are_sent_as_the_text() -> None:
    assert render_output(b"hello\nworld") == "hello\nworld"
    assert render_output("ok") == "ok"


_NUMBERS = st.recursive(
    st.floats() | st.integers() | st.text(max_size=5) | st.none(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(alphabet="abc xy", min_size=1, max_size=4), inner, max_size=4),
    max_leaves=20)


def _strict(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


@given(_NUMBERS)
def test_a_nan_or_infinity_anywhere_in_an_answer_is_null_with_a_note_naming_its_place(
        value: Any) -> None:
    """Python writes ``NaN``/``Infinity``: not JSON, refused by strict servers and proxies."""
    out = render_output({"v": value})
    places = [at for at, _ in non_finite({"v": value})]
    head, _, note = out.partition("\n[note: JSON has no NaN or Infinity; null stands for ")
    assert _strict(head) == nulled({"v": value})
    assert bool(note) == bool(places)
    for at in places[:5]:
        assert at in note
