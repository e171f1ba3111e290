"""A tool's parameters described by the words an author puts in ``Annotated[..., "words"]``:
on plain and star parameters, unpacked keys, ``X | None``, and the fields of a model, dataclass
or TypedDict the tool takes (the way LangChain, AutoGen and Semantic Kernel tools say them)."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import pytest
import typing_extensions
from pydantic import BaseModel, Field, ValidationError

from hermes_core.agent.tools.schema import make_tool


def test_a_plain_string_in_annotated_is_the_parameter_s_description() -> None:
    """``Annotated[str, "what to look for"]`` is how LangChain, AutoGen and Semantic Kernel
    describe a parameter; pydantic passes over a string there, so the words were dropped and
    the model got the parameter undescribed. They are its description, beside a bound, and win
    over the docstring's as a ``Field`` description does; a ``Field`` description wins over
    them."""
    def search(query: Annotated[str, "what to look for"],
               limit: Annotated[int, Field(ge=1), "at most this many"] = 5,
               lang: Annotated[str, "an ISO 639-1 code"] = "en",
               page: Annotated[int, "the words", Field(description="the page, from 1")] = 1,
               near: Annotated[str, "a place the notes mention"] | None = None) -> str:
        """Search the notes.

        Args:
            lang: the language
        """
        return query

    props = make_tool(search).parameters["properties"]
    assert props["query"] == {"description": "what to look for", "type": "string"}
    assert props["limit"]["description"] == "at most this many"
    assert props["limit"]["minimum"] == 1
    assert props["lang"]["description"] == "an ISO 639-1 code"
    assert props["page"]["description"] == "the page, from 1"
    assert props["near"]["description"] == "a place the notes mention"   # inside an Optional
    with pytest.raises(ValidationError):
        make_tool(search).parse('{"query": "x", "limit": 0}')


class Window(typing_extensions.TypedDict):
    limit: Annotated[int, "rows at most"]
    cursor: typing_extensions.NotRequired[Annotated[str, "where the last page ended"]]


def test_words_in_annotated_describe_star_parameters_and_unpacked_keys_too() -> None:
    """The words beside a ``*paths`` item type, a ``**weights`` value type and the keys of an
    unpacked TypedDict (a ``NotRequired`` one too) were dropped as a plain parameter's were."""
    def rows(table: str, *paths: Annotated[str, "a file to read"],
             **opts: typing_extensions.Unpack[Window]) -> str:
        """Page through a table."""
        return table

    def tag(item: str, **weights: Annotated[int, "a label's weight"]) -> str:
        """Tag an item."""
        return item

    props = make_tool(rows).parameters["properties"]
    assert props["paths"]["description"] == "a file to read"
    assert props["limit"]["description"] == "rows at most"
    assert props["cursor"]["description"] == "where the last page ended"
    assert make_tool(tag).parameters["additionalProperties"] == {
        "description": "a label's weight", "type": "integer"}


class Spot(BaseModel):
    city: Annotated[str, "the city to look in"]
    near: Annotated[str, "a street in it"] | None = None
    zone: Annotated[str, "not these words", Field(description="a time zone")] = "UTC"


@dataclasses.dataclass
class Span:
    days: Annotated[int, "how many days"]


class Filter(typing_extensions.TypedDict):
    tag: typing_extensions.NotRequired[Annotated[str, "a label to keep"]]


def test_words_in_annotated_describe_fields_of_a_model_dataclass_or_typeddict_parameter() -> None:
    """The words beside a nested field's type (a model, a dataclass, a TypedDict the tool
    takes) were dropped, as a parameter's were before; pydantic keeps them with the field, so
    they are its description too, a ``Field`` description first."""
    def find(spot: Spot, span: Span, only: Filter) -> str:
        """Find events."""
        return spot.city

    defs = make_tool(find).parameters["$defs"]
    described = {(name, key): prop.get("description") for name, d in defs.items()
                 for key, prop in d["properties"].items()}
    assert described == {
        ("Spot", "city"): "the city to look in", ("Spot", "near"): "a street in it",
        ("Spot", "zone"): "a time zone", ("Span", "days"): "how many days",
        ("Filter", "tag"): "a label to keep"}
