"""Reading a structured reply back into the requested pydantic model."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from hermes_core.agent.tools.structured import parse_output

TRIP = '{"city": "Oslo", "bring_umbrella": false}'


class Trip(BaseModel):
    city: str
    bring_umbrella: bool


@pytest.mark.parametrize("text", [
    TRIP,
    f"```json\n{TRIP}\n```",
    f"Here is the plan:\n\n```json\n{TRIP}\n```",              # prose before the fence
    f"```json\n{TRIP}\n```\nHave a nice trip!",                 # and after it
    f"```JSON\n{TRIP}\n```",                                    # the language tag in capitals
    f"```{TRIP}```",                                            # the fence on one line
    f"以下是计划：\n```json\n{TRIP}\n```",
])
def test_a_json_object_in_a_fence_is_read_wherever_the_fence_stands(text: str) -> None:
    assert parse_output(text, Trip) == Trip(city="Oslo", bring_umbrella=False)

