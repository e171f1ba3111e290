"""The tools an agent offers (tools/registry.py): names unique, reserved names refused."""

from __future__ import annotations

import pytest

from hermes_core.agent.tools.registry import ToolRegistry
from hermes_core.agent.tools.schema import ToolDefinitionError
from tests.agent.tools.conftest import book_table


def test_registry_refuses_duplicates_and_reserved_names() -> None:
    def skill_view(name: str) -> str:
        return name

    reg = ToolRegistry([book_table])
    with pytest.raises(ToolDefinitionError, match="already registered"):
        reg.add(book_table)
    with pytest.raises(ToolDefinitionError, match="reserved"):
        reg.add(skill_view)
    assert reg.names == ("book_table",) and "book_table" in reg and len(reg) == 1


def _named(name: str) -> object:
    def fn(query: str) -> str:
        """Look something up."""
        return query
    fn.__name__ = name
    return fn


@pytest.mark.parametrize("name, says", [
    ("Skill_View", "'Skill_View' reads as the built-in 'skill_view'"),
    ("skill-view", "'skill-view' reads as the built-in 'skill_view'"),
    ("SKILL_VIEW", "'SKILL_VIEW' reads as the built-in 'skill_view'"),
    ("Book_Table", "'Book_Table' reads as 'book_table', already registered"),
    ("book-table", "'book-table' reads as 'book_table', already registered"),
], ids=["case", "dash", "upper", "author-case", "author-dash"])
def test_a_name_a_model_cannot_tell_from_another_tool_s_is_refused(name: str, says: str) -> None:
    """``Skill_View`` beside the built-in ``skill_view`` (or ``book-table`` beside
    ``book_table``) was offered as a second tool: a model writes the name it means loosely, and
    a call of ``skill_View`` was told "did you mean" whichever came first. Refused, naming both."""
    reg = ToolRegistry([book_table])
    with pytest.raises(ToolDefinitionError) as caught:
        reg.add(_named(name))
    assert says in str(caught.value)
    assert reg.names == ("book_table",)
