"""A function becomes a tool: schema from hints and docstrings, validation, bad definitions."""

from __future__ import annotations

import asyncio
import functools
import json
import math
import re
import sqlite3
import typing
import warnings
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
import typing_extensions
from pydantic import Field, ValidationError

from hermes_core.agent.tools.registry import ToolRegistry
from hermes_core.agent.tools.schema import ToolDefinitionError, make_tool, tool
from hermes_core.types import ToolCall
from tests.agent.conftest import (
    KINDS,
    MODES,
    URLS,
    arrays_without_items,
    make_agent,
    openai_schema_check,
    request_json,
    run_turn,
    tool_answers,
    wire_response,
)
from tests.agent.tools.conftest import Address, book_table


def test_schema_comes_from_hints_and_google_docstring() -> None:
    t = make_tool(book_table)
    assert t.name == "book_table"
    assert t.description == "Book a table at a restaurant.\n\nSay which restaurant and for how many."
    props = t.parameters["properties"]
    assert props["restaurant"] == {"type": "string", "description": "the restaurant's name"}
    assert props["guests"] == {"type": "integer", "description": "how many people"}
    assert props["when"]["default"] == "tonight"
    assert props["seating"]["enum"] == ["inside", "terrace"]
    assert t.parameters["required"] == ["restaurant", "guests"]
    assert "Address" in t.parameters["$defs"]
    assert t.parameters["additionalProperties"] is False


def test_arguments_are_validated_and_coerced_by_the_model() -> None:
    t = make_tool(book_table)
    args = t.parse('{"restaurant": "Chez Nous", "guests": "4", '
                   '"address": {"street": "1 Rue", "zip_code": "75001"}}')
    assert args["guests"] == 4 and args["when"] == "tonight"
    assert args["address"] == Address(street="1 Rue", zip_code="75001")
    with pytest.raises(ValidationError):
        t.parse('{"restaurant": "x"}')                       # guests missing
    with pytest.raises(ValidationError):
        t.parse('{"restaurant": "x", "guests": 2, "colour": "red"}')   # unknown argument
    with pytest.raises(ValueError):
        t.parse("[1, 2]")
    with pytest.raises(ValueError):
        t.parse("{not json")


@pytest.mark.parametrize("raw", ['{"x": NaN}', '{"x": Infinity}', '{"x": [1, -Infinity]}'])
def test_a_model_s_nan_or_infinity_argument_is_refused_as_not_json(raw: str) -> None:
    """Python's parser takes ``NaN``/``Infinity`` (a lenient server passes a model's through),
    and ``x: float`` took them too: the tool ran on a value no caller means (a NaN compares false
    with everything). Refused, named, so the model can send a number or null."""
    def scale(x: float | list[float]) -> float:
        """Scale a number."""
        return 0.0

    t = make_tool(scale)
    constant = re.search(r"-?(NaN|Infinity)", raw)
    assert constant is not None
    with pytest.raises(ValueError, match=f"{constant.group(0)} is not a JSON value"):
        t.parse(raw)
    assert t.parse('{"x": 1e308}') == {"x": 1e308}


def test_decorator_forms_keep_the_function_callable() -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    @tool(name="lookup-user", description="Find a user.", needs_approval=True, timeout_s=2)
    async def find(user_id: int) -> dict[str, int]:
        return {"id": user_id}

    assert ping() == "pong" and ping.parameters["properties"] == {}
    assert (find.name, find.description, find.needs_approval, find.timeout_s) == (
        "lookup-user", "Find a user.", True, 2)
    assert find.is_async and not ping.is_async
    assert asyncio.run(find(user_id=3)) == {"id": 3}


@pytest.mark.parametrize("fn, reason", [
    (lambda *args: None, "name"),
    ("not callable", "must be a function"),
])
def test_bad_definitions_are_refused_with_the_reason(fn: object, reason: str) -> None:
    with pytest.raises(ToolDefinitionError, match=reason):
        make_tool(fn)  # type: ignore[arg-type]


def test_unschemable_hints_are_refused() -> None:
    def raw(sock: threading_lock_type) -> None: ...  # type: ignore[valid-type]  # noqa: F821

    with pytest.raises(ToolDefinitionError,
                       match=r"parameter 'sock': its type hint 'threading_lock_type' names nothing"):
        make_tool(raw)


