"""What a tool's schema keeps alive: a tool made per request or per session and dropped."""

from __future__ import annotations

import gc
import weakref

from hermes_core.agent.tools.schema import make_tool


def _made_read_and_dropped() -> weakref.ref[type]:
    """A tool over a closure (its session's store, say), read as a turn reads it, dropped."""
    store = {"oslo": "rain"}

    def lookup(city: str, at: tuple[float, float] | None = None) -> str:
        """Look the weather up."""
        return store.get(city, "?")

    made = make_tool(lookup)
    assert made.parameters["required"] == ["city"]
    assert made.invoke(made.parse('{"city": "oslo"}')) == "rain"
    return weakref.ref(made.arguments)


def test_a_tool_made_and_dropped_leaves_no_arguments_model_alive() -> None:
    """Its arguments model (~17 KB with its validator, measured) was held by the schema cache
    until 4,096 other models had come after it: a server making its tools per session held
    ~70 MB of tools long dropped. The schema is kept while its model lives, no longer."""
    held = [_made_read_and_dropped() for _ in range(3)]
    gc.collect()
    assert [ref() for ref in held] == [None, None, None]
