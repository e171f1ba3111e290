"""A model's arguments read for what they plainly mean when they fail as sent (``Tool.parse``
through ``lenient``), and what stays an error, naming the parameter and the value sent."""

from __future__ import annotations

import enum
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ValidationError

from hermes_core.agent.tools.schema import make_tool, validation_message


class _Stop(BaseModel):
    name: str
    minutes: int = 30


class _Unit(enum.Enum):
    C = "c"
    F = "f"


def _plan(city: str, stops: list[_Stop], unit: _Unit = _Unit.C, days: int = 1,
          note: str | None = None, zip_code: str = "", tags: set[str] = frozenset()) -> str:
    """Plan a trip."""
    return city


_STOPS = [{"name": "museum", "minutes": 90}]


@pytest.mark.parametrize("raw, sent", [
    # the whole arguments encoded twice: a JSON string holding the object
    (json.dumps(json.dumps({"city": "Oslo", "stops": _STOPS})), {}),
    # a list, an item, a set sent as JSON text (Claude and Qwen do this with nested parameters)
    (json.dumps({"city": "Oslo", "stops": json.dumps(_STOPS)}), {}),
    (json.dumps({"city": "Oslo", "stops": [json.dumps(_STOPS[0])]}), {}),
    (json.dumps({"city": "Oslo", "stops": _STOPS, "tags": '["art"]'}), {"tags": {"art"}}),
    # null for a parameter that has a default: not set (OpenAI's models send every key)
    (json.dumps({"city": "Oslo", "stops": _STOPS, "unit": None, "days": None}), {}),
    (json.dumps({"city": "Oslo", "stops": _STOPS, "note": None}), {}),
], ids=["arguments-as-json-string", "list-as-json-string", "item-as-json-string",
        "set-as-json-string", "null-for-defaults", "null-for-optional"])
def test_arguments_as_models_really_send_them_are_read_for_what_they_mean(
        raw: str, sent: dict[str, Any]) -> None:
    """Each form was refused ("arguments must be a JSON object, not a JSON string", "stops:
    Input should be a valid list", "unit: Input should be 'c' or 'f'"), and a model that
    believes it sent the right thing sends it again. Read only where the call is invalid as it
    stands and one reading is plain; a valid call is never changed."""
    args = make_tool(_plan).parse(raw)
    expected = {"city": "Oslo", "stops": [_Stop(name="museum", minutes=90)], "unit": _Unit.C,
                "days": 1, "note": None, "zip_code": "", "tags": frozenset(), **sent}
    assert args == expected


@pytest.mark.parametrize("raw, says", [
    ('{"city": null, "stops": []}', "city: Input should be a valid string (sent null)"),
    ('{"city": "Oslo", "stops": "museum"}', "stops: Input should be a valid list"),
    ('{"city": "Oslo", "stops": "{\\"name\\": \\"museum\\"}"}', "stops: Input should be a "
     "valid list"),
    ('{"city": "Oslo", "stops": "[{\\"minutes\\": 5}]"}', "stops.0.name: Field required"),
    ('{"city": "Oslo", "stops": [], "days": 2.5}', "days: Input should be a valid integer, got "
     "a number with a fractional part (sent 2.5)"),
    ('"[1, 2]"', "arguments must be a JSON object, not a JSON string"),
    # a number for text: 01234 would have arrived as 1234, and "1234" is no reading of it
    ('{"city": "Oslo", "stops": [], "zip_code": 1234}', "zip_code: Input should be a valid "
     "string (sent 1234)"),
], ids=["null-for-required", "text-for-list", "object-text-for-list", "decoded-item-invalid",
        "fraction-for-int", "string-of-array", "int-for-str"])
def test_arguments_no_reading_saves_stay_errors_naming_the_parameter(raw: str, says: str) -> None:
    with pytest.raises(ValueError) as caught:
        make_tool(_plan).parse(raw)
    e = caught.value
    assert says in (validation_message(e) if isinstance(e, ValidationError) else str(e))