def test_options_given_with_a_tool_already_made_apply_to_it() -> None:
    """``registry.add(tool, name=...)`` and ``make_tool(tool, timeout_s=...)`` returned the tool
    as it was, the options dropped in silence: two instances' ``search`` could not be told apart
    by a name (the second add was "already registered"), and an approval asked for was not."""
    class Notes:
        @tool(timeout_s=5)
        def search(self, query: str) -> str:
            """Search the notes."""
            return query

    reg = ToolRegistry()
    reg.add(Notes().search)
    with pytest.raises(ToolDefinitionError, match=r"already registered; give .* name="):
        reg.add(Notes().search)
    work = reg.add(Notes().search, name="search_work", needs_approval=True)
    assert reg.names == ("search", "search_work")
    assert (work.name, work.needs_approval, work.timeout_s) == ("search_work", True, 5)
    assert work(**work.parse('{"query": "q"}')) == "q"
    kept = make_tool(work, description="Search the work notes.", timeout_s=1)
    assert (kept.name, kept.description, kept.needs_approval, kept.timeout_s) == (
        "search_work", "Search the work notes.", True, 1)
    assert make_tool(work) is work
    with pytest.raises(ToolDefinitionError, match="tool name 'a b'"):
        make_tool(work, name="a b")


def test_a_tool_s_timeout_can_be_cleared_and_is_kept_when_not_given() -> None:
    """``make_tool(tool, timeout_s=None)`` kept the timeout (None meant "keep"), so a tool made
    with one could never run without it. None is "no timeout", as in ``@tool``; an option not
    given keeps the tool's (``KEEP``, the default)."""
    from hermes_core.agent.tools.schema import KEEP

    @tool(timeout_s=5, needs_approval=True)
    def fetch(url: str) -> str:
        """Fetch a page."""
        return url

    assert make_tool(fetch, timeout_s=None).timeout_s is None
    assert make_tool(fetch, name="fetch_slow").timeout_s == 5
    assert make_tool(fetch, timeout_s=KEEP, needs_approval=None) is fetch
    assert ToolRegistry().add(fetch, timeout_s=None).timeout_s is None
    assert make_tool(lambda: 1, name="plain", timeout_s=KEEP).timeout_s is None


def test_stacked_tool_decorators_keep_what_the_inner_one_set() -> None:
    """``@tool(name=...)`` over ``@tool(needs_approval=True)`` dropped the approval: the outer
    decorator's own defaults (False, None) were passed as options given."""
    @tool(name="wipe_disk")
    @tool(needs_approval=True, timeout_s=5)
    def wipe() -> str:
        """Wipe the disk."""
        return "wiped"

    assert (wipe.name, wipe.needs_approval, wipe.timeout_s) == ("wipe_disk", True, 5)

    @tool(timeout_s=None)
    @tool(timeout_s=5)
    def slow() -> str:
        """Slow."""
        return "done"

    assert slow.timeout_s is None


def test_parameters_named_like_pydantic_attributes_are_ordinary_parameters() -> None:
    """``schema``, ``json``, ``copy``, ``validate`` (a database tool's natural names) shadowed
    BaseModel's attributes: a UserWarning at definition, so an error under ``-W error``; and
    ``model_config`` or ``_table`` could not be a parameter at all ("'FieldInfo' object is not
    iterable")."""
    import warnings

    def query(schema: str, json: bool = False, copy: int = 1, validate: str = "strict",
              model_config: str = "", _table: str = "t") -> str:
        """Query a table.

        Args:
            schema: the database schema
        """
        return f"{schema}.{_table} {json} {copy} {validate} {model_config}"

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = make_tool(query)
    params = t.parameters
    assert list(params["properties"]) == ["schema", "json", "copy", "validate", "model_config",
                                          "_table"]
    assert params["required"] == ["schema"]
    assert params["properties"]["schema"]["description"] == "the database schema"
    args = t.parse('{"schema": "public", "json": true, "_table": "users"}')
    assert args == {"schema": "public", "json": True, "copy": 1, "validate": "strict",
                    "model_config": "", "_table": "users"}
    assert t.fn(**args) == "public.users True 1 strict "
    with pytest.raises(ValidationError) as info:
        t.parse('{"schema": "public", "copy": "many"}')
    assert info.value.errors()[0]["loc"] == ("copy",)
    with pytest.raises(ValidationError):
        t.parse('{"p_schema": "public"}')   # only the parameter's own name is accepted


