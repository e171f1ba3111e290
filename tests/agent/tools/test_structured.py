"""Reading a structured reply back into the requested pydantic model."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from pydantic import BaseModel, Field, RootModel, create_model

from hermes_core.agent.tools.structured import (
    failed,
    parse_draft,
    parse_output,
    repair_message,
    response_format,
)

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


def test_a_reply_that_is_not_json_is_named_the_reply_not_tool_arguments() -> None:
    """The error read "(arguments): Invalid JSON ..." -- words of the tool runner -- for a reply
    no tool was involved in."""
    with pytest.raises(ValueError) as info:
        parse_output("Sure! Oslo, no umbrella.", Trip)
    message = str(failed(Trip, info.value, "Sure! Oslo, no umbrella."))
    assert "(arguments)" not in message
    assert "(reply): Invalid JSON" in message
    with pytest.raises(ValueError) as info:
        parse_output('{"city": "Oslo"}', Trip)
    assert "bring_umbrella: Field required" in str(failed(Trip, info.value, ""))


@pytest.mark.parametrize("text", [
    f"Here is the plan: {TRIP}",                                  # prose, then a bare object
    f"{TRIP}\n\nLet me know if you need anything else.",          # a bare object, then prose
    f"Sure {{happy to help}}! {TRIP}",                            # a brace that is not JSON first
    f"计划如下：{TRIP}。",
])
def test_a_bare_json_object_inside_prose_is_read(text: str) -> None:
    """An OpenAI-compatible server that ignores response_format (many local ones) answers with a
    sentence around the object and no fence: that cost a repair round, which could fail again."""
    assert parse_output(text, Trip) == Trip(city="Oslo", bring_umbrella=False)


def test_an_object_in_prose_that_does_not_match_reports_the_mismatch() -> None:
    with pytest.raises(ValueError) as info:
        parse_output('Here you go: {"city": "Oslo"}', Trip)
    assert "bring_umbrella: Field required" in str(failed(Trip, info.value, ""))


@pytest.mark.parametrize("text", [
    f"```jsonc\n{TRIP}\n```",                                   # other tags models write
    f"```JSON5\n{TRIP}\n```",
    f"```javascript\n{TRIP}\n```",
    f"```js\n{TRIP}\n```",
    f"Run ```bash\nls\n``` first; the plan is {TRIP}",          # a fence of something else
    f"```json\n{{\"example\": true}}\n```\nSo: {TRIP}",            # a fenced example, then it
    '"' + TRIP.replace('"', '\\"') + '"',                       # the object encoded as a string
])
def test_the_object_is_found_past_other_fences_tags_and_a_string_wrapping(text: str) -> None:
    """Only ``json`` tags were stripped (``jsonc`` left a ``c`` before the object), and once a
    reply held any fence the object standing in its prose was never tried."""
    assert parse_output(text, Trip) == Trip(city="Oslo", bring_umbrella=False)


class Stop(BaseModel):
    city: str
    days: int


class Itinerary(BaseModel):
    stops: list[Stop]
    kind: str


def test_a_cut_off_object_is_reported_as_invalid_json_not_as_its_inner_object_s_mismatch() -> None:
    """The inner ``{"city": ...}`` of an object cut before its closing brace was validated as the
    whole answer, and the repair round told the model "stops: Field required; kind: Field
    required" for a reply that held both: it was to add what it had, not to close the brace."""
    cut = '{"stops": [{"city": "Oslo", "days": 2}], "kind": "city"'
    with pytest.raises(ValueError) as info:
        parse_output(cut, Itinerary)
    message = str(failed(Itinerary, info.value, cut))
    assert "Invalid JSON" in message and "Field required" not in message
    assert "EOF" in message   # pydantic's words for where it ended


@pytest.mark.parametrize("output", [RootModel[list[Stop]], RootModel[str]])
def test_an_output_model_whose_schema_is_not_an_object_is_refused_before_any_call(
        output: type[BaseModel]) -> None:
    """Both APIs take only an object at the top of the schema (OpenAI's json_schema, Anthropic's
    tool input_schema ``type: "object"``): a list or a string root was a 400 on every call."""
    with pytest.raises(TypeError, match=r"must be an object.*wrap it in a model with a field"):
        response_format(output)


def test_an_object_root_model_is_sent_as_it_is() -> None:
    assert response_format(RootModel[Stop])["schema"]["type"] == "object"
    assert response_format(Itinerary)["name"] == "Itinerary"


class _Limit(BaseModel):
    """A search limit."""

    radius_km: float = float("inf")
    floor: float = Field(default=0.0, examples=[float("-inf"), 0.5])


