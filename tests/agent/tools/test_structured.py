"""Reading a structured reply back into the requested pydantic model."""

from __future__ import annotations

import enum
import gc
import json
import weakref
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
from pydantic import BaseModel, Field, RootModel, create_model

from hermes_core import StructuredOutputError
from hermes_core.agent.tools.structured import (
    failed,
    parse_draft,
    parse_output,
    repair_message,
    response_format,
)
from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL
from hermes_core.testing import (
    SSE_HEADERS,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
)
from hermes_core.types import ToolCall
from tests.agent.conftest import (
    ALL_MODES,
    KINDS,
    MODES,
    URLS,
    Forecast,
    arrays_without_items,
    make_agent,
    openai_schema_check,
    request_json,
    run_turn,
    strict_json,
    structured_reply,
    tool_answers,
    wire_response,
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


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_structured_output_is_repaired_once_then_validated(kind: str, mode: str, empty_home: Path,
                                                           respx_mock: Any) -> None:
    streamed = mode == "stream"
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        structured_reply(kind, streamed, {"city": "Paris"}),            # high_c missing
        structured_reply(kind, streamed, {"city": "Paris", "high_c": 21.5})])
    agent = make_agent(empty_home, kind)
    result = run_turn(agent, mode, "forecast for Paris", output=Forecast)
    assert result == Forecast(city="Paris", high_c=21.5)
    assert agent.last_reply.output == result
    first, repair = request_json(route, 0), request_json(route, 1)
    if kind == "openai":   # native JSON-schema response format
        fmt = first["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Forecast"
        assert fmt["json_schema"]["schema"]["required"] == ["city", "high_c"]
    else:                  # a forced call of the output tool
        assert first["tool_choice"] == {"type": "tool", "name": STRUCTURED_OUTPUT_TOOL}
        assert first["tools"][-1]["input_schema"]["required"] == ["city", "high_c"]
    last_user = json.dumps(repair["messages"][-1])
    assert "did not match the required JSON schema" in last_user and "high_c" in last_user


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_structured_output_failing_twice_is_a_typed_error(kind: str, mode: str, empty_home: Path,
                                                          respx_mock: Any) -> None:
    bad: dict[str, Any] | str = "not json at all" if kind == "openai" else {"town": "Paris"}
    streamed = mode == "stream"
    respx_mock.post(URLS[kind]).mock(side_effect=[structured_reply(kind, streamed, bad),
                                                  structured_reply(kind, streamed, bad)])
    agent = make_agent(empty_home, kind)
    with pytest.raises(StructuredOutputError) as info:
        run_turn(agent, mode, "forecast for Paris", output=Forecast)
    assert info.value.model_name == "Forecast"
    assert "repair" in str(info.value)


REFUSAL = "I can't help with that."


def _refusal(kind: str, streamed: bool) -> httpx.Response:
    """A refusal in each format: OpenAI's ``refusal`` field (``content: null``), Anthropic's
    ``refusal`` stop reason (the words it had said, and no output tool call)."""
    if kind == "anthropic":
        if streamed:
            body = anthropic_stream((REFUSAL,)).replace(b'"end_turn"', b'"refusal"')
            return httpx.Response(200, content=body, headers=SSE_HEADERS)
        return httpx.Response(200, json=anthropic_message(REFUSAL, stop_reason="refusal"))
    if streamed:
        body = openai_chat_stream((REFUSAL,)).replace(b'"content": "I', b'"refusal": "I')
        return httpx.Response(200, content=body, headers=SSE_HEADERS)
    data = openai_chat_completion("")
    data["choices"][0]["message"].update(content=None, refusal=REFUSAL)
    return httpx.Response(200, json=data)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_structured_output_is_a_typed_error_without_a_repair_round(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A refusal was sent a repair round ("reply again with only a JSON object"), a second paid
    call pressing the model past its refusal, and then reported as invalid JSON."""
    streamed = mode == "stream"
    route = respx_mock.post(URLS[kind]).mock(side_effect=[_refusal(kind, streamed),
                                                          structured_reply(kind, streamed, {"x": 1})])
    agent = make_agent(empty_home, kind)
    with pytest.raises(StructuredOutputError) as info:
        run_turn(agent, mode, "forecast for Paris", output=Forecast)
    assert route.call_count == 1
    assert "refused" in str(info.value) and "repair" not in str(info.value)
    assert info.value.text == REFUSAL and info.value.model_name == "Forecast"
    assert agent.last_reply.stop_reason == "refusal"


@pytest.mark.parametrize("kind", KINDS)
def test_async_streamed_structured_output_and_tools(kind: str, empty_home: Path, respx_mock: Any) -> None:
    import asyncio

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, True, "", (ToolCall("c1", "add", '{"a": 20, "b": 1.5}'),)),
        structured_reply(kind, True, {"city": "Paris"}),
        structured_reply(kind, True, {"city": "Paris", "high_c": 21.5})])
    agent = make_agent(empty_home, kind, tools=[add])

    async def collect() -> str:
        return "".join([p async for p in agent.astream("forecast", output=Forecast)])

    text = asyncio.run(collect())
    assert agent.last_reply.output == Forecast(city="Paris", high_c=21.5)
    assert "21.5" in text and "Paris" in text   # the JSON streamed as text
    assert agent.last_reply.tool_results == ()   # the repair turn made no calls
    first_turn = [m for m in agent.history if m.role == "tool"]
    assert first_turn[0].content.startswith("error: invalid arguments for add: b:")


class _Area(BaseModel):
    """An area to search."""

    place: str
    radius_km: float = float("inf")


@pytest.mark.parametrize("kind", KINDS)
def test_an_output_model_with_an_infinite_default_is_sent_as_strict_json(
        kind: str, empty_home: Path, respx_mock: Any) -> None:
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        structured_reply(kind, False, {"place": "Oslo"})])
    result = make_agent(empty_home, kind).chat("where", output=_Area)
    assert result == _Area(place="Oslo")
    body = strict_json(route.calls[0].request.content)
    schema = (body["response_format"]["json_schema"]["schema"] if kind == "openai"
              else body["tools"][-1]["input_schema"])
    assert "default" not in schema["properties"]["radius_km"]


def _cut_mid_json(kind: str) -> httpx.Response:
    """A structured reply's stream closed cleanly halfway through its JSON: OpenAI's as content
    pieces (shown as they come), Anthropic's as the output tool's input (shown whole at its end)."""
    from hermes_core.testing.builders import _sse

    if kind == "openai":
        base = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
        return httpx.Response(200, headers=SSE_HEADERS, content=_sse([
            (None, {**base, "choices": [{"index": 0, "delta": {"content": piece},
                                         "finish_reason": None}]})
            for piece in ('{"city": ', '"Par')]))
    start = anthropic_message("", output_tokens=1)
    start["stop_reason"] = None
    return httpx.Response(200, headers=SSE_HEADERS, content=_sse([
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "s1", "name": STRUCTURED_OUTPUT_TOOL, "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": '{"city": "Par'}})]))


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_structured_stream_cut_mid_json_is_asked_again_unseen_on_both_wire_formats(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """Half an object is never validated, repaired, shown or stored. Anthropic's output tool
    streams its input unseen, so a cut was asked again; OpenAI's JSON pieces were shown as
    they came, so a cut after them was ``IncompleteResponse`` with the caller holding half an
    object. A structured reply is now held until it is whole on both: the cut is asked again
    unseen, and the caller is shown the object once."""
    import asyncio

    whole = {"city": "Paris", "high_c": 21.5}
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        _cut_mid_json(kind), structured_reply(kind, True, whole)])
    agent = make_agent(empty_home, kind)
    if mode == "stream":
        stream = agent.stream("forecast for Paris", output=Forecast)
        pieces = list(stream)
        reply = stream.reply
    else:
        async def read() -> list[str]:
            return [p async for p in agent.astream("forecast for Paris", output=Forecast)]
        pieces = asyncio.run(read())
        reply = agent.last_reply
    assert "".join(pieces) == json.dumps(whole) and route.call_count == 2
    assert reply.output == Forecast(**whole)
    assert [m.role for m in agent.history] == ["user", "assistant"]


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_tool_offered_last_turn_but_not_this_one_is_answered_as_unknown_and_the_turn_goes_on(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A turn asked for structured output; the next, plain, turn's model calls the output tool
    (``structured_output``: the first turn offered it on Anthropic's wire) beside a tool of the
    author's. Each call is answered (the output tool as unknown, naming the tools there are),
    and the turn ends on the model's reply. On Anthropic's wire the call's input was the reply's
    text and no answer was sent for it."""
    streamed = mode in ("stream", "astream")

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    again = (ToolCall("s2", STRUCTURED_OUTPUT_TOOL, json.dumps({"city": "Oslo", "high_c": 3})),
             ToolCall("a1", "add", '{"a": 2, "b": 3}'))
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        structured_reply(kind, streamed, {"city": "Paris", "high_c": 21.5}),
        wire_response(kind, streamed, "", again),
        wire_response(kind, streamed, "5, and no forecast tool this time.")])
    agent = make_agent(empty_home, kind, tools=[add])
    run_turn(agent, mode, "forecast for Paris", output=Forecast)
    reply = run_turn(agent, mode, "and 2+3?")
    assert reply.text == "5, and no forecast tool this time." and route.call_count == 3
    second = request_json(route, 1)
    offered = ([t["function"]["name"] for t in second["tools"]] if kind == "openai"
               else [t["name"] for t in second["tools"]])
    assert offered == ["add"]
    answers = dict(tool_answers(kind, request_json(route, 2)))
    assert answers["s2"] == f"error: unknown tool {STRUCTURED_OUTPUT_TOOL!r}; the tools are: add"
    assert answers["a1"] == "5"


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_the_output_tool_alone_in_a_plain_turn_is_answered_as_unknown_not_taken_as_the_reply(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A plain turn whose model calls only the output tool (not offered in this request): the
    call is answered as unknown and the turn ends on the model's next reply, whose text is the
    reply. On Anthropic's wire the call's JSON was the reply and the turn ended there."""
    streamed = mode in ("stream", "astream")

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, streamed, "", (ToolCall("s1", STRUCTURED_OUTPUT_TOOL,
                                                    '{"city": "Oslo", "high_c": 3}'),)),
        wire_response(kind, streamed, "Sorry, I have no forecast tool.")])
    agent = make_agent(empty_home, kind, tools=[add])
    reply = run_turn(agent, mode, "forecast for Oslo?")
    assert reply.text == "Sorry, I have no forecast tool." and route.call_count == 2
    assert tool_answers(kind, request_json(route, 1)) == [
        ("s1", f"error: unknown tool {STRUCTURED_OUTPUT_TOOL!r}; the tools are: add")]
    assert [(r.call_id, r.status) for r in reply.tool_results] == [("s1", "unknown")]
    assert [m.role for m in agent.history] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_structured_turn_that_calls_an_author_s_tool_first_answers_through_the_output_after(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A structured turn whose model calls an author's tool, then answers: the call runs and is
    answered, the next round still asks for the structure (on Anthropic's wire, the output tool
    offered again), and its answer is the validated object."""
    streamed = mode in ("stream", "astream")

    def high_of(city: str) -> float:
        """Today's high in a city, in Celsius."""
        return 21.5

    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, streamed, "", (ToolCall("c1", "high_of", '{"city": "Paris"}'),)),
        structured_reply(kind, streamed, {"city": "Paris", "high_c": 21.5})])
    agent = make_agent(empty_home, kind, tools=[high_of])
    result = run_turn(agent, mode, "forecast for Paris", output=Forecast)
    assert result == Forecast(city="Paris", high_c=21.5) and route.call_count == 2
    assert tool_answers(kind, request_json(route, 1)) == [("c1", "21.5")]
    for i in (0, 1):
        sent = request_json(route, i)
        if kind == "openai":
            assert sent["response_format"]["json_schema"]["name"] == "Forecast"
        else:
            assert [t["name"] for t in sent["tools"]] == ["high_of", STRUCTURED_OUTPUT_TOOL]
            assert sent["tool_choice"] == {"type": "any"}
    assert json.loads(agent.history[-1].content) == {"city": "Paris", "high_c": 21.5}


