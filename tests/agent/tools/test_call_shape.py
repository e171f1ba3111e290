"""Parameters a model cannot fill by keyword: the call that puts its arguments back."""

from __future__ import annotations

import functools
import inspect
import json
import re
import sqlite3
import typing
import warnings
from typing import Annotated, Any, Literal

import pytest
import typing_extensions
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from pydantic import Field, ValidationError

from hermes_core.agent.tools.call_shape import CallShape, Key, shape_of, unpacked_keys
from hermes_core.agent.tools.schema import ToolDefinitionError, make_tool
from tests.agent.tools.conftest import Address


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


def test_a_positional_only_parameter_is_named_to_the_model_and_passed_by_position() -> None:
    """``def lookup(query, /)`` was refused: the model fills it by name, the tool is called
    with it in its place."""
    def lookup(query: str, limit: int = 3, /, *, exact: bool = False) -> str:
        """Look up.

        Args:
            query: what to find
            limit: how many
            exact: whole words only
        """
        return f"{query} {limit} {exact}"

    t = make_tool(lookup)
    assert t.parameters["properties"]["query"] == {"type": "string", "description": "what to find"}
    assert t.parameters["required"] == ["query"]
    assert t.invoke(t.parse('{"query": "oslo", "exact": true}')) == "oslo 3 True"


def test_var_keyword_parameters_are_additional_properties_typed_by_their_annotation() -> None:
    """``**labels: int``: any further name the model sends, each value an int, validated."""
    def tag(item: str, **labels: int) -> dict[str, Any]:
        """Tag an item.

        Args:
            item: what to tag
            **labels: each label's weight
        """
        return {"item": item, **labels}

    t = make_tool(tag)
    assert t.parameters["additionalProperties"] == {"type": "integer",
                                                    "description": "each label's weight"}
    assert t.invoke(t.parse('{"item": "a", "red": 2, "blue": "3"}')) == {
        "item": "a", "red": 2, "blue": 3}
    with pytest.raises(ValidationError, match="red"):
        t.parse('{"item": "a", "red": "very"}')
    untyped = make_tool(free_kwargs)
    assert untyped.parameters["additionalProperties"] is True
    assert untyped.invoke(untyped.parse('{"x": [1], "y": null}')) == {"x": [1], "y": None}


def free_kwargs(**anything):  # type: ignore[no-untyped-def]
    """Take anything."""
    return anything


def test_var_positional_parameters_are_one_array_under_their_own_name() -> None:
    """``*paths: str`` is the array ``paths``; parameters before it are passed by position."""
    def concat(sep: str, *paths: str, upper: bool = False) -> str:
        """Join paths.

        Args:
            sep: the separator
            *paths: the paths, in order
            upper: shout
        """
        joined = sep.join(paths)
        return joined.upper() if upper else joined

    t = make_tool(concat)
    assert t.parameters["properties"]["paths"] == {
        "type": "array", "items": {"type": "string"}, "description": "the paths, in order"}
    assert t.parameters["required"] == ["sep"]
    assert t.invoke(t.parse('{"sep": "/", "paths": ["a", "b"], "upper": true}')) == "A/B"
    assert t.invoke(t.parse('{"sep": "/"}')) == ""
    fixed = make_tool(pair)
    assert fixed.parameters["properties"]["xy"]["prefixItems"] == [{"type": "integer"},
                                                                   {"type": "string"}]
    assert fixed.invoke(fixed.parse('{"xy": [1, "a"]}')) == (1, "a")


def pair(*xy: *tuple[int, str]) -> tuple[Any, ...]:
    """A fixed pair."""
    return xy


Ts = typing_extensions.TypeVarTuple("Ts")


