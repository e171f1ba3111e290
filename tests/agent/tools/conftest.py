"""Helpers shared by the tool modules' tests: a documented tool function taking a model."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


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
