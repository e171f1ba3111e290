"""Partial objects through ``Agent.stream_output`` / ``astream_output`` over the real SDKs (respx):
partial objects while the JSON arrives, the final one validated strictly, a cut attempt's drafts
void on its retry, a stream that never completes an error with no object claimed final; a tool
round's or a paused reply's guess voided, a failover's drafts read afresh, a refusal no object.
How the drafts themselves are read is in ``test_partial_output.py``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from hermes_core.agent.tools.structured import parse_output
from hermes_core.errors import AllProvidersFailed, StructuredOutputError
from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL
from hermes_core.testing import (
    SSE_HEADERS,
    anthropic_blocks_stream,
    anthropic_message,
    anthropic_stream,
    openai_chat_stream,
    web_search_blocks,
)
from hermes_core.testing.builders import _sse
from hermes_core.types import ToolCall
from tests.agent.conftest import FENCED, KEYS, PREAMBLE, URLS, WHOLE, Stop, Trip, make_agent

KINDS = ("openai", "anthropic")
MODES = ("sync", "async")
PIECES = ('{"city": "Os', 'lo", "stops": [{"na', 'me": "Museum", "days": 2}, {"name": "Pa',
          'rk"}]}')


def _openai_sse(pieces: tuple[str, ...], *, finish: bool = True) -> httpx.Response:
    base = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    events: list[tuple[str | None, Any]] = [
        (None, {**base, "choices": [{"index": 0, "delta": {"content": p},
                                     "finish_reason": None}]}) for p in pieces]
    if finish:
        events.append((None, {**base, "choices": [{"index": 0, "delta": {},
                                                   "finish_reason": "stop"}]}))
    return httpx.Response(200, headers=SSE_HEADERS, content=_sse(events))


def _anthropic_sse(pieces: tuple[str, ...], *, finish: bool = True,
                   text: bool = False, lead: tuple[str, ...] = ()) -> httpx.Response:
    """The forced output tool's input in ``pieces``, as the Messages API streams it; ``text``: a
    reply in a text block instead (a proxy that ignores the forced tool); ``lead``: a text block
    before the output tool (a proxy again: the API forces the tool with no words before it)."""
    start = anthropic_message("", output_tokens=1)
    start["stop_reason"] = None
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start})]
    if lead:
        events += [("content_block_start", {"type": "content_block_start", "index": 0,
                                            "content_block": {"type": "text", "text": ""}}),
                   *(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "text_delta", "text": p}})
                     for p in lead),
                   ("content_block_stop", {"type": "content_block_stop", "index": 0})]
    at = 1 if lead else 0
    block = ({"type": "text", "text": ""} if text else
             {"type": "tool_use", "id": "s1", "name": STRUCTURED_OUTPUT_TOOL, "input": {}})
    events.append(("content_block_start", {"type": "content_block_start", "index": at,
                                           "content_block": block}))
    events += [("content_block_delta", {"type": "content_block_delta", "index": at, "delta": (
        {"type": "text_delta", "text": p} if text else
        {"type": "input_json_delta", "partial_json": p})}) for p in pieces]
    if finish:
        events += [("content_block_stop", {"type": "content_block_stop", "index": at}),
                   ("message_delta", {"type": "message_delta", "delta": {
                       "stop_reason": "end_turn" if text else "tool_use", "stop_sequence": None},
                       "usage": {"output_tokens": 9}}),
                   ("message_stop", {"type": "message_stop"})]
    return httpx.Response(200, headers=SSE_HEADERS, content=_sse(events))


def streamed(kind: str, pieces: tuple[str, ...], *, finish: bool = True) -> httpx.Response:
    return (_openai_sse if kind == "openai" else _anthropic_sse)(pieces, finish=finish)


def read(agent: Any, mode: str, message: str = "plan Oslo",
         output: type[BaseModel] = Trip) -> tuple[list[Any], Any]:
    """Every object the stream yields, and the stream (its ``output`` and ``reply``)."""
    if mode == "sync":
        stream = agent.stream_output(message, output=output)
        return list(stream), stream

    async def go() -> tuple[list[Any], Any]:
        stream = agent.astream_output(message, output=output)
        return [obj async for obj in stream], stream
    return asyncio.run(go())


def read_until_error(agent: Any, mode: str) -> tuple[list[Any], Any, BaseException]:
    seen: list[Any] = []
    if mode == "sync":
        stream = agent.stream_output("plan Oslo", output=Trip)
        with pytest.raises(Exception) as caught:
            for obj in stream:
                seen.append(obj)
        return seen, stream, caught.value

    async def go() -> tuple[Any, BaseException]:
        stream = agent.astream_output("plan Oslo", output=Trip)
        try:
            async for obj in stream:
                seen.append(obj)
        except Exception as e:
            return stream, e
        raise AssertionError("the stream ended without an error")
    stream, error = asyncio.run(go())
    return seen, stream, error


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_partial_objects_arrive_as_the_json_streams_and_the_last_is_the_strict_final(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    respx_mock.post(URLS[kind]).mock(return_value=streamed(kind, PIECES))
    agent = make_agent(empty_home, kind)
    seen, stream = read(agent, mode)
    final = Trip.model_validate_json(WHOLE)
    # after the second piece the last stop is an object with no name yet: pydantic's partial
    # mode refuses it, so that piece makes no new object; a word still arriving ("Os", "Pa") is
    # held as the text's would be (it could be the start of a key)
    assert seen == [Trip(city=""),
                    Trip(city="Oslo", stops=[Stop(name="Museum", days=2), Stop(name="")]),
                    final,   # the last piece completes it: leniently read
                    final]   # and the reply's object, validated strictly, always comes last
    assert all(isinstance(obj, Trip) for obj in seen)
    assert stream.output == final and stream.reply.output == final
    assert json.loads(stream.reply.text) == json.loads(WHOLE)
    assert [m.role for m in agent.history] == ["user", "assistant"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_cut_mid_json_is_asked_again_and_its_partials_start_afresh(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        streamed(kind, ('{"city": "Par', 'is", "st'), finish=False),
        streamed(kind, PIECES)])
    agent = make_agent(empty_home, kind)
    seen, stream = read(agent, mode)
    assert route.call_count == 2
    assert seen[:2] == [Trip(city=""), Trip(city="Paris")]   # the cut attempt's progress
    assert seen[2:4] == [Trip(city=""),   # the retry's first: started anew, not "Paris..."
                         Trip(city="Oslo", stops=[Stop(name="Museum", days=2), Stop(name="")])]
    assert seen[-1] == stream.output == Trip.model_validate_json(WHOLE)
    assert [m.role for m in agent.history] == ["user", "assistant"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_cut_on_every_attempt_is_an_error_and_no_object_is_claimed_final(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    respx_mock.post(URLS[kind]).mock(
        side_effect=lambda request: streamed(kind, ('{"city": "Par", "st',), finish=False))
    agent = make_agent(empty_home, kind)
    seen, stream, error = read_until_error(agent, mode)
    assert isinstance(error, AllProvidersFailed)
    assert "incomplete" in str(error)
    assert seen and all(obj == Trip(city="Par") for obj in seen)   # progress only
    assert stream.output is None and stream.reply is None
    assert agent.history == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_final_reply_that_does_not_validate_is_repaired_and_its_partials_restart(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    class Strict(BaseModel):
        city: str
        high_c: float

    respx_mock.post(URLS[kind]).mock(side_effect=[
        streamed(kind, ('{"city": "Par', 'is"}')),   # high_c missing: fails strictly
        streamed(kind, ('{"city": "Ro', 'me", "high_c": 21.5}'))])
    agent = make_agent(empty_home, kind)
    seen, stream = read(agent, mode, output=Strict)
    # the partial mode requires what the JSON has passed: nothing until high_c has started
    assert seen == [Strict(city="Rome", high_c=21.5), Strict(city="Rome", high_c=21.5)]
    assert stream.output == Strict(city="Rome", high_c=21.5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_reply_still_invalid_after_its_repair_raises_with_no_object_final(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    respx_mock.post(URLS[kind]).mock(
        side_effect=lambda request: streamed(kind, ('{"stops": [{"name": "Museum"}]}',)))
    agent = make_agent(empty_home, kind)
    seen, stream, error = read_until_error(agent, mode)
    assert isinstance(error, StructuredOutputError)
    assert "city" in str(error)
    assert seen == [] and stream.output is None   # no partial holds a city: none was shown


def test_stream_output_refuses_a_message_that_is_not_text_where_it_is_called(
        empty_home: Path) -> None:
    agent = make_agent(empty_home, "openai")
    with pytest.raises(TypeError, match="message must be str"):
        agent.stream_output(b"plan", output=Trip)


@pytest.mark.parametrize("kind", KINDS)
def test_closing_the_stream_after_a_partial_object_cancels_the_turn(
        kind: str, empty_home: Path, respx_mock: Any) -> None:
    respx_mock.post(URLS[kind]).mock(return_value=streamed(kind, PIECES))
    agent = make_agent(empty_home, kind)
    stream = agent.stream_output("plan Oslo", output=Trip)
    assert next(iter(stream)) == Trip(city="")
    stream.close()
    assert stream.output is None and agent.history == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_key_the_model_writes_into_the_json_is_redacted_in_every_partial_object(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """The drafts are shown as the text is: a key the model echoes (here the agent's own, split
    across pieces) never reaches a partial object, as it never reaches the final one."""
    key = KEYS[kind]
    whole = json.dumps({"city": f"Oslo {key} ok"})
    at = whole.index(key)
    pieces = (whole[:at + 6], whole[at + 6:at + 20], whole[at + 20:-6], whole[-6:])
    respx_mock.post(URLS[kind]).mock(return_value=streamed(kind, pieces))
    agent = make_agent(empty_home, kind)
    seen, stream = read(agent, mode)
    assert stream.output is not None and key not in stream.output.city
    assert seen and all(key[:10] not in obj.city for obj in seen), seen
    assert seen[-1] == stream.output


@pytest.mark.parametrize("mode", MODES)
def test_an_openai_reply_sent_as_one_json_string_streams_partial_objects_then_the_final(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """Failed before: the final object alone (the drafts read nothing until the string closed)."""
    text = json.dumps(WHOLE)
    respx_mock.post(URLS["openai"]).mock(return_value=_openai_sse(
        tuple(text[at:at + 11] for at in range(0, len(text), 11))))
    seen, stream = read(make_agent(empty_home, "openai"), mode)
    assert seen[0] == Trip(city="Oslo")   # the first piece ends before the city's value
    assert seen[-1] == stream.output == Trip.model_validate_json(WHOLE)
    assert len(seen) >= 3


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pieces", [PIECES, PREAMBLE, FENCED], ids=["bare", "preamble", "fenced"])
def test_an_anthropic_reply_in_text_instead_of_the_output_tool_streams_partial_objects(
        pieces: tuple[str, ...], mode: str, empty_home: Path, respx_mock: Any) -> None:
    """The final object is parsed from the text; the text streamed as text, not drafts, so no
    partial object was shown. Failed before (the final alone)."""
    respx_mock.post(URLS["anthropic"]).mock(return_value=_anthropic_sse(pieces, text=True))
    agent = make_agent(empty_home, "anthropic")
    seen, stream = read(agent, mode)
    final = stream.output
    assert final == parse_output("".join(pieces), Trip)
    assert seen[0] == Trip(city="") and seen[-1] == final
    assert len(seen) >= 3
    assert stream.reply.text == "".join(pieces)   # the text whole, as it came
    assert [m.role for m in agent.history] == ["user", "assistant"]


@pytest.mark.parametrize("mode", MODES)
def test_an_anthropic_reply_with_text_and_the_output_tool_is_the_tool_s_input_alone(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """Behind a proxy a reply may hold words before the output tool, here an example of the
    shape. ``chat`` takes the tool's input alone; the stream joined the text and the tool's
    JSON, so every draft and the final read the example (the first object of the shape).
    Failed before (Paris throughout, the final too). The text's own partial object shows
    while it arrives (its tool is not known yet); the tool's input starts them afresh."""
    lead = ('For example {"city": "Pa', 'ris"} would do. ', "Here it is:")
    respx_mock.post(URLS["anthropic"]).mock(return_value=_anthropic_sse(PIECES, lead=lead))
    agent = make_agent(empty_home, "anthropic")
    seen, stream = read(agent, mode)
    assert stream.output == Trip.model_validate_json(WHOLE)
    assert stream.reply.text == WHOLE   # as ``chat``'s: the tool's input, no words before it
    after = seen[[obj.city for obj in seen].index("Paris") + 1:]
    assert after[0] == Trip(city="") and len(after) >= 3, seen   # anew from the tool's input
    assert all(obj.city != "Paris" for obj in after), seen


