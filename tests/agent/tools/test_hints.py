"""A tool function's hints read where it can see its names (tools/hints.py): a class local to a
function through the closure or ``localns=``, an error naming the tool, the parameter and the
fix, a return hint that cannot be read left out."""

from __future__ import annotations

import typing

import pytest
from pydantic import BaseModel

from hermes_core.agent.tools.schema import ToolDefinitionError, make_tool, tool


def test_a_class_local_to_a_function_is_an_error_naming_the_tool_the_parameter_and_the_fix() -> None:
    """Under ``from __future__ import annotations`` a hint is text, looked up in the module's
    names, where a class defined inside a function is not: the error was the bare NameError's
    words ("name 'Leg' is not defined"), naming no parameter and no way out."""
    class Leg(BaseModel):
        city: str

    def plan(days: int, leg: Leg) -> str:
        """Plan a leg."""
        return str(days)

    with pytest.raises(ToolDefinitionError) as caught:
        make_tool(plan)
    message = str(caught.value)
    assert message.startswith("tool 'plan': parameter 'leg': its type hint 'Leg' names nothing")
    assert "define Leg at module level" in message
    assert "localns={'Leg': Leg}" in message


def test_a_local_class_passed_as_localns_is_resolved_for_functions_and_methods() -> None:
    class Leg(BaseModel):
        city: str

    def plan(leg: Leg) -> str:
        """Plan a leg."""
        return leg.city

    t = make_tool(plan, localns={"Leg": Leg})
    assert t.parameters["properties"]["leg"] == {"$ref": "#/$defs/Leg"}
    assert t.fn(**t.parse('{"leg": {"city": "Oslo"}}')) == "Oslo"

    class Planner:
        @tool(localns={"Leg": Leg})
        def plan(self, leg: Leg) -> str:
            """Plan a leg."""
            return leg.city.upper()

    bound = Planner().plan
    assert bound.parameters["$defs"]["Leg"]["required"] == ["city"]
    assert bound.invoke(bound.parse('{"leg": {"city": "Oslo"}}')) == "OSLO"


def test_a_local_class_the_function_refers_to_is_found_through_its_closure() -> None:
    class Leg(BaseModel):
        city: str

    def plan(leg: Leg) -> str:
        """Plan a leg."""
        return Leg.model_validate(leg).city

    t = make_tool(plan)
    assert t.fn(**t.parse('{"leg": {"city": "Oslo"}}')) == "Oslo"


def test_a_return_hint_that_cannot_be_resolved_does_not_stop_the_tool() -> None:
    """The return hint is no part of the schema: a local class named only there is no reason to
    refuse the tool."""
    class Receipt(BaseModel):
        total: int

    def pay(amount: int) -> Receipt:
        """Pay an amount."""
        return Receipt(total=amount)

    t = make_tool(pay)
    assert t.parameters["properties"]["amount"]["type"] == "integer"


def test_a_hint_that_names_a_secret_is_refused_without_the_secret() -> None:
    """``token: GITHUB_TOKEN`` written for ``token: str = GITHUB_TOKEN``: the hint is read as the
    key's own text, a name nothing defines, and the error quoted that name three times (the
    NameError's words and the ``localns=`` fix)."""
    github_token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2

    def fetch(url: str, token: github_token) -> str:  # type: ignore[valid-type]
        """Fetch a page."""
        return url + github_token

    with pytest.raises(ToolDefinitionError) as caught:
        make_tool(fetch)
    message = str(caught.value)
    assert message.startswith("tool 'fetch': parameter 'token': its type hint 'github_token'")
    assert "ghp_A1b2" not in message


class Item(typing.TypedDict):
    sku: str


class Order(typing.TypedDict):
    item: Item


def test_a_local_typed_dict_s_keys_are_read_with_the_tool_s_names_too() -> None:
    """A TypedDict defined in a function, naming itself or another local class: the tool's hint
    was found through ``localns`` (or the closure) but the class's own keys were read in the
    module alone, and ``make_tool`` raised a bare NameError ("name 'Stop' is not defined") on
    Python 3.11, with ``localns`` given as the error had advised."""
    class Stop(typing.TypedDict):
        city: str

    class Leg(typing.TypedDict):
        stop: Stop
        next: Leg | None

    def plan(leg: Leg) -> str:
        """Plan a leg."""
        return str(leg["stop"]["city"])

    def closed(leg: Leg) -> str:
        """Plan a leg."""
        return str((Leg, Stop, leg)[2]["stop"]["city"])

    for t in (make_tool(plan, localns={"Leg": Leg, "Stop": Stop}), make_tool(closed)):
        defs = t.parameters["$defs"]
        assert t.parameters["properties"]["leg"] == {"$ref": "#/$defs/Leg"}
        assert defs["Leg"]["properties"]["stop"] == {"$ref": "#/$defs/Stop"}
        assert defs["Leg"]["properties"]["next"]["anyOf"][0] == {"$ref": "#/$defs/Leg"}
        sent = '{"leg": {"stop": {"city": "Oslo"}, "next": {"stop": {"city": "Rome"}, "next": null}}}'
        assert t.fn(**t.parse(sent)) == "Oslo"


def test_a_typed_dict_s_keys_name_its_module_s_classes_whatever_the_tool_s_localns() -> None:
    """``localns`` names what the tool's hints mean; a module-level TypedDict among them still
    reads its keys in its own module (its ``Item``, not the local one of the same name)."""
    class Item(typing.TypedDict):   # the shadowing is the point
        count: int

    def buy(order: Order, extra: Item) -> str:
        """Buy an order."""
        return str(order)

    t = make_tool(buy, localns={"Item": Item})
    defs = t.parameters["$defs"]
    order = defs[t.parameters["properties"]["order"]["$ref"].rsplit("/", 1)[1]]
    item = defs[order["properties"]["item"]["$ref"].rsplit("/", 1)[1]]
    extra = defs[t.parameters["properties"]["extra"]["$ref"].rsplit("/", 1)[1]]
    assert item["required"] == ["sku"] and extra["required"] == ["count"]


def test_a_typed_dict_naming_what_nothing_defines_is_an_error_naming_the_parameter() -> None:
    class Hop(typing.TypedDict):
        via: Nowhere  # type: ignore[name-defined]  # noqa: F821

    def route(hop: Hop) -> str:
        """Route a hop."""
        return str(hop)

    with pytest.raises(ToolDefinitionError,
                       match=r"^tool 'route': parameter 'hop': .*'Nowhere' is not defined"):
        make_tool(route, localns={"Hop": Hop})