def test_null_arguments_are_no_arguments_and_other_non_objects_are_named_in_json_terms() -> None:
    """Some OpenAI-compatible servers send ``null`` for a call without arguments: that is the
    empty object, and a required parameter is then reported missing by name."""
    def ping() -> str:
        """Ping."""
        return "pong"

    def echo(text: str) -> str:
        """Echo."""
        return text

    assert make_tool(ping).parse("null") == {}
    with pytest.raises(ValidationError, match="text"):
        make_tool(echo).parse("null")
    with pytest.raises(ValueError, match="not a JSON array"):
        make_tool(echo).parse('["hi"]')


def nights(count: Annotated[int, Field(ge=1, le=30, description="nights to stay")] = 2,
           room: Annotated[str, Field(max_length=8)] = "single") -> str:
    """Book nights.

    Args:
        count: overridden by the Field's own description
        room: the room type
    """
    return f"{count} {room}"


def test_annotated_constraints_reach_the_schema_and_are_enforced() -> None:
    """``Annotated[int, Field(ge=1)]`` is how pydantic users bound a parameter; reading the hints
    without their extras dropped the bound from the schema and from validation, so the function
    ran with a value its author had ruled out."""
    t = make_tool(nights)
    props = t.parameters["properties"]
    assert props["count"] == {"type": "integer", "minimum": 1, "maximum": 30, "default": 2,
                              "description": "nights to stay"}
    assert props["room"] == {"type": "string", "maxLength": 8, "default": "single",
                             "description": "the room type"}
    with pytest.raises(ValidationError) as info:
        t.parse('{"count": 0}')
    assert info.value.errors()[0]["loc"] == ("count",)
    assert t.parse('{"count": 3}') == {"count": 3, "room": "single"}


def rooms(kind: str = Field("double", description="bed size"),
          floor: int = Field(default_factory=lambda: 1)) -> str:
    """Rooms."""
    return f"{kind} {floor}"


def test_a_pydantic_field_as_default_gives_the_default_and_description() -> None:
    """``x: str = Field("a", description=...)`` (FastAPI's idiom) was refused: the FieldInfo was
    taken as the default value and is not JSON."""
    t = make_tool(rooms)
    props = t.parameters["properties"]
    assert props["kind"] == {"type": "string", "default": "double", "description": "bed size"}
    assert "floor" not in t.parameters.get("required", [])
    assert t.parse("{}") == {"kind": "double", "floor": 1}


def page(query: str, limit: int = None) -> str:  # type: ignore[assignment]  # noqa: RUF013
    """Search."""
    return f"{query} {limit}"


def test_a_none_default_admits_the_null_a_model_sends_for_it() -> None:
    """``limit: int = None`` is common; models send ``null`` for an optional argument they leave
    out, and the function takes None (its own default), so null is not an invalid argument."""
    t = make_tool(page)
    assert t.parse('{"query": "q", "limit": null}') == {"query": "q", "limit": None}
    assert {"type": "null"} in t.parameters["properties"]["limit"]["anyOf"]
    assert t.parse('{"query": "q", "limit": 5}')["limit"] == 5


class Forecast:
    """Forecast the weather."""

    def __call__(self, city: str, days: int = 1) -> str:
        return f"{city} {days}"


def weather(city: str, days: int, unit: str) -> str:
    """Weather in a city.

    Args:
        city: the city
    """
    return f"{city} {days} {unit}"


def test_a_partial_and_a_callable_object_are_tools() -> None:
    """A partial and an object with ``__call__`` are functions to their author; their hints were
    unreadable ("is not a module, class, method, or function") and their name was empty."""
    bound = make_tool(functools.partial(weather, unit="C"))
    assert bound.name == "weather" and bound.description.startswith("Weather in a city.")
    assert bound.parameters["properties"]["city"] == {"type": "string", "description": "the city"}
    assert bound.parameters["required"] == ["city", "days"]
    assert "unit" not in bound.parameters["properties"]   # the partial fixed it
    assert bound.fn(**bound.parse('{"city": "Oslo", "days": 2}')) == "Oslo 2 C"
    obj = make_tool(Forecast())
    assert (obj.name, obj.description) == ("Forecast", "Forecast the weather.")
    assert obj.parameters["properties"]["days"] == {"type": "integer", "default": 1}
    assert obj.fn(**obj.parse('{"city": "Oslo"}')) == "Oslo 1"