def test_an_output_model_s_non_finite_defaults_are_left_out_and_said_in_words() -> None:
    """Sent as they stood, ``inf`` and ``nan`` defaults made a body the SDKs refuse to write."""
    import json

    schema = response_format(_Limit)["schema"]
    text = json.dumps(schema, allow_nan=False)   # raised ValueError before
    radius, floor = schema["properties"]["radius_km"], schema["properties"]["floor"]
    assert "default" not in radius and radius["description"] == "(default: Infinity)"
    assert floor == {"default": 0.0, "examples": [0.5], "title": "Floor", "type": "number"}
    assert "NaN" not in repair_message(_Limit, ValueError("bad")).split("\n", 1)[1]
    assert text == json.dumps(schema)


class _Level(float, enum.Enum):
    LOW = 1.0
    UNBOUNDED = float("inf")


class _Leveled(BaseModel):
    level: _Level


def test_an_output_model_that_needs_an_infinity_as_a_value_is_refused_naming_where() -> None:
    with pytest.raises(TypeError, match=r"_Leveled: its schema holds NaN or infinity at "
                                        r"\$defs\._Level\.enum\[1\]"):
        response_format(_Leveled)


def _counted(generated: list[str], **fields: Any) -> type[BaseModel]:
    """An output model that counts its schema's generations (pydantic's, ~0.5 ms each)."""
    class Plan(BaseModel):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            generated.append(cls.__name__)
            return super().model_json_schema(*args, **kwargs)

    return create_model("Plan", __base__=Plan, **fields)


def test_an_output_model_s_schema_is_generated_once_and_anew_for_a_redefined_model() -> None:
    """Generated afresh every turn (and again for a repair round), like tools' schemas before
    decision 74; kept per class, a model redefined (a notebook cell run again) or rebuilt is
    generated anew, and each caller gets its own copy."""
    generated: list[str] = []
    first = _counted(generated, city=(str, ...))
    sent = response_format(first)
    sent["schema"]["properties"].clear()   # a caller's change is its own
    assert response_format(first) == response_format(first) != sent
    repair_message(first, ValueError("bad"))
    assert len(generated) == 1
    again = _counted(generated, city=(str, ...), nights=(int, ...))   # same name, new field
    assert set(response_format(again)["schema"]["properties"]) == {"city", "nights"}
    assert set(response_format(first)["schema"]["properties"]) == {"city"}
    assert len(generated) == 2
    first.model_config["json_schema_extra"] = {"examples": [{"city": "Oslo"}]}
    first.model_rebuild(force=True)
    assert response_format(first)["schema"]["examples"] == [{"city": "Oslo"}]
    assert len(generated) == 3


def test_an_output_model_with_a_field_name_the_apis_refuse_is_refused_naming_it() -> None:
    from hermes_core.agent.tools.structured import response_format

    class Statement(BaseModel):
        number: str = Field(alias="Account Number")

    with pytest.raises(TypeError, match="Account Number"):
        response_format(Statement)


# ---------------------------------------------------------------- drafts (a reply still arriving)


class Plan(BaseModel):
    city: str
    days: int = 1


@pytest.mark.parametrize("so_far", [
    '{"oops\nHere is the plan: {"city": "Os',        # a stray brace and quote open the reply
    '{" is how JSON opens. {"city": "Os',             # the stray one's "key" closed by the object
])
def test_a_draft_behind_a_stray_unclosed_brace_is_read_as_the_final_reply_is(so_far: str) -> None:
    """A reply that opens with ``{"`` was read as that object alone (a tree's first child must not
    pass for the reply), so a stray one that is no JSON hid every partial object until the final,
    which parses past it. Failed before (None)."""
    assert parse_draft(so_far, Plan) == Plan(city="Os")
    assert parse_output(so_far + 'lo", "days": 2}', Plan) == Plan(city="Oslo", days=2)


def test_a_reply_that_opens_an_object_still_arriving_is_that_object_alone() -> None:
    """The twin: the reply's own object, unreadable yet, is not replaced by the first inner one
    of the shape."""
    assert parse_draft('{"trip": {"city": "Oslo", "days": 2}, "x', Plan) is None


