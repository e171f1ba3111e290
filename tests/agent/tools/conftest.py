"""Helpers shared by the tool modules' tests: a documented tool function taking a model, and the
runner factory (and the key it must keep out of answers) that the runner's test files share."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from hermes_core.agent.tools import structured
from hermes_core.agent.tools.registry import ToolRegistry
from hermes_core.agent.tools.runner import ToolRunner
from hermes_core.types import ToolCall


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


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Where each of the prose scan's decodes starts (the decoder counted)."""
    starts: list[int] = []

    class Counting(json.JSONDecoder):
        def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
            starts.append(idx)
            return super().raw_decode(s, idx)

    monkeypatch.setattr(structured.json, "JSONDecoder", Counting)
    return starts


# A key the runner is told to scrub; no answer or log may hold it.
SECRET = "sk-proj-runnerSECRET0123456789abcdef"


@pytest.fixture
def runner_factory() -> Iterator[Any]:
    """Makes ToolRunners over the given tools and closes each one after the test."""
    made: list[ToolRunner] = []

    def make(tools: list[Any], **kw: Any) -> ToolRunner:
        r = ToolRunner(ToolRegistry(tools), **kw)
        made.append(r)
        return r

    yield make
    for r in made:
        r.close()


def run_beside_a_fine_tool(runner_factory: Any, odd: Any, use_async: bool) -> Any:
    """Run ``odd`` (call id "a") and a tool answering "fine" (call id "b") in one round, sync or
    async: what goes wrong with one call must leave the other's answer."""
    def fine() -> str:
        """Fine."""
        return "fine"

    runner = runner_factory([odd, fine])
    calls = [ToolCall("a", odd.__name__), ToolCall("b", "fine")]
    return asyncio.run(runner.arun(calls)) if use_async else runner.run(calls)