@pytest.mark.parametrize("raw, said", [
    (json.dumps({"city": "Oslo", "stops": json.dumps(_STOPS)}),
     "_plan: stops sent as JSON text, read as the array it holds"),
    (json.dumps({"city": "Oslo", "stops": [json.dumps(_STOPS[0])]}),
     "_plan: stops.0 sent as JSON text, read as the object it holds"),
    (json.dumps({"city": "Oslo", "stops": _STOPS, "days": None}),
     "_plan: days sent as null, left out for its default"),
    (json.dumps(json.dumps({"city": "Oslo", "stops": _STOPS})),
     "_plan: the arguments sent as a JSON string, read as the object it holds"),
], ids=["list-as-text", "item-as-text", "null-for-default", "arguments-as-text"])
def test_a_reading_is_logged_naming_the_tool_and_the_place_not_the_value(
        caplog: pytest.LogCaptureFixture, raw: str, said: str) -> None:
    """A reading hid the model's own mistake from the author: the call ran as if sent right, and
    nothing said the model sends lists as text (a prompt or schema the author could fix, and a
    model to watch). Each reading is logged; the value is not (it may hold a key)."""
    secret = "sk-" + "Zq8Lm2Xc4Vb6Nn1Aa3Ss5Dd7"
    raw = raw.replace("museum", secret)
    with caplog.at_level("INFO", logger="hermes_core.agent.tools.lenient"):
        make_tool(_plan).parse(raw)
    said_lines = [r.getMessage() for r in caplog.records]
    assert said_lines == [said]
    assert secret not in caplog.text


def test_a_valid_call_is_read_without_a_word_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("DEBUG", logger="hermes_core.agent.tools.lenient"):
        make_tool(_plan).parse(json.dumps({"city": "Oslo", "stops": _STOPS, "zip_code": "[1]"}))
    assert caplog.records == []


def test_many_readings_in_one_call_are_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    """A list of 2,000 stops each sent as JSON text was 2,000 log lines for one call, burying
    the rest of the log: one line, the first places named and how many more."""
    raw = json.dumps({"city": "Oslo", "stops": [json.dumps(_STOPS[0])] * 2000})
    with caplog.at_level("INFO", logger="hermes_core.agent.tools.lenient"):
        assert len(make_tool(_plan).parse(raw)["stops"]) == 2000
    assert [r.getMessage() for r in caplog.records] == [
        "_plan: stops.0 sent as JSON text, read as the object it holds; stops.1 sent as JSON "
        "text, read as the object it holds; stops.2 sent as JSON text, read as the object it "
        "holds; and 1997 more places"]


class _Leg(BaseModel):
    km: float


def _book(seats: int = 1, price: float = 0.0, legs: list[_Leg] = [], caps: dict[str, int] = {},  # noqa: B006
          limit: int | None = None, size: int | str = 0, pair: tuple[int, int] = (0, 0),
          flag: bool = False, either: bool | int = 0) -> str:
    """Book seats."""
    return ""


@pytest.mark.parametrize("sent, says", [
    ({"seats": True}, "seats: a JSON true or false is no number; send a number (sent true)"),
    ({"price": False}, "price: a JSON true or false is no number; send a number (sent false)"),
    ({"legs": [{"km": 3}, {"km": True}]}, "legs.1.km: a JSON true or false is no number"),
    ({"caps": {"adults": True}}, "caps.adults: a JSON true or false is no number"),
    ({"limit": True}, "limit: a JSON true or false is no number"),
    ({"size": True}, "size: a JSON true or false is no number"),
    ({"pair": [1, True]}, "pair.1: a JSON true or false is no number"),
], ids=["int", "float", "model-field-in-list", "dict-value", "optional-int", "int-or-str",
        "tuple-item"])
def test_true_or_false_for_a_number_is_refused_naming_the_place(sent: dict[str, Any],
                                                                says: str) -> None:
    """pydantic's lax mode took ``true`` for an ``int`` as 1 and ``false`` for a ``float`` as
    0.0: the tool ran on a number the model never wrote (it meant a flag, or filled the wrong
    parameter), and nothing told it so. Refused wherever a number is asked for, nested too."""
    with pytest.raises(ValidationError) as caught:
        make_tool(_book).parse(json.dumps(sent))
    assert says in validation_message(caught.value)