def test_each_read_of_the_schema_is_a_copy_the_reader_may_change() -> None:
    """Schemas are generated once per tool and kept: a caller editing what it read (a provider
    adapter adding a strict flag) must not change what the next turn sends."""
    t = make_tool(book_table)
    first = t.parameters
    first["properties"]["guests"]["minimum"] = 99
    first["required"].append("when")
    assert "minimum" not in t.parameters["properties"]["guests"]
    assert t.parameters["required"] == ["restaurant", "guests"]
    assert t.spec.parameters == t.parameters


def account(number: Annotated[str, Field(alias="Account Number")]) -> str:
    """Look up an account."""
    return number


@pytest.mark.parametrize("fn, key", [
    (lambda: make_tool(lambda 城市: 城市, name="where"), "城市"),
    (lambda: make_tool(account), "Account Number"),
])
def test_a_parameter_name_the_apis_refuse_is_a_definition_error(fn: Any, key: str) -> None:
    """Anthropic refuses the whole request (every turn, every tool) when one property name is not
    ``^[a-zA-Z0-9_.-]{1,64}$``; a Python identifier may be any letters. Refused where it is
    written, naming the parameter, instead of as a 400 on every turn."""
    with pytest.raises(ToolDefinitionError, match=key):
        fn()


def transfer(amount: float, to_account: Annotated[str, Field(alias="toAccount")]) -> str:
    """Transfer money."""
    return f"{amount} to {to_account}"


def test_an_alias_is_the_name_the_model_sees_and_the_function_gets_its_own_parameter() -> None:
    """Aliases in ``Annotated`` are read now; the function must still be called by its own
    parameter names, not the alias (``transfer(toAccount=...)`` is a TypeError)."""
    t = make_tool(transfer)
    assert list(t.parameters["properties"]) == ["amount", "toAccount"]
    args = t.parse('{"amount": 5, "toAccount": "DE89"}')
    assert args == {"amount": 5.0, "to_account": "DE89"}
    assert t.fn(**args) == "5.0 to DE89"


class Counter:
    """A service whose methods are its tools."""

    def __init__(self, start: int) -> None:
        self.total = start

    @tool(timeout_s=5)
    def add(self, amount: int) -> int:
        """Add to the running total.

        Args:
            amount: how much to add
        """
        self.total += amount
        return self.total


def test_a_method_decorated_as_a_tool_is_bound_to_the_instance_it_is_read_from() -> None:
    counter = Counter(10)
    bound = counter.add
    # ``self`` is the instance's, not an argument the model must (and cannot) fill in
    assert bound.parameters["required"] == ["amount"]
    assert "self" not in bound.parameters["properties"]
    assert (bound.name, bound.timeout_s, bound.description) == ("add", 5, "Add to the running total.")
    assert bound(**bound.parse('{"amount": 5}')) == 15 and counter.total == 15
    assert counter.add is bound   # bound once per instance, not rebuilt on every read
    assert Counter(0).add is not bound and Counter.add.name == "add"


class _Slotted:
    __slots__ = ("total",)

    def __init__(self) -> None:
        self.total = 0

    @tool
    def add(self, amount: int) -> int:
        """Add to the total."""
        self.total += amount
        return self.total


def test_every_instance_of_a_class_shares_its_method_tool_s_arguments_model() -> None:
    """The first read of a method tool on each instance built its arguments model afresh
    (~0.7 ms, and a pydantic class per instance kept alive), and an instance with ``__slots__``
    rebuilt it on every read: built once per class now, each instance's tool calling its own
    ``self``."""
    first, second = Counter(1), Counter(2)
    assert first.add.arguments is second.add.arguments is Counter(3).add.arguments
    assert (first.add(amount=1), second.add(amount=1)) == (2, 3)
    slotted = _Slotted()
    assert slotted.add.arguments is slotted.add.arguments is _Slotted().add.arguments
    assert slotted.add(**slotted.add.parse('{"amount": 4}')) == 4 and slotted.total == 4
    assert "self" not in slotted.add.parameters["properties"]


