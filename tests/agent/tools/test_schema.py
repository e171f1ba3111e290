"""A function becomes a tool: schema from hints and docstrings, validation, bad definitions."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
import re
import sqlite3
import typing
import warnings
from typing import Annotated, Any, Literal

import pytest
import typing_extensions
from pydantic import BaseModel, Field, ValidationError

from hermes_core.agent.tools.registry import ToolRegistry
from hermes_core.agent.tools.schema import ToolDefinitionError, make_tool, tool


class Address(BaseModel):
    street: str
    zip_code: str


def book_table(restaurant: str, guests: int, when: str = "tonight",
               seating: Literal["inside", "terrace"] = "inside",
               address: Address | None = None) -> str:
    """Book a table at a restaurant.

    Say which restaurant and for how many.

    Args:
        restaurant: the restaurant's name
        guests: how many people
        when: day and time, free text
        seating: where to sit
        address: where the restaurant is, when the name is ambiguous
    """
    return f"{restaurant} for {guests}"


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


def test_sphinx_docstring_params_are_read() -> None:
    def convert(amount: float, currency: str) -> str:
        """Convert money.

        :param amount: how much
        :param currency: ISO code, e.g. EUR
        """
        return ""

    props = make_tool(convert).parameters["properties"]
    assert props["amount"]["description"] == "how much"
    assert props["currency"]["description"] == "ISO code, e.g. EUR"


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


def test_registry_refuses_duplicates_and_reserved_names() -> None:
    def skill_view(name: str) -> str:
        return name

    reg = ToolRegistry([book_table])
    with pytest.raises(ToolDefinitionError, match="already registered"):
        reg.add(book_table)
    with pytest.raises(ToolDefinitionError, match="reserved"):
        reg.add(skill_view)
    assert reg.names == ("book_table",) and "book_table" in reg and len(reg) == 1


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


def test_an_output_model_with_a_field_name_the_apis_refuse_is_refused_naming_it() -> None:
    from hermes_core.agent.tools.structured import response_format

    class Statement(BaseModel):
        number: str = Field(alias="Account Number")

    with pytest.raises(TypeError, match="Account Number"):
        response_format(Statement)


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


class Window(typing_extensions.TypedDict):
    start: str
    end: typing_extensions.NotRequired[str]


class PlainWindow(typing.TypedDict):
    start: str


def test_typed_dict_parameters_are_described_and_validated() -> None:
    """A TypedDict, ``typing_extensions``' or ``typing``'s, is an object schema."""
    def book(window: Window) -> str:
        """Book."""
        return window["start"]

    t = make_tool(book)
    assert t.parameters["$defs"]["Window"]["required"] == ["start"]
    assert t.parse('{"window": {"start": "9:00"}}') == {"window": {"start": "9:00"}}
    with pytest.raises(ValidationError):
        t.parse('{"window": {"end": "10:00"}}')

    def plain(window: PlainWindow) -> str:
        """Plain."""
        return window["start"]

    assert make_tool(plain).parse('{"window": {"start": "9"}}') == {"window": {"start": "9"}}


class Stop(typing.TypedDict, total=False):
    """A stop on the way."""

    city: typing.Required[str]
    nights: int


class Route(typing.TypedDict):
    start: PlainWindow
    stops: list[Stop]


def test_a_typing_typed_dict_is_a_parameter_type_as_on_python_3_12() -> None:
    """``from typing import TypedDict`` is what an author writes: on Python 3.11 pydantic refuses
    it, and a tool taking one (or a list of them, or one nested in another) was a definition
    error, though ``**kw: Unpack[`` the same class ``]`` worked. Each is now read as the
    ``typing_extensions`` TypedDict it spells, its keys, totality and docstring kept."""
    def plan(route: Route, extra: Stop | None = None) -> str:
        """Plan a route."""
        return route["start"]["start"]

    t = make_tool(plan)
    defs = t.parameters["$defs"]
    assert defs["Stop"]["required"] == ["city"] and defs["Stop"]["description"] == "A stop on the way."
    assert set(defs["Route"]["required"]) == {"start", "stops"}
    args = t.parse('{"route": {"start": {"start": "9"}, "stops": [{"city": "Oslo"}]}}')
    assert args["route"] == {"start": {"start": "9"}, "stops": [{"city": "Oslo"}]}
    assert t.fn(**args) == "9"
    with pytest.raises(ValidationError):
        t.parse('{"route": {"start": {"start": "9"}, "stops": [{"nights": 2}]}}')



_V = typing.TypeVar("_V")


class Page(typing.TypedDict, typing.Generic[_V]):
    """One page of results."""

    items: list[_V]
    cursor: typing_extensions.NotRequired[str]


def test_a_generic_typing_typed_dict_given_its_parameter_is_a_parameter_type() -> None:
    """``Page[int]`` (a generic TypedDict, Python 3.11's own) was left as it stood and the tool
    was a definition error telling the author to change the import, where the plain ``Page``
    was rebuilt; its parameter is now put in wherever the class's keys name it."""
    def total(page: Page[int]) -> int:
        """Add a page up."""
        return sum(page["items"])

    t = make_tool(total)
    (spec,) = t.parameters["$defs"].values()
    assert spec["properties"]["items"] == {"items": {"type": "integer"}, "title": "Items", "type": "array"}
    assert spec["required"] == ["items"] and spec["description"] == "One page of results."
    assert t.fn(**t.parse('{"page": {"items": [1, 2]}}')) == 3
    with pytest.raises(ValidationError):
        t.parse('{"page": {"items": ["one"]}}')


class Node(typing.TypedDict):
    """A folder and the folders inside it."""

    name: str
    children: list[Node]


class Branch(typing.TypedDict, total=False):
    """One side of a pair of classes that name each other."""

    leaf: typing.Required[Leaf]
    label: str


class Leaf(typing.TypedDict):
    grows: list[Branch]


class ModelNode(BaseModel):
    name: str
    children: list[ModelNode] = []


@dataclasses.dataclass
class DataNode:
    name: str
    children: list[DataNode] = dataclasses.field(default_factory=list)


class ExtNode(typing_extensions.TypedDict):
    name: str
    children: list[ExtNode]


_TREE = '{"root": {"name": "a", "children": [{"name": "b", "children": []}]}}'


def _node_ref(t: Any, cls: str) -> dict[str, Any]:
    """The schema's one definition of ``cls``, after checking the parameter refers to it."""
    assert t.parameters["properties"]["root"] == {"$ref": f"#/$defs/{cls}"}
    spec: dict[str, Any] = t.parameters["$defs"][cls]
    assert spec["properties"]["children"]["items"] == {"$ref": f"#/$defs/{cls}"}
    return spec


def test_a_typing_typed_dict_that_names_itself_is_a_schema_with_a_reference() -> None:
    """``class Node(TypedDict): children: list[Node]`` (a tree, a thread of replies) was a
    definition error on Python 3.11: the rebuild left the inner ``Node`` as ``typing``'s, which
    pydantic refuses. The rebuilt class now names itself, so the schema is one definition
    referring to itself, as pydantic writes any recursive type."""
    def count(root: Node) -> int:
        """Count the folders in a tree."""
        return 1 + sum(count(c) for c in root["children"])

    t = make_tool(count)
    spec = _node_ref(t, "Node")
    assert spec["required"] == ["name", "children"]
    assert spec["description"] == "A folder and the folders inside it."
    args = t.parse(_TREE)
    assert args == {"root": {"name": "a", "children": [{"name": "b", "children": []}]}}
    assert t.fn(**args) == 2
    with pytest.raises(ValidationError):
        t.parse('{"root": {"name": "a", "children": [{"name": 1, "children": []}]}}')


def test_typing_typed_dicts_that_name_each_other_are_schemas_with_references() -> None:
    def walk(start: Branch) -> str:
        """Walk a branch."""
        return start["leaf"]["grows"][0]["leaf"]["grows"][0]["label"] if start else ""

    t = make_tool(walk)
    defs = t.parameters["$defs"]
    assert defs["Branch"]["properties"]["leaf"] == {"$ref": "#/$defs/Leaf"}
    assert defs["Branch"]["required"] == ["leaf"]
    assert defs["Leaf"]["properties"]["grows"]["items"] == {"$ref": "#/$defs/Branch"}
    sent = '{"start": {"leaf": {"grows": [{"leaf": {"grows": [{"leaf": {"grows": []}, "label": "x"}]}}]}}}'
    assert t.fn(**t.parse(sent)) == "x"


@pytest.mark.parametrize(("cls", "own"), [(ModelNode, "ModelNode"), (DataNode, "DataNode"),
                                          (ExtNode, "ExtNode")])
def test_a_model_dataclass_or_typed_dict_that_names_itself_is_a_schema_with_a_reference(
        cls: Any, own: str) -> None:
    def count(root: Any) -> Any:
        """Count the folders in a tree."""
        return root

    count.__annotations__ = {"root": cls, "return": Any}
    t = make_tool(count)
    spec = _node_ref(t, own)
    assert spec["required"][0] == "name"
    root = t.fn(**t.parse(_TREE))
    kids = root["children"] if isinstance(root, dict) else root.children
    assert len(kids) == 1


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
    import warnings

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
    for bad, field in (('{"table": "t"}', "limit"),
                       ('{"table": "t", "limit": 5, "cursor": null}', "cursor"),
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


def test_two_parameters_answering_to_one_name_are_refused_naming_both() -> None:
    """An alias equal to another parameter's name was one property the schema listed as
    required twice, and no value could satisfy both types: no call could ever run."""
    def shadowed(a: Annotated[str, Field(alias="b")], b: int) -> None:
        """Shadowed."""

    with pytest.raises(ToolDefinitionError, match=re.escape(
            "tool 'shadowed': parameters 'a' and 'b' are both sent as 'b'")):
        make_tool(shadowed)


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