@pytest.mark.parametrize("mode", MODES)
def test_an_anthropic_text_reply_cut_mid_json_is_asked_again_unseen(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """As the output tool's input is: held until whole, so a cut is retried and none of the cut
    attempt's text is shown (it was, then the retry's after it). Failed before."""
    route = respx_mock.post(URLS["anthropic"]).mock(side_effect=[
        _anthropic_sse(('{"city": "Par', 'is", "st'), finish=False, text=True),
        _anthropic_sse(PIECES, text=True)])
    agent = make_agent(empty_home, "anthropic")
    if mode == "sync":
        texts = list(agent.stream("plan Oslo", output=Trip))
    else:
        async def go() -> list[str]:
            return [t async for t in agent.astream("plan Oslo", output=Trip)]
        texts = asyncio.run(go())
    assert route.call_count == 2
    assert "".join(texts) == "".join(PIECES)   # nothing of the cut attempt shown
    assert agent.last_reply.output == Trip.model_validate_json(WHOLE)


def _after_the_guess(seen: list[Any]) -> list[Any]:
    """The objects shown after the last one a tool round's guess (Paris) made."""
    cities = [obj.city for obj in seen]
    assert "Paris" in cities, seen   # the guess showed live, while its round arrived
    return seen[len(cities) - cities[::-1].index("Paris"):]


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_round_s_text_is_voided_and_the_answer_s_partial_objects_start_anew(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A tool round's text is not the reply: the reply is the last round's. The drafts ran on
    across rounds, so an object in that text (a guess the tool then corrects) stood before the
    answer's in every read, and the answer's partial objects never showed: only the final did.
    Failed before ([Paris, the final]). The guess shows while its round arrives (nothing says
    it is a tool round's before its call) and the call's start voids it: the answer's objects
    start anew after it, none a guess."""
    tool_round = anthropic_stream(['My guess is {"city": "Paris"}; checking.'],
                                  tool_calls=[ToolCall("t1", "lookup", "{}")])
    respx_mock.post(URLS["anthropic"]).mock(side_effect=[
        httpx.Response(200, headers=SSE_HEADERS, content=tool_round), _anthropic_sse(PIECES)])
    agent = make_agent(empty_home, "anthropic")

    @agent.tool
    def lookup() -> str:
        """Where the user is going."""
        return "Oslo"

    seen, stream = read(agent, mode)
    assert stream.output == Trip.model_validate_json(WHOLE)
    after = _after_the_guess(seen)
    assert after[0] == Trip(city=""), seen   # the answer's, from its start
    assert len(after) >= 3 and after[-1] == stream.output, seen


@pytest.mark.parametrize("mode", MODES)
def test_a_paused_reply_s_guess_is_voided_when_its_continuation_answers_through_the_output_tool(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A paused reply's words (a guess) show as a partial object; its continuation goes on in
    the same drafts, so the output tool's input was read after the guess: no partial object of
    the answer showed and the final read the guess. Failed before ([Paris, Paris]). The output
    tool's start voids the paused words' drafts, as it does words in its own message."""
    paused = anthropic_blocks_stream(web_search_blocks('My guess is {"city": "Paris"}. '),
                                     stop_reason="pause_turn")
    route = respx_mock.post(URLS["anthropic"]).mock(side_effect=[
        httpx.Response(200, headers=SSE_HEADERS, content=paused), _anthropic_sse(PIECES)])
    agent = make_agent(empty_home, "anthropic")
    seen, stream = read(agent, mode)
    assert route.call_count == 2
    assert stream.output == Trip.model_validate_json(WHOLE) == seen[-1]
    assert stream.reply.text == WHOLE   # the tool's input alone, as ``chat``'s
    after = _after_the_guess(seen)
    assert after[0] == Trip(city="") and len(after) >= 3, seen   # anew from the tool's input


def _lookup_agent(home: Path, kind: str) -> Any:
    agent = make_agent(home, kind)

    @agent.tool
    def lookup() -> str:
        """Where the user is going."""
        return "Oslo"

    return agent


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_structured_stream_with_tools_offered_shows_partial_objects_live(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """With the author's tools offered (``skill_view`` is, on every turn with skills) the
    answer's partial objects show as its JSON arrives, then the final. Failed before (OpenAI:
    one partial object at the end, as the choice finished; Anthropic's words behind a proxy
    likewise)."""
    answer = _openai_sse(PIECES) if kind == "openai" else _anthropic_sse(PIECES, text=True)
    respx_mock.post(URLS[kind]).mock(return_value=answer)
    seen, stream = read(_lookup_agent(empty_home, kind), mode)
    final = Trip.model_validate_json(WHOLE)
    assert stream.output == final == seen[-1]
    assert seen[0] == Trip(city="") and len(seen) >= 3, seen   # from the first piece on


@pytest.mark.parametrize("mode", MODES)
def test_an_openai_tool_round_s_content_is_voided_when_its_call_arrives(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """OpenAI's content is its answer channel, and a round is a tool round only at its first
    call, after its content: a guess in that content shows as a partial object while it
    arrives, and the call voids it, so the answer's objects start anew and none is the guess.
    Failed before (the guess never shown: the content's drafts waited for the finish)."""
    tool_round = openai_chat_stream(('{"city": "Par', 'is"}'),
                                    tool_calls=[ToolCall("t1", "lookup", "{}")])
    respx_mock.post(URLS["openai"]).mock(side_effect=[
        httpx.Response(200, headers=SSE_HEADERS, content=tool_round), _openai_sse(PIECES)])
    seen, stream = read(_lookup_agent(empty_home, "openai"), mode)
    assert stream.output == Trip.model_validate_json(WHOLE) == seen[-1]
    after = _after_the_guess(seen)
    assert after[0] == Trip(city="") and len(after) >= 3, seen   # anew from the answer's start


def _cut_as_the_call_begins(body: bytes) -> bytes:
    """``body`` (an SSE stream) ended cleanly just after the event that begins its first tool
    call (nothing of the call committed): a proxy cutting the connection there."""
    events = body.split(b"\n\n")
    at = next(i for i, e in enumerate(events)
              if b'"tool_calls": [' in e or b'"type": "tool_use"' in e)
    return b"\n\n".join(events[:at + 1]) + b"\n\n"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_tool_round_cut_after_its_void_is_asked_again_and_its_tool_runs_once(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """The void commits nothing: a tool round cut after its call began is asked again (its
    call never run), the retry's guess voided in turn, and the answer's objects start anew."""
    build = openai_chat_stream if kind == "openai" else anthropic_stream
    call = [ToolCall("t1", "lookup", "{}")]
    tool_round = build(('{"city": "Par', 'is"}'), tool_calls=call)
    answer = _openai_sse(PIECES) if kind == "openai" else _anthropic_sse(PIECES)
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        httpx.Response(200, headers=SSE_HEADERS, content=_cut_as_the_call_begins(tool_round)),
        httpx.Response(200, headers=SSE_HEADERS, content=tool_round), answer])
    agent, ran = make_agent(empty_home, kind), []

    @agent.tool
    def lookup() -> str:
        """Where the user is going."""
        ran.append(1)
        return "Oslo"

    seen, stream = read(agent, mode)
    assert route.call_count == 3 and ran == [1]
    assert stream.output == Trip.model_validate_json(WHOLE) == seen[-1]
    after = _after_the_guess(seen)
    assert after[0] == Trip(city="") and len(after) >= 3, seen


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pieces", [FENCED, PREAMBLE], ids=["fenced", "preamble"])
def test_a_fenced_or_introduced_openai_reply_streams_partial_objects_then_the_final(
        pieces: tuple[str, ...], mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A server that ignores ``response_format`` answers in a fence or after a sentence: the
    final object parsed, but no partial one was shown. Failed before."""
    respx_mock.post(URLS["openai"]).mock(return_value=_openai_sse(pieces))
    agent = make_agent(empty_home, "openai")
    seen, stream = read(agent, mode)
    final = Trip(city="Oslo", stops=[Stop(name="Museum", days=2)])
    assert seen[0] == Trip(city="")
    assert seen[-1] == stream.output == final
    assert len(seen) >= 3   # partials before the final, not the final alone


# ---------------------------------------------------------------- failover to a second provider


def _failover_agent(home: Path) -> Any:
    from hermes_core.agent.agent import Agent
    from hermes_core.config import load_settings
    from hermes_core.providers.anthropic import AnthropicProvider
    from hermes_core.providers.openai import OpenAIProvider

    cfg = {"home": str(home), "context_engine": {"enabled": False},
           "credentials": {k: {"keys": [{"key": KEYS[k]}]} for k in KINDS},
           "llm": {"routing": {"default_model": "gpt-4o-mini", "providers": [
               {"name": "openai", "priority": 1, "models": ["gpt-4o-mini"]},
               {"name": "anthropic", "priority": 2, "models": ["claude-sonnet-4-5"]}]}}}
    return Agent(load_settings(cfg, env={}),
                 providers={"openai": OpenAIProvider(), "anthropic": AnthropicProvider()},
                 loop_options={"sleep": lambda s: None, "audit_path": False})


@pytest.mark.parametrize("mode", MODES)
def test_drafts_restart_on_a_failover_and_the_final_is_the_second_providers_redacted(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """OpenAI cuts mid-JSON on every attempt; Anthropic answers, its JSON holding the agent's
    own Anthropic key split across pieces. No test crossed providers."""
    key = KEYS["anthropic"]
    first = respx_mock.post(URLS["openai"]).mock(
        side_effect=lambda request: _openai_sse(('{"city": "Par', 'is", "st'), finish=False))
    whole = json.dumps({"city": f"Oslo {key} ok", "stops": [{"name": "Museum"}]})
    at = whole.index(key)
    second = respx_mock.post(URLS["anthropic"]).mock(return_value=_anthropic_sse(
        (whole[:at + 6], whole[at + 6:at + 20], whole[at + 20:-30], whole[-30:])))
    agent = _failover_agent(empty_home)
    try:
        seen, stream = read(agent, mode)
    finally:
        agent.close(wait_warm=False, summarize=False)
    assert first.call_count >= 1 and second.call_count == 1
    assert stream.reply.provider == "anthropic"
    final = stream.output
    assert final is not None and final.city.startswith("Oslo ") and final.city.endswith(" ok")
    assert key[:10] not in final.city and final.stops == [Stop(name="Museum")]
    assert seen[-1] == final
    # the cut attempts' progress, then the second provider's drafts read afresh (joined on to
    # the cut '{"city": "Paris", "st' they would make no object at all)
    second_at = next(i for i, obj in enumerate(seen) if obj.city.startswith("Oslo"))
    assert set(obj.city for obj in seen[:second_at]) == {"", "Paris"}
    assert all(obj.city.startswith("Oslo") for obj in seen[second_at:])
    assert second_at < len(seen) - 2   # partials of the second provider's reply, then its final
    assert all(key[:10] not in obj.city for obj in seen), seen


# ---------------------------------------------------------------- a refusal


def _refused_openai(refusal: str) -> httpx.Response:
    base = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    half = len(refusal) // 2
    events: list[tuple[str | None, Any]] = [
        (None, {**base, "choices": [{"index": 0, "finish_reason": None, "delta": {
            "role": "assistant", "content": None, "refusal": refusal[:half]}}]}),
        (None, {**base, "choices": [{"index": 0, "finish_reason": "stop",
                                     "delta": {"refusal": refusal[half:]}}]})]
    return httpx.Response(200, headers=SSE_HEADERS, content=_sse(events))


@pytest.mark.parametrize("mode", MODES)
def test_a_refused_openai_reply_shows_no_partial_object_and_raises_refused(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A refusal is not a draft of the object: its words (here quoting an object of the shape)
    came as drafts and, once drafts were unwrapped as the final reply is (a sentence before the
    object), made a partial object of them (failed with that change alone)."""
    respx_mock.post(URLS["openai"]).mock(return_value=_refused_openai(
        'I will not plan {"city": "Pyongyang"} trips, sorry.'))
    agent = make_agent(empty_home, "openai")
    seen, stream, error = read_until_error(agent, mode)
    assert isinstance(error, StructuredOutputError) and error.refused
    assert seen == [] and stream.output is None


def _read_voids(agent: Any, mode: str) -> list[tuple[str, int]]:
    """Each object's city with the stream's ``voids`` read beside it."""
    if mode == "sync":
        stream = agent.stream_output("plan Oslo", output=Trip)
        return [(obj.city, stream.voids) for obj in stream]

    async def go() -> list[tuple[str, int]]:
        stream = agent.astream_output("plan Oslo", output=Trip)
        return [(obj.city, stream.voids) async for obj in stream]
    return asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_the_stream_counts_the_voids_of_the_partial_objects_it_yielded(
        mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A paused reply's guess shows, then its continuation's output tool voids it: the objects
    after the void read one void more, those before none; a stream with no void reads none
    (its round's fresh start voids nothing shown)."""
    paused = anthropic_blocks_stream(web_search_blocks('My guess is {"city": "Paris"}. '),
                                     stop_reason="pause_turn")
    respx_mock.post(URLS["anthropic"]).mock(side_effect=[
        httpx.Response(200, headers=SSE_HEADERS, content=paused), _anthropic_sse(PIECES),
        _anthropic_sse(PIECES)])
    agent = make_agent(empty_home, "anthropic")
    seen = _read_voids(agent, mode)
    guessed = [voids for city, voids in seen if city == "Paris"]
    answered = seen[len(guessed):]
    assert guessed and set(guessed) == {0}, seen
    assert answered and {voids for _, voids in answered} == {1}, seen
    assert {voids for _, voids in _read_voids(agent, mode)} == {0}


class Where(BaseModel):
    city: str


def _stopped_at(agent: Any, mode: str, last: int) -> tuple[int, int, Any]:
    """Read objects up to the ``last``-th (from 0), then stop (break, then close): the stream's
    ``voids`` read at the break and after the close, and its ``output``."""
    if mode == "sync":
        stream = agent.stream_output("where?", output=Where)
        for i, _ in enumerate(stream):
            if i == last:
                break
        at_break = stream.voids
        stream.close()
        return at_break, stream.voids, stream.output

    async def go() -> tuple[int, int, Any]:
        stream = agent.astream_output("where?", output=Where)
        i = 0
        async for _ in stream:
            if i == last:
                break
            i += 1
        at_break = stream.voids
        await stream.aclose()
        return at_break, stream.voids, stream.output
    return asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize(("last", "voids"), [(1, 0), (2, 1)],
                         ids=["at the guess", "after the void"])
def test_a_stream_stopped_early_keeps_the_voids_it_had_yielded_and_no_output(
        last: int, voids: int, kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    """A tool round's guessed object shows until its call begins (the void). An author who stops
    at the guess has read no void and gets no ``output`` (only the final object is one); one who
    stops after the void has read it; closing moves neither, and the turn leaves no trace."""
    from tests.agent.conftest import wire_response

    guess = (ToolCall("call_1", "add", '{"a": 1, "b": 2}'),)
    respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, True, '{"city": "Paris"}', guess),
        wire_response(kind, True, '{"city": "Oslo"}')])
    agent = make_agent(empty_home, kind)

    @agent.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    # the objects: {} and Paris (the guess), the void, {} and Oslo as the answer arrives, Oslo
    assert _stopped_at(agent, mode, last) == (voids, voids, None)
    assert agent.history == []