def test_star_parameters_with_no_faithful_schema_are_refused_naming_them() -> None:
    """``*args: *Ts`` and ``**kw: Unpack[X]`` of no TypedDict say what to write instead; a
    ``**kwargs`` type pydantic cannot describe is named as the ``**`` parameter."""
    def raw(**conns: sqlite3.Connection) -> None:
        """Raw."""

    def variadic(*items: *Ts) -> None:
        """Variadic."""

    def not_keys(**opts: typing_extensions.Unpack[Address]) -> None:  # type: ignore[misc]
        """A model is no TypedDict."""

    with pytest.raises(ToolDefinitionError, match=re.escape(
            "tool 'variadic': *items: a TypeVarTuple cannot be described")):
        make_tool(variadic)
    with pytest.raises(ToolDefinitionError, match=re.escape(
            "tool 'not_keys': **opts: Unpack[Address] unpacks no TypedDict")):
        make_tool(not_keys)
    with pytest.raises(ToolDefinitionError, match=r"parameter '\*\*conns' .* cannot be described "
                                                  r"as JSON .*sqlite3\.Connection"):
        make_tool(raw)


class Paging(typing_extensions.TypedDict):
    limit: int
    cursor: typing_extensions.NotRequired[str]
    order: typing_extensions.NotRequired[
        Annotated[Literal["asc", "desc"], Field(description="sort order")]]


def page_rows(table: str, **opts: typing_extensions.Unpack[Paging]) -> dict[str, Any]:
    """Page through a table.

    Args:
        table: the table
        limit: rows per page
    """
    return {"table": table, **opts}


def test_an_unpacked_typed_dict_is_described_by_its_keys_and_passed_as_them() -> None:
    """``**opts: Unpack[Paging]`` was refused though its keys say what the function takes: each
    key is a property (required as the TypedDict says, typed and described as any parameter),
    and the call gets exactly the keys sent: a NotRequired key not sent is absent, not None."""

    with warnings.catch_warnings():
        warnings.simplefilter("error")   # "limit" in the docstring is no stray: it is a key
        t = make_tool(page_rows)
    params = t.parameters
    assert list(params["properties"]) == ["table", "limit", "cursor", "order"]
    assert params["required"] == ["table", "limit"]
    assert params["additionalProperties"] is False
    assert params["properties"]["limit"] == {"type": "integer", "description": "rows per page"}
    assert params["properties"]["cursor"] == {"type": "string"}
    assert params["properties"]["order"] == {"enum": ["asc", "desc"], "type": "string",
                                             "description": "sort order"}
    assert t.invoke(t.parse('{"table": "t", "limit": "5"}')) == {"table": "t", "limit": 5}
    assert t.invoke(t.parse('{"table": "t", "limit": 5, "cursor": "c9"}')) == {
        "table": "t", "limit": 5, "cursor": "c9"}
    # null for a key that may be left out is that key not sent (``lenient``): absent, not None
    assert t.invoke(t.parse('{"table": "t", "limit": 5, "cursor": null}')) == {
        "table": "t", "limit": 5}
    for bad, field in (('{"table": "t"}', "limit"),
                       ('{"table": "t", "limit": 5, "order": "up"}', "order"),
                       ('{"table": "t", "limit": 5, "other": 1}', "other")):
        with pytest.raises(ValidationError) as info:
            t.parse(bad)
        assert info.value.errors()[0]["loc"] == (field,)


class Loose(typing.TypedDict, total=False):
    depth: int
    path: typing_extensions.Required[str]


class Reserved(typing_extensions.TypedDict):
    schema: str
    json: typing_extensions.NotRequired[bool]


def test_unpacked_keys_follow_totality_and_may_carry_names_pydantic_reserves() -> None:
    """``total=False`` with ``Required``, a ``typing.TypedDict`` (only its keys are read, so
    Python 3.11 takes it too) and keys named like BaseModel's attributes (``schema``,
    ``json``), which reach the function under their own names."""
    def walk(**opts: typing_extensions.Unpack[Loose]) -> dict[str, Any]:
        """Walk."""
        return dict(opts)

    def query(**opts: typing_extensions.Unpack[Reserved]) -> dict[str, Any]:
        """Query."""
        return dict(opts)

    w = make_tool(walk)
    assert w.parameters["required"] == ["path"]
    assert w.invoke(w.parse('{"path": "/"}')) == {"path": "/"}
    q = make_tool(query)
    assert list(q.parameters["properties"]) == ["schema", "json"]
    assert q.parameters["required"] == ["schema"]
    assert q.invoke(q.parse('{"schema": "public", "json": true}')) == {"schema": "public",
                                                                        "json": True}


