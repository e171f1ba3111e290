"""typing.TypedDict classes rebuilt for pydantic on Python 3.11 (tools/typed_dicts.py): read as the
typing_extensions TypedDict they spell (keys, totality, generics, classes naming themselves or each
other), and what one thread is half-way through building is never handed to another."""

from __future__ import annotations

import dataclasses
import gc
import sys
import threading
import typing
import weakref
from typing import Any

import pytest
import typing_extensions
from pydantic import BaseModel, ValidationError

from hermes_core.agent.tools import typed_dicts
from hermes_core.agent.tools.schema import ToolDefinitionError, make_tool

_OLD = pytest.mark.skipif(sys.version_info >= (3, 12),
                          reason="from 3.12 a typing.TypedDict goes to pydantic as it is: no rebuild")


class Folder(typing.TypedDict):
    name: str
    children: list[Folder]


class _Watched:
    """The module's lock, telling when a thread other than the builder comes to take it."""

    def __init__(self, inner: Any, builder: list[int], arrived: threading.Event) -> None:
        self._inner, self._builder, self._arrived = inner, builder, arrived

    def __enter__(self) -> Any:
        if self._builder and threading.get_ident() != self._builder[0]:
            self._arrived.set()
        return self._inner.__enter__()

    def __exit__(self, *exc: object) -> Any:
        return self._inner.__exit__(*exc)


@_OLD
def test_a_class_another_thread_is_building_is_handed_out_only_once_built(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two tools defined at once in two threads over one self-naming TypedDict: the second
    waits for the first's build, and both get the whole class (a class half-way built has no
    keys yet: its schema would be an empty object)."""
    builder: list[int] = []
    inside, arrived = threading.Event(), threading.Event()
    read_keys = typed_dicts._key_hints

    def slow_keys(cls: Any) -> dict[str, Any]:
        if threading.get_ident() == builder[0] and not inside.is_set():
            inside.set()
            assert arrived.wait(30), "the second thread never came to the lock"
        return read_keys(cls)

    monkeypatch.setattr(typed_dicts, "_key_hints", slow_keys)
    monkeypatch.setattr(typed_dicts, "_LOCK", _Watched(typed_dicts._LOCK, builder, arrived))
    got: dict[str, Any] = {}

    def first() -> None:
        builder.append(threading.get_ident())
        got["first"] = typed_dicts.portable(list[Folder])

    one = threading.Thread(target=first)
    one.start()
    assert inside.wait(30), "the first thread never started building"
    def second() -> None:
        got["second"] = typed_dicts.portable(Folder)
        got["second_keys"] = set(got["second"].__annotations__)   # as it was handed out

    two = threading.Thread(target=second)
    two.start()
    one.join(30)
    two.join(30)
    built = typing.get_args(got["first"])[0]
    assert got["second"] is built
    assert got["second_keys"] == set(built.__annotations__) == {"name", "children"}


class BrokenRoute(typing.TypedDict):
    hop: Hop
    toll: Toll


class Hop(typing.TypedDict):
    route: BrokenRoute | None


class Toll(typing.TypedDict):
    amount: Unknown  # type: ignore[name-defined]  # noqa: F821


@_OLD
def test_a_build_that_failed_leaves_no_class_naming_its_half_built_one() -> None:
    """BrokenRoute's build made Hop (naming the BrokenRoute being made) and then failed on Toll's key: Hop
    was kept, naming a BrokenRoute with no keys, and a later tool over Hop had a schema whose route
    was any object, without an error."""
    def plan(route: BrokenRoute) -> str:
        """Plan a route."""
        return str(route)

    def step(hop: Hop) -> str:
        """Take a hop."""
        return str(hop)

    with pytest.raises(ToolDefinitionError, match="'Unknown' is not defined"):
        make_tool(plan)
    with pytest.raises(ToolDefinitionError, match="'Unknown' is not defined"):
        make_tool(step)


@_OLD
def test_a_local_class_rebuilt_is_not_kept_once_its_tool_is_gone() -> None:
    """A factory defining its tool's TypedDict on each call (one per session): each class was
    kept by the rebuild's cache for the life of the process."""
    def session() -> weakref.ref[Any]:
        class Leg(typing.TypedDict):
            city: str
            next: Leg | None

        def plan(leg: Leg) -> str:
            """Plan a leg."""
            return str(Leg)

        make_tool(plan).parse('{"leg": {"city": "Oslo", "next": null}}')
        return weakref.ref(Leg)

    made = [session() for _ in range(3)]
    gc.collect()
    assert [r() for r in made] == [None, None, None]


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


_V = typing.TypeVar("_V")


class Page(typing.TypedDict, typing.Generic[_V]):
    """One page of results."""

    items: list[_V]
    cursor: typing_extensions.NotRequired[str]


class Branch(typing.TypedDict, total=False):
    """One side of a pair of classes that name each other."""

    leaf: typing.Required[Leaf]
    label: str


class Leaf(typing.TypedDict):
    grows: list[Branch]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="portable takes no lock from 3.12 on")
def test_a_child_forked_while_a_thread_was_rebuilding_a_typed_dict_rebuilds(
        in_forked_child: Any, held_by_a_thread: Any) -> None:
    class Point(typing.TypedDict):
        x: int

    with held_by_a_thread(typed_dicts._LOCK):
        assert in_forked_child(lambda: typing_extensions.is_typeddict(typed_dicts.portable(Point))) is True
