"""Helpers shared by the tool modules' tests: a documented tool function taking a model."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from hermes_core.agent.tools import structured


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
