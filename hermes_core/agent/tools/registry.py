"""The tools an agent offers: the author's, by name, in the order they were added."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from hermes_core.agent.tools.schema import Tool, ToolDefinitionError, make_tool
from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL
from hermes_core.types import ToolSpec

#: Built in (skill_view for agents with skills, the structured-output tool): not an author's name.
RESERVED = frozenset({"skill_view", STRUCTURED_OUTPUT_TOOL})


def folded(name: str) -> str:
    """``name`` as a model may write it meaning the same tool: any case, ``-`` for ``_``."""
    return name.casefold().replace("-", "_")


class ToolRegistry:
    """Tools by name. Adding a second tool of the same name is an error, not a silent override:
    the model would call one while the author debugs the other."""

    def __init__(self, tools: Iterable[Callable[..., Any] | Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, fn: Callable[..., Any] | Tool, **options: Any) -> Tool:
        """Add ``fn`` as a tool. A name a model could not tell from another's (the same but for
        case or ``-`` for ``_``: ``Skill_View`` beside the built-in ``skill_view``) is refused as
        the same name is: a model writes the name it means loosely, and which one it meant could
        only be guessed."""
        t = make_tool(fn, **options)
        rename = "give this one another name (add(fn, name=...) or @tool(name=...))"
        if t.name in RESERVED:
            raise ToolDefinitionError(f"tool name {t.name!r} is reserved for the built-in tool; "
                                      f"{rename}")
        if t.name in self._tools:
            raise ToolDefinitionError(f"a tool named {t.name!r} is already registered; {rename}")
        builtin = next((n for n in sorted(RESERVED) if folded(n) == folded(t.name)), None)
        if builtin is not None:
            raise ToolDefinitionError(f"tool name {t.name!r} reads as the built-in {builtin!r} to "
                                      f"a model (names differing only in case or '-' and '_'); "
                                      f"{rename}")
        twin = next((n for n in self._tools if folded(n) == folded(t.name)), None)
        if twin is not None:
            raise ToolDefinitionError(f"tool name {t.name!r} reads as {twin!r}, already "
                                      f"registered, to a model (names differing only in case or "
                                      f"'-' and '_'); {rename}")
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