class _Catalog:
    prefix = "cat:"

    @tool
    @classmethod
    def find(cls, name: str) -> str:
        """Find an entry.

        Args:
            name: the entry's name
        """
        return cls.prefix + name

    @tool
    @staticmethod
    def normal(name: str) -> str:
        """Normalise a name."""
        return name.lower()


class _Shelf(_Catalog):
    prefix = "shelf:"


def test_tool_above_classmethod_or_staticmethod_is_the_class_s_tool_on_any_python() -> None:
    """``@tool`` over ``@classmethod`` was refused ("a tool must be a function, not
    classmethod"), and the other order works on 3.11 only by the descriptor chaining Python 3.13
    removed: now the tool binds its class (a subclass's own, as a classmethod does) and a static
    tool nothing, read from the class or an instance, without ``cls`` in the schema."""
    for found in (_Catalog.find, _Catalog().find):
        assert "cls" not in found.parameters["properties"]
        assert found.parameters["properties"]["name"]["description"] == "the entry's name"
        assert found(**found.parse('{"name": "x"}')) == "cat:x"
    assert _Shelf.find(name="y") == _Shelf().find(name="y") == "shelf:y"
    assert _Catalog.find.arguments is _Shelf().find.arguments   # built once
    for normal in (_Catalog.normal, _Catalog().normal):
        assert list(normal.parameters["properties"]) == ["name"]
        assert normal(**normal.parse('{"name": "ABC"}')) == "abc"


def test_a_type_pydantic_cannot_describe_is_refused_naming_its_parameter() -> None:
    def query(sql: str, conn: sqlite3.Connection) -> str: ...

    with pytest.raises(ToolDefinitionError, match=r"parameter 'conn' \(Connection\)") as info:
        make_tool(query)
    assert "\n" not in str(info.value)   # one line, not pydantic's page of advice


def test_a_non_finite_default_is_left_out_of_the_schema_and_said_in_its_description() -> None:
    """``math.inf`` as "no limit" is a natural default; in the schema it was a request body the
    SDKs refuse to write (``allow_nan=False``), every turn. A parameter named ``default`` is a
    property, not the keyword."""
    import json

    def nearby(place: str, radius_km: float = math.inf, default: float = -math.inf) -> str:
        """Places near a place.

        Args:
            place: where
            radius_km: how far to look
        """
        return place

    made = make_tool(nearby)
    props = made.parameters["properties"]
    json.dumps(made.parameters, allow_nan=False)
    assert props["radius_km"] == {"description": "how far to look (default: Infinity)",
                                  "type": "number"}
    assert props["default"] == {"description": "(default: -Infinity)", "type": "number"}
    assert made.parameters["required"] == ["place"]
    assert made.parse('{"place": "Oslo"}') == {"place": "Oslo", "radius_km": math.inf,
                                               "default": -math.inf}


def test_a_choice_no_model_can_send_as_json_is_refused_naming_the_tool_and_the_place() -> None:
    def pick(level: Literal[1.0, math.inf]) -> str:
        """Pick a level."""
        return str(level)

    with pytest.raises(ToolDefinitionError, match=r"tool 'pick': its schema holds NaN or "
                                                  r"infinity at properties\.level\.enum\[1\]"):
        make_tool(pick)


def test_two_parameters_answering_to_one_name_are_refused_naming_both() -> None:
    """An alias equal to another parameter's name was one property the schema listed as
    required twice, and no value could satisfy both types: no call could ever run."""
    def shadowed(a: Annotated[str, Field(alias="b")], b: int) -> None:
        """Shadowed."""

    with pytest.raises(ToolDefinitionError, match=re.escape(
            "tool 'shadowed': parameters 'a' and 'b' are both sent as 'b'")):
        make_tool(shadowed)


def test_a_decorator_that_hides_its_function_is_refused_saying_so() -> None:
    """``def wrapper(*args, **kwargs)`` with no types is what a decorator without
    ``functools.wraps`` leaves: described as written, the model would see an array and any names
    and the tool's real parameters never; the author is told, not handed that tool."""
    def logged(fn: typing.Callable[..., Any]) -> typing.Callable[..., Any]:
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            return fn(*args, **kwargs)
        return wrapper

    @logged
    def search(query: str) -> str:
        """Search."""
        return query

    with pytest.raises(ToolDefinitionError, match=re.escape(
            "tool 'wrapper': its only parameters are *args and **kwargs, without types")) as caught:
        make_tool(search)
    assert "functools.wraps" in str(caught.value)

    def typed(*args: str, **kwargs: int) -> str:
        """Typed on purpose: described as an array and further names."""
        return ""

    assert make_tool(typed).parameters["additionalProperties"] == {"type": "integer"}


