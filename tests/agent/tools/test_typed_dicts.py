"""typing.TypedDict classes rebuilt for pydantic on Python 3.11 (tools/typed_dicts.py): what one
thread is half-way through building is never handed to another."""

from __future__ import annotations

import gc
import sys
import threading
import typing
import weakref
from typing import Any

import pytest

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


class Route(typing.TypedDict):
    hop: Hop
    toll: Toll


class Hop(typing.TypedDict):
    route: Route | None


class Toll(typing.TypedDict):
    amount: Unknown  # type: ignore[name-defined]  # noqa: F821


@_OLD
def test_a_build_that_failed_leaves_no_class_naming_its_half_built_one() -> None:
    """Route's build made Hop (naming the Route being made) and then failed on Toll's key: Hop
    was kept, naming a Route with no keys, and a later tool over Hop had a schema whose route
    was any object, without an error."""
    def plan(route: Route) -> str:
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