def test_an_unpacked_key_that_is_also_a_parameter_is_refused_at_registration() -> None:
    """``def f(limit, **opts: Unpack[Paging])``: no call can pass ``limit`` twice."""
    def clash(limit: int, **opts: typing_extensions.Unpack[Paging]) -> None:
        """Clash."""

    def spread(*limit: int, **opts: typing_extensions.Unpack[Paging]) -> None:
        """Python takes a key named as the ``*`` parameter; one argument name cannot hold both."""

    for fn in (clash, spread):
        with pytest.raises(ToolDefinitionError, match=re.escape(
                f"tool '{fn.__name__}': **opts: Unpack[Paging] has the key 'limit', which is "
                "also the parameter 'limit'")):
            make_tool(fn)


class Handles(typing_extensions.TypedDict):
    conn: typing_extensions.NotRequired[sqlite3.Connection]


def test_a_key_pydantic_cannot_describe_is_named_with_its_own_type() -> None:
    """Not "(Union)": an optional key's type is the one its TypedDict wrote."""
    def raw(**handles: typing_extensions.Unpack[Handles]) -> None:
        """Raw."""

    with pytest.raises(ToolDefinitionError, match=re.escape(
            "tool 'raw': parameter 'conn' (Connection) cannot be described as JSON")):
        make_tool(raw)


def test_a_key_a_partial_fixed_is_not_the_model_s_to_send() -> None:
    t = make_tool(functools.partial(page_rows, limit=10))
    assert list(t.parameters["properties"]) == ["table", "cursor", "order"]
    assert t.invoke(t.parse('{"table": "t"}')) == {"table": "t", "limit": 10}


def test_a_further_name_equal_to_a_renamed_parameter_s_field_reaches_kwargs_as_sent() -> None:
    """``schema`` is a field under another name (``arg0``) with ``schema`` its alias; a model
    sending ``arg0`` as a further name means that name, not the parameter: the call is
    ``f(schema=..., arg0=...)``, and an error in either is named as the model wrote it."""
    def query(schema: str, **more: str) -> tuple[str, dict[str, str]]:
        """Query."""
        return schema, more

    t = make_tool(query)
    assert list(t.parameters["properties"]) == ["schema"]
    assert t.invoke(t.parse('{"schema": "a", "arg0": "b"}')) == ("a", {"arg0": "b"})
    with pytest.raises(ValidationError) as info:
        t.parse('{"arg0": "b"}')
    assert [e["loc"] for e in info.value.errors()] == [("schema",)]
    with pytest.raises(ValidationError) as info:
        t.parse('{"schema": 1, "arg0": 2}')
    assert sorted(e["loc"] for e in info.value.errors()) == [("arg0",), ("schema",)]


def test_a_further_name_that_is_an_aliased_parameter_s_own_name_is_refused_not_dropped() -> None:
    """``to_account`` is sent as ``toAccount``; a further name ``to_account`` cannot be passed
    beside it (one keyword): it was dropped in silence, now the call is refused saying so."""
    def pay(to_account: Annotated[str, Field(alias="toAccount")], **memo: str) -> Any:
        """Pay."""
        return to_account, memo

    t = make_tool(pay)
    assert t.invoke(t.parse('{"toAccount": "DE1", "note": "rent"}')) == ("DE1", {"note": "rent"})
    with pytest.raises(ValueError, match=re.escape(
            "'to_account' is the parameter sent as 'toAccount', not a further name")):
        t.parse('{"toAccount": "DE1", "to_account": "FR2"}')