@pytest.mark.parametrize("so_far, shown", [
    (r'"{\"city\": \"Os', Plan(city="Os")),
    (r'"{\"city\": \"Oslo\", \"days\": 2', Plan(city="Oslo", days=2)),
    (r'"{\"city\": \"Oslo \u00e9', Plan(city="Oslo \u00e9")),   # an outer escape, read whole
    ('"{\\"city\\": \\"Oslo\\', Plan(city="Oslo")),   # cut inside an escape: left off
    (r'"{\"city\": \"Oslo\", \"days\": 2\u00', Plan(city="Oslo")),   # 2 of 23, 2\u0033
    ('"{\\"city\\": \\"Oslo\\", \\"days\\": 2\\', Plan(city="Oslo")),   # cut at the "\\"
    ('"Sorry, I cannot', None),                # a string that holds no object
])
def test_a_draft_sent_as_one_json_string_is_read_from_inside_the_string(
        so_far: str, shown: Plan | None) -> None:
    """The final parse reads a reply that is one JSON string (the object encoded twice) from its
    content; a string cut short does not decode, so such a reply showed no partial object.
    Failed before (None for each but the last)."""
    assert parse_draft(so_far, Plan) == shown


@pytest.mark.parametrize("text", [
    '{"a": ' * 3_000,                                  # still arriving
    '{"a": ' * 3_000 + "1" + "}" * 3_000 + ' {"a": 1',   # whole, and something after it
])
def test_a_reply_nested_past_the_decoder_s_depth_is_decoded_from_two_braces_not_each(
        text: str, decodes: list[int]) -> None:
    """Each ``{`` of a reply nested past the decoder's depth is as deep: the prose scan decoded
    from each of its first 64 (each running to the decoder's depth, ~10 ms a draft's read, read
    ~150 times a reply) before finding no object. Failed before (64 decodes)."""
    assert parse_draft(text, Plan) is None
    assert len(decodes) == 2, len(decodes)


@pytest.mark.parametrize("text", [
    '{"a": ' * 500,                         # still arriving, past pydantic's depth only
    '{"a": ' * 900 + '{"b',                 # cut inside a key
    'Here is the plan: ' + '{"a": ' * 500,  # behind prose
])
def test_a_reply_nested_past_pydantic_s_depth_but_not_the_decoder_s_is_decoded_once(
        text: str, decodes: list[int]) -> None:
    """Between pydantic's depth (~200) and the decoder's (~1,000) a reply still arriving decodes
    to its end from each ``{`` and pydantic refuses each: the scan decoded from each of its first
    64 (~8 ms a read at 900 deep). A ``{`` the decoder read to the text's end holds every ``{``
    after it, so none of them stands in the prose. Failed before (64 decodes)."""
    assert parse_draft(text, Plan) is None
    assert len(decodes) == 1, len(decodes)


@pytest.mark.parametrize("so_far", [
    'Note {x} then {"city": "Os',
    '{"a": {"b" then {"city": "Os',   # a stray object cut off before the text's end
])
def test_a_brace_the_decoder_fails_before_the_end_does_not_end_the_prose_scan(
        so_far: str) -> None:
    """Only a ``{`` read to the text's end holds the ones after it (pinned with the above)."""
    value = parse_draft(so_far, Plan)
    assert value is not None and value.city == "Os"


class Defaults(BaseModel):
    city: str = "?"


@pytest.mark.parametrize("so_far", [
    'Not this: {"city" "Os. This: {}',    # the decoder stops at a quote it never read
    'Not this: {"city" "Os. This: {',     # ... an object still arriving after it
])
def test_a_brace_the_decoder_fails_at_an_unread_quote_does_not_end_the_prose_scan(
        so_far: str) -> None:
    """A ``{`` whose decode fails at a ``"`` it expected a delimiter before did not read the
    string that quote opens, so the objects after it (with no quote of their own: the string
    never closes) still stand. Failed before (the scan ended there: no object)."""
    assert parse_draft(so_far, Defaults) == Defaults()


@pytest.mark.parametrize("text", [
    '{"city": ' * 50_000,                           # opens an object, nested past any limit
    'Here is the plan: {"city": ' + "[" * 50_000,   # behind prose
    '{"oops\n{"days": ' + '{"a": ' * 50_000,         # behind a stray brace
])
def test_a_reply_nested_past_the_decoder_s_depth_is_no_object_not_a_recursion_error(
        text: str) -> None:
    """A hostile or runaway reply nested deeper than the standard decoder recurses: the prose
    scan's decode raised RecursionError, which no caller catches (the stream and ``chat`` expect
    ValueError / ValidationError, so no repair round either). Failed before (RecursionError from
    both; parse_draft of the first only since drafts behind a stray brace are read)."""
    assert parse_draft(text, Plan) is None
    with pytest.raises(ValueError):
        parse_output(text, Plan)