_UNSET: Any = object()


def test_a_sentinel_default_is_left_out_of_the_schema_without_a_warning() -> None:
    """``limit: Any = _UNSET`` (the sentinel idiom) has no JSON form: pydantic warned at its
    own line on every definition, and under ``-W error`` (a strict test suite) the tool was a
    definition error blaming the parameter's type. The model cannot be told the sentinel: the
    parameter is optional, and the function gets its own default when the model leaves it out."""
    def find(query: str, limit: Any = _UNSET) -> str:
        """Find."""
        return "all" if limit is _UNSET else str(limit)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = make_tool(find)
    assert t.parameters["required"] == ["query"] and "default" not in t.parameters["properties"]["limit"]
    assert t.fn(**t.parse('{"query": "q"}')) == "all"
    assert t.fn(**t.parse('{"query": "q", "limit": 3}')) == "3"


@pytest.mark.parametrize("kind", KINDS)
def test_tools_with_positional_only_star_and_double_star_parameters_round_trip_the_wire(
        kind: str, empty_home: Path, respx_mock: Any) -> None:
    """Each was refused at definition: through each SDK their schemas are offered (the array
    under its own name, further names typed in ``additionalProperties``) and the model's
    calls run as Python calls them."""
    def lookup(query: str, /, limit: int = 2) -> str:
        """Look something up."""
        return f"{query}:{limit}"

    def concat(sep: str, *paths: str) -> str:
        """Join paths."""
        return sep.join(paths)

    def tag(item: str, **labels: int) -> dict[str, Any]:
        """Tag an item."""
        return {"item": item, "labels": labels}

    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, False, calls=(
            ToolCall("c1", "lookup", '{"query": "oslo"}'),
            ToolCall("c2", "concat", '{"sep": "/", "paths": ["a", "b"]}'),
            ToolCall("c3", "tag", '{"item": "x", "red": 2, "blue": "3"}'),
            ToolCall("c4", "tag", '{"item": "x", "red": "very"}'))),
        wire_response(kind, False, "done")])
    reply = make_agent(empty_home, kind, tools=[lookup, concat, tag]).chat("go")
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in
               request_json(route, 0)["tools"]} if kind == "openai" else {
        t["name"]: t["input_schema"] for t in request_json(route, 0)["tools"]}
    assert offered["lookup"]["required"] == ["query"]
    assert offered["concat"]["properties"]["paths"] == {"type": "array",
                                                        "items": {"type": "string"}}
    assert offered["tag"]["additionalProperties"] == {"type": "integer"}
    answers = dict(tool_answers(kind, request_json(route, 1)))
    assert answers["c1"] == "oslo:2" and answers["c2"] == "a/b"
    assert json.loads(answers["c3"]) == {"item": "x", "labels": {"red": 2, "blue": 3}}
    assert answers["c4"].startswith("error: invalid arguments for tag: red:")
    assert [r.status for r in reply.tool_results] == ["ok", "ok", "ok", "invalid"]


class Paging(typing_extensions.TypedDict):
    limit: int
    cursor: typing_extensions.NotRequired[str]


@pytest.mark.parametrize("kind", KINDS)
def test_a_tool_taking_an_unpacked_typed_dict_round_trips_the_wire(
        kind: str, empty_home: Path, respx_mock: Any) -> None:
    """``**opts: Unpack[Paging]`` was refused: through each SDK its keys are offered as
    properties and the call gets the keys the model sent, a missing required key its error."""
    def rows(table: str, **opts: typing_extensions.Unpack[Paging]) -> dict[str, Any]:
        """Page through a table."""
        return {"table": table, **opts}

    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, False, calls=(
            ToolCall("c1", "rows", '{"table": "t", "limit": 5}'),
            ToolCall("c2", "rows", '{"table": "t", "limit": 5, "cursor": "c9"}'),
            ToolCall("c3", "rows", '{"table": "t"}'))),
        wire_response(kind, False, "done")])
    reply = make_agent(empty_home, kind, tools=[rows]).chat("go")
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in
               request_json(route, 0)["tools"]} if kind == "openai" else {
        t["name"]: t["input_schema"] for t in request_json(route, 0)["tools"]}
    assert offered["rows"]["properties"] == {"table": {"type": "string"},
                                             "limit": {"type": "integer"},
                                             "cursor": {"type": "string"}}
    assert offered["rows"]["required"] == ["table", "limit"]
    answers = dict(tool_answers(kind, request_json(route, 1)))
    assert json.loads(answers["c1"]) == {"table": "t", "limit": 5}
    assert json.loads(answers["c2"]) == {"table": "t", "limit": 5, "cursor": "c9"}
    assert answers["c3"] == "error: invalid arguments for rows: limit: Field required"
    assert [r.status for r in reply.tool_results] == ["ok", "ok", "invalid"]