@pytest.mark.parametrize("mode", ALL_MODES)
def test_a_structured_turn_answered_in_words_on_anthropic_s_wire_is_parsed_from_them(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A model (or a proxy ignoring the forced tool) that answers a structured request in text:
    the text is parsed as the object, as OpenAI's JSON answer is."""
    kind, streamed = "anthropic", mode in ("stream", "astream")
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, streamed, '{"city": "Oslo", "high_c": 3}')])
    agent = make_agent(empty_home, kind)
    assert run_turn(agent, mode, "forecast for Oslo", output=Forecast) == Forecast(
        city="Oslo", high_c=3)
    assert route.call_count == 1


@pytest.mark.parametrize("mode", ALL_MODES)
def test_the_output_tool_called_in_a_structured_turn_on_openai_s_wire_is_answered_as_unknown(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """OpenAI's structure is the reply's JSON (``response_format``), no tool: a model calling
    ``structured_output`` there (seen on Anthropic's wire before a failover) is told it is
    unknown, and its next reply's JSON is the object."""
    kind, streamed = "openai", mode in ("stream", "astream")

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, streamed, "", (ToolCall("s1", STRUCTURED_OUTPUT_TOOL,
                                                    '{"city": "Oslo", "high_c": 3}'),)),
        structured_reply(kind, streamed, {"city": "Oslo", "high_c": 3})])
    agent = make_agent(empty_home, kind, tools=[add])
    assert run_turn(agent, mode, "forecast for Oslo", output=Forecast) == Forecast(
        city="Oslo", high_c=3)
    assert tool_answers(kind, request_json(route, 1)) == [
        ("s1", f"error: unknown tool {STRUCTURED_OUTPUT_TOOL!r}; the tools are: add")]


