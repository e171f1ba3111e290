"""The tools an agent offers: the author's, by name, in the order they were added."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from hermes_core.agent.tools.schema import Tool, ToolDefinitionError, make_tool
from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL
from hermes_core.types import ToolSpec

#: Built in (skill_view for agents with skills, the structured-output tool): not an author's name.
RESERVED = frozenset({"skill_view", STRUCTURED_OUTPUT_TOOL})


class ToolRegistry:
    """Tools by name. Adding a second tool of the same name is an error, not a silent override:
    the model would call one while the author debugs the other."""

    def __init__(self, tools: Iterable[Callable[..., Any] | Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, fn: Callable[..., Any] | Tool, **options: Any) -> Tool:
        t = make_tool(fn, **options)
        if t.name in RESERVED:
            raise ToolDefinitionError(f"tool name {t.name!r} is reserved for the built-in tool")
        if t.name in self._tools:
            raise ToolDefinitionError(f"a tool named {t.name!r} is already registered; give this "
                                      "one another name (add(fn, name=...) or @tool(name=...))")
        self._tools[t.name] = t
        return t

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools
