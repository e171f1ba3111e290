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