class Corner(BaseModel):
    label: str
    at: tuple[float, float]


class Sketch(BaseModel):
    """A drawing: corners and the span it covers."""

    corners: list[Corner]
    span: tuple[int, str]


@pytest.mark.parametrize("mode", MODES)
def test_an_output_model_with_a_fixed_tuple_is_asked_in_a_format_openai_takes(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A tuple field (``prefixItems`` alone, as pydantic writes it), at the top or in a nested
    model, made every structured request a 400 on OpenAI's wire ("array schema missing
    items"). It is sent with ``items`` beside the exact positions and the reply validates."""
    data = {"corners": [{"label": "a", "at": [0, 1.5]}], "span": [3, "cm"]}
    route = respx_mock.post(URLS["openai"]).mock(side_effect=openai_schema_check(
        wire_response("openai", mode == "stream", json.dumps(data))))
    sketch = run_turn(make_agent(empty_home, "openai"), mode, "draw", output=Sketch)

    assert sketch == Sketch.model_validate(data)
    sent = request_json(route, 0)["response_format"]["json_schema"]["schema"]
    assert arrays_without_items(sent) == []
    assert sent["properties"]["span"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert response_format(Sketch)["schema"] == sent


class Leg(BaseModel):
    name: Annotated[str, "the stop as the timetable writes it"]


class Journey(BaseModel):
    """A journey: its legs and how long it takes."""

    legs: list[Leg]
    minutes: Annotated[int, "door to door"] | None = None


def test_words_in_annotated_describe_an_output_model_s_fields_at_the_top_and_nested() -> None:
    """``Annotated[int, "door to door"]`` on an output model's field (LangChain's way to
    describe a structured output's field) reached the model as an undescribed field."""
    schema = response_format(Journey)["schema"]
    assert schema["properties"]["minutes"]["description"] == "door to door"
    assert schema["$defs"]["Leg"]["properties"]["name"]["description"] == \
        "the stop as the timetable writes it"


_KEY = "sk-proj-Zx81kQ0pLm3vNc7RtY6uWe2sAd9fGh4j"


class Login(BaseModel):
    """Sign in as the user (the key is sk-proj-Zx81kQ0pLm3vNc7RtY6uWe2sAd9fGh4j)."""

    user: Annotated[str, "who; sk-proj-Zx81kQ0pLm3vNc7RtY6uWe2sAd9fGh4j is theirs"]
    site: str = Field(description="where; not sk-proj-Zx81kQ0pLm3vNc7RtY6uWe2sAd9fGh4j")


@pytest.mark.parametrize("kind", KINDS)
def test_a_key_in_an_output_model_s_descriptions_is_scrubbed_as_a_tool_s_is(
        kind: str, empty_home: Path, respx_mock: Any) -> None:
    """A tool's description and parameter words are scrubbed of keys before they leave; an
    output model's docstring and field descriptions (its schema, OpenAI's response_format,
    Anthropic's output tool) were sent as written."""
    route = respx_mock.post(URLS[kind]).mock(return_value=wire_response(
        kind, False, json.dumps({"user": "ann", "site": "x"})))
    assert run_turn(make_agent(empty_home, kind), "sync", "go", output=Login).user == "ann"

    sent = route.calls[0].request.content.decode()
    assert _KEY not in sent
    assert "Sign in as the user" in sent   # only the key is taken out


def test_an_output_model_made_per_request_and_dropped_is_not_kept_alive() -> None:
    """``create_model`` per request (fields chosen at run time) and dropped: the format cache
    held each class, its validator and schema, until 1,024 others had come after it."""
    def asked() -> weakref.ref[type]:
        made = create_model("Answer", city=(str, ...), at=(tuple[float, float], ...))
        assert response_format(made)["schema"]["required"] == ["city", "at"]
        return weakref.ref(made)

    held = [asked() for _ in range(3)]
    gc.collect()
    assert [ref() for ref in held] == [None, None, None]