class Folder(typing.TypedDict):
    """A folder and the folders inside it."""

    name: str
    children: list[Folder]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_tool_taking_a_tree_is_offered_with_a_self_reference_and_called_with_one(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A tool taking a self-referencing ``typing.TypedDict`` goes on the wire with a schema that
    refers to its own definition, and a nested call reaches the function as nested dicts."""
    seen: list[Any] = []

    def count_folders(root: Folder) -> int:
        """Count the folders in a tree."""
        seen.append(root)
        return 1 + sum(count_folders(c) for c in root["children"])

    tree = {"name": "a", "children": [{"name": "b", "children": [{"name": "c", "children": []}]}]}
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, mode == "stream", "",
                      (ToolCall("t1", "count_folders", json.dumps({"root": tree})),)),
        wire_response(kind, mode == "stream", "Three folders.")])
    agent = make_agent(empty_home, kind, tools=[count_folders])
    reply = run_turn(agent, mode, "how many folders?")

    assert reply.text == "Three folders."
    assert seen[0] == tree
    assert tool_answers(kind, request_json(route, 1)) == [("t1", "3")]
    (offered,) = request_json(route, 0)["tools"]
    schema = offered["function"]["parameters"] if kind == "openai" else offered["input_schema"]
    assert schema["properties"]["root"] == {"$ref": "#/$defs/Folder"}
    assert schema["$defs"]["Folder"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Folder"}


class LatLon(typing.NamedTuple):
    lat: float
    lon: float


@pytest.mark.parametrize("kind", KINDS)
def test_a_fixed_tuple_parameter_is_offered_with_items_so_openai_takes_the_request(
        kind: str, empty_home: Path, respx_mock: Any) -> None:
    """Pydantic writes ``tuple[float, float]`` (and a NamedTuple) as ``prefixItems`` alone, and
    OpenAI refuses an array with no ``items``: every request offering the tool was a 400, in
    every turn, whatever the model was asked. The schema keeps the exact positions
    (``prefixItems``, the lengths, for Anthropic and any reader of JSON Schema) and says what
    any item may be; the call still reaches the function as tuples."""
    seen: list[Any] = []

    def route_between(start: tuple[float, float], stops: list[tuple[str, int]],
                      end: LatLon | None = None) -> str:
        """Plan a route."""
        seen.append((start, stops, end))
        return "planned"

    calls = (ToolCall("c1", "route_between", json.dumps(
        {"start": [59.9, 10.7], "stops": [["Drammen", 20]], "end": [60.4, 5.3]})),)
    replies = (wire_response(kind, False, calls=calls), wire_response(kind, False, "done"))
    route = respx_mock.post(URLS[kind]).mock(
        side_effect=openai_schema_check(*replies) if kind == "openai" else list(replies))
    reply = make_agent(empty_home, kind, tools=[route_between]).chat("go")

    assert reply.text == "done"
    assert seen == [((59.9, 10.7), [("Drammen", 20)], LatLon(60.4, 5.3))]
    (offered,) = request_json(route, 0)["tools"]
    schema = offered["function"]["parameters"] if kind == "openai" else offered["input_schema"]
    assert arrays_without_items(schema) == []
    start = schema["properties"]["start"]
    assert start["prefixItems"] == [{"type": "number"}, {"type": "number"}]
    assert (start["minItems"], start["maxItems"], start["items"]) == (2, 2, {"type": "number"})
    assert schema["properties"]["stops"]["items"]["items"] == {
        "anyOf": [{"type": "string"}, {"type": "integer"}]}
