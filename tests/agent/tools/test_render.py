"""A tool's return value as the text the model reads: JSON forms, bytes, NaN, cuts."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import fractions
import json
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from hermes_core.agent.tools.render import render_output
from hermes_core.finite_json import non_finite, nulled
from hermes_core.testing import anthropic_message, openai_chat_completion
from hermes_core.types import ToolCall
from tests.agent.conftest import (
    KINDS,
    URLS,
    make_agent,
    request_json,
    strict_json,
    tool_answers,
    wire_response,
)


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


class _Opaque:
    """An object with no JSON form."""


@pytest.mark.parametrize("kind", KINDS)
def test_what_a_tool_returns_goes_on_the_wire_as_json_or_as_an_error_naming_its_type(
        kind: str, empty_home: Path, respx_mock: Any) -> None:
    """numpy's values were sent as strings ("3", "True") and an object with no JSON form as
    "<_Opaque object at 0x7f..>": through each SDK, the tool message now holds JSON, or the
    tool's error naming the type."""
    import numpy as np

    def stats() -> dict[str, Any]:
        """Statistics."""
        return {"n": np.int64(3), "ok": np.bool_(True), "mean": np.float32(0.5)}

    def handle() -> Any:
        """A handle."""
        return _Opaque()

    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, False, calls=(ToolCall("c1", "stats", "{}"),
                                          ToolCall("c2", "handle", "{}"))),
        wire_response(kind, False, "done")])
    reply = make_agent(empty_home, kind, tools=[stats, handle]).chat("go")
    answers = dict(tool_answers(kind, request_json(route, 1)))
    assert json.loads(answers["c1"]) == {"n": 3, "ok": True, "mean": 0.5}
    assert answers["c2"].startswith("error: handle returned a value that cannot be shown as text")
    assert "test_render._Opaque has no JSON form" in answers["c2"]
    assert "0x" not in answers["c2"]
    assert [r.status for r in reply.tool_results] == ["ok", "error"]


def _loose_response(kind: str, text: str = "", calls: tuple[ToolCall, ...] = ()) -> httpx.Response:
    """A reply as a lenient server or proxy writes it: Python's json, ``NaN`` left in."""
    data = (openai_chat_completion(text, tool_calls=calls) if kind == "openai"
            else anthropic_message(text, tool_calls=calls))
    return httpx.Response(200, content=json.dumps(data).encode(),
                          headers={"content-type": "application/json"})


@pytest.mark.parametrize("kind", KINDS)
def test_non_finite_numbers_never_reach_the_wire_as_nan_or_infinity(
        kind: str, empty_home: Path, respx_mock: Any) -> None:
    """A tool with ``radius_km: float = math.inf`` ended every turn with the SDK's bare
    ``ValueError: Out of range float values are not JSON compliant`` (its schema's default),
    and so did a model's ``{"x": NaN}`` echoed back to Anthropic; a tool answering NaN went as
    ``NaN`` in the answer's text. Every body is strict JSON now, each value told where it was;
    the model's NaN argument is that call's error, not a float the tool runs on."""
    import math

    def nearby(place: str, radius_km: float = math.inf) -> dict[str, Any]:
        """Places near a place."""
        return {"place": place, "mean_km": math.nan, "radius_km": radius_km}

    def scale(x: float) -> float:
        """Scale a number."""
        return x * 2

    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        _loose_response(kind, calls=(ToolCall("c1", "nearby", '{"place": "Oslo"}'),
                                     ToolCall("c2", "scale", '{"x": NaN}'))),
        _loose_response(kind, "done")])
    reply = make_agent(empty_home, kind, tools=[nearby, scale]).chat("go")
    assert reply.text == "done"
    first, second = (strict_json(c.request.content) for c in route.calls)
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in first["tools"]} \
        if kind == "openai" else {t["name"]: t["input_schema"] for t in first["tools"]}
    radius = tools["nearby"]["properties"]["radius_km"]
    assert "default" not in radius and "Infinity" in radius["description"]
    assert "radius_km" not in tools["nearby"]["required"]
    answers = dict(tool_answers(kind, second))
    data, note = answers["c1"].split("\n", 1)
    assert json.loads(data) == {"place": "Oslo", "mean_km": None, "radius_km": None}
    assert "$.mean_km (NaN)" in note and "$.radius_km (Infinity)" in note
    # the model's NaN is refused before the tool runs: a float parameter would take it
    assert answers["c2"] == ("error: invalid arguments for scale: NaN is not a JSON value "
                             "(send a number or null)")
    echoed = json.dumps(second)   # the model's own call, sent back with its answer
    assert '\\"x\\": null' in echoed or '"x": null' in echoed