class _Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class _Size(enum.Enum):
    SMALL = 1
    LARGE = 2


class _Slot(BaseModel):
    level: _Level = _Level.LOW


def _rate(stars: Literal[1, 2] = 1, level: _Level = _Level.LOW, size: _Size = _Size.SMALL,
          maybe: Literal[0, 1] | None = None, levels: list[_Level] = [],  # noqa: B006
          slots: list[_Slot] = [], mixed: Literal[True, 1] = 1) -> str:  # noqa: B006
    """Rate a stay."""
    return ""


@pytest.mark.parametrize("sent, says", [
    ({"stars": True}, "stars: a JSON true or false is no number; send a number (sent true)"),
    ({"level": True}, "level: a JSON true or false is no number; send a number (sent true)"),
    ({"size": True}, "size: a JSON true or false is no number; send a number (sent true)"),
    ({"maybe": False}, "maybe: a JSON true or false is no number; send a number (sent false)"),
    ({"levels": [2, True]}, "levels.1: a JSON true or false is no number"),
    ({"slots": [{"level": 2}, {"level": True}]}, "slots.1.level: a JSON true or false is no number"),
], ids=["literal-of-ints", "int-enum", "enum-of-ints", "optional-literal-false", "int-enum-in-list",
        "int-enum-in-a-model-in-a-list"])
def test_true_or_false_for_a_number_choice_is_refused_naming_the_place(
        sent: dict[str, Any], says: str) -> None:
    """``Literal[1, 2]`` and an ``IntEnum`` took ``true`` as 1 even in pydantic's strict mode
    (its literal and enum checks compare by ``==``, and ``True == 1``): the tool ran on a choice
    the model never made. Refused as a flag for any other number is."""
    with pytest.raises(ValidationError) as caught:
        make_tool(_rate).parse(json.dumps(sent))
    assert says in validation_message(caught.value)


def test_a_choice_that_lists_true_takes_it_as_true() -> None:
    args = make_tool(_rate).parse(json.dumps({"mixed": True, "stars": 2, "level": 2}))
    assert args["mixed"] is True and args["stars"] == 2 and args["level"] is _Level.HIGH


@pytest.mark.parametrize("sent, value", [
    ({"flag": True}, {"flag": True}), ({"flag": False}, {"flag": False}),
    # a flag written as text or as 1/0 has one meaning (Nemotron and Qwen send "True"/"False":
    # NVIDIA-NeMo/Nemotron#52, logancyang/obsidian-copilot#2232)
    ({"flag": "True"}, {"flag": True}), ({"flag": "false"}, {"flag": False}),
    ({"flag": "1"}, {"flag": True}), ({"flag": "0"}, {"flag": False}),
    ({"flag": 1}, {"flag": True}), ({"flag": 0}, {"flag": False}),
    # a parameter that takes a bool takes one, even beside a number
    ({"either": True}, {"either": True}), ({"either": 3}, {"either": 3}),
    ({"seats": 3, "price": 2.5}, {"seats": 3, "price": 2.5}),
], ids=["true", "false", "True-text", "false-text", "1-text", "0-text", "1", "0",
        "bool-or-int-true", "bool-or-int-3", "numbers"])
def test_a_flag_takes_true_false_and_their_plain_spellings(sent: dict[str, Any],
                                                           value: dict[str, Any]) -> None:
    args = make_tool(_book).parse(json.dumps(sent))
    assert {k: args[k] for k in value} == value
    assert all(type(args[k]) is type(v) for k, v in value.items())


@pytest.mark.parametrize("sent", [{"flag": 2}, {"flag": "maybe"}, {"flag": "2"}])
def test_a_flag_refuses_what_is_neither_true_nor_false(sent: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as caught:
        make_tool(_book).parse(json.dumps(sent))
    assert "flag: Input should be a valid boolean" in validation_message(caught.value)
