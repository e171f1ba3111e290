"""Tests of ``hermes_core/providers/anthropic.py``: tools, structured output and paused replies.

How a request offers tools, tool choice, stop sequences and thinking; the output tool that carries
a structured answer (its input the text, drafts voided when an author's tool begins, words beside
it counted, never logged); tool input streamed in pieces; paused replies and their containers.
(The adapter's other tests are in ``test_anthropic.py`` and ``test_anthropic_stream_order.py``.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
import pytest

from hermes_core.providers._sdk import delta_completion
from hermes_core.providers.anthropic import AnthropicProvider, render_anthropic, supports_thinking
from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL, CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    SSE_HEADERS,
    anthropic_blocks_stream,
    anthropic_message,
    anthropic_stream,
    code_execution_blocks,
    web_search_blocks,
)
from hermes_core.testing.builders import _sse
from hermes_core.types import Completion, Credential, Delta, Message, Prompt, ToolCall, ToolSpec
from tests.providers.conftest import ANTHROPIC_CRED as CRED
from tests.providers.conftest import ANTHROPIC_OPTS as OPTS
from tests.providers.conftest import ANTHROPIC_PROMPT as PROMPT
from tests.providers.conftest import EARLIER_ROUND, anthropic_last, reply_text

TOOL = ToolSpec("get_weather", "Weather.", {"type": "object", "properties": {
    "city": {"type": "string"}}, "required": ["city"]})


TOOL_PROMPT = Prompt(system="s", messages=(Message("user", "hi"),), tools=(TOOL,))


BARE = Prompt(system="s", messages=(Message("user", "hi"),))


TOOL_CRED = Credential("anthropic", "sk-ant-anthropicTEST0123456789abcdef")


RF = {"name": "Forecast", "schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                     "required": ["city"]}, "description": "A forecast."}


@pytest.mark.parametrize("choice, wire", [
    ("auto", {"type": "auto"}), ("none", {"type": "none"}), ("required", {"type": "any"}),
    ("get_weather", {"type": "tool", "name": "get_weather"}),
])
def test_tool_choice_is_encoded(choice: str, wire: Any) -> None:
    assert render_anthropic(TOOL_PROMPT, "claude-sonnet-4-5", CallOptions(tool_choice=choice))[
        "tool_choice"] == wire


def test_stop_sequences_are_sent_and_seed_is_not() -> None:
    payload = render_anthropic(BARE, "claude-3-5-haiku", CallOptions(stop=("END",), seed=3))
    assert payload["stop_sequences"] == ["END"] and "seed" not in payload


def test_extended_thinking_only_where_the_model_and_request_allow() -> None:
    opts = CallOptions(max_tokens=500, temperature=0.3, reasoning_effort="low")
    payload = render_anthropic(BARE, "claude-sonnet-4-5", opts)
    assert payload["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert payload["max_tokens"] == 2548 and "temperature" not in payload
    assert "thinking" not in render_anthropic(BARE, "claude-3-5-haiku", opts)
    assert supports_thinking("claude-opus-4-1") and not supports_thinking("claude-3-5-sonnet")
    # a tool round's follow-up must replay the round's thinking blocks: without them (a round
    # another provider kind answered) thinking is off there; with them, on, blocks first
    follow = Prompt(system="s", messages=(
        Message("user", "hi"), Message("assistant", "", (ToolCall("c", "get_weather"),)),
        Message("tool", "sunny", tool_call_id="c")), tools=(TOOL,))
    assert "thinking" not in render_anthropic(follow, "claude-sonnet-4-5", opts)
    block = {"type": "thinking", "thinking": "t", "signature": "s"}
    kept = Prompt(system="s", messages=(
        Message("user", "hi"), Message("assistant", "", (ToolCall("c", "get_weather"),),
                                       reasoning=(block,)),
        Message("tool", "sunny", tool_call_id="c")), tools=(TOOL,))
    replayed = render_anthropic(kept, "claude-sonnet-4-5", opts)
    assert replayed["thinking"]["type"] == "enabled"
    assert replayed["messages"][1]["content"][0] == block
    budget = CallOptions(thinking_budget_tokens=5000)
    assert render_anthropic(BARE, "claude-sonnet-4-5", budget)["thinking"]["budget_tokens"] == 5000


def test_structured_output_forces_the_output_tool() -> None:
    alone = render_anthropic(BARE, "claude-sonnet-4-5", CallOptions(response_format=RF,
                                                                   reasoning_effort="high"))
    assert alone["tool_choice"] == {"type": "tool", "name": STRUCTURED_OUTPUT_TOOL}
    assert alone["tools"] == [{"name": STRUCTURED_OUTPUT_TOOL, "description": "A forecast.",
                               "input_schema": RF["schema"]}]
    assert "thinking" not in alone   # the API refuses thinking with a forced tool
    with_tools = render_anthropic(TOOL_PROMPT, "claude-sonnet-4-5", CallOptions(response_format=RF))
    assert with_tools["tool_choice"] == {"type": "any"}
    assert [t["name"] for t in with_tools["tools"]] == ["get_weather", STRUCTURED_OUTPUT_TOOL]


@pytest.mark.parametrize("streamed", [False, True])
def test_the_output_tool_input_comes_back_as_the_text(respx_mock: Any, streamed: bool) -> None:
    call = ToolCall("s1", STRUCTURED_OUTPUT_TOOL, '{"city": "Oslo"}')
    if streamed:
        resp = httpx.Response(200, content=anthropic_stream((), tool_calls=[call]),
                              headers=SSE_HEADERS)
    else:
        resp = httpx.Response(200, json=anthropic_message("", tool_calls=[call]))
    respx_mock.post(ANTHROPIC_URL).mock(return_value=resp)
    provider, opts = AnthropicProvider(), CallOptions(response_format=RF)
    if streamed:
        deltas = list(provider.stream(BARE, "claude-sonnet-4-5", TOOL_CRED, opts))
        text = "".join(d.text for d in deltas)
        assert all(d.tool_call is None for d in deltas)
    else:
        done = provider.complete(BARE, "claude-sonnet-4-5", TOOL_CRED, opts)
        text = done.text
        assert done.tool_calls == ()
    assert json.loads(text) == {"city": "Oslo"}


def _anthropic_s_rule(request: httpx.Request) -> httpx.Response:
    """The API's answer as it checks tool blocks: a request holding ``tool_use`` or
    ``tool_result`` blocks that defines no tools is refused (400); else a reply, whole or
    streamed as asked."""
    body = json.loads(request.content)
    kinds = {b.get("type") for m in body["messages"] for b in m["content"]}
    if kinds & {"tool_use", "tool_result"} and not body.get("tools"):
        return httpx.Response(400, json={"type": "error", "error": {
            "type": "invalid_request_error",
            "message": "Requests which include `tool_use` or `tool_result` blocks must define "
                       "tools."}})
    if body.get("stream"):
        return httpx.Response(200, content=anthropic_stream(["It was mild."]),
                              headers=SSE_HEADERS)
    return httpx.Response(200, json=anthropic_message("It was mild."))


@pytest.mark.parametrize("how", ["complete", "acomplete", "stream", "astream"])
def test_a_history_with_tool_rounds_asked_on_without_tools_declares_them_never_to_be_called(
        respx_mock: Any, how: str) -> None:
    """A history holding a tool round, sent in a request that offers no tools (an agent whose
    tools were removed, a history handed to an agent without them), was refused by the API with
    a 400, every turn. The tools the history called are declared (by name: the history keeps
    no schema) with ``tool_choice`` none, and the round goes as the blocks it was."""
    route = respx_mock.post(ANTHROPIC_URL).mock(side_effect=_anthropic_s_rule)
    provider, model = AnthropicProvider(), "claude-sonnet-4-5"
    prompt = Prompt(system="s", messages=EARLIER_ROUND)
    text = reply_text(provider, prompt, model, TOOL_CRED, OPTS, how)
    sent = json.loads(route.calls.last.request.content)
    assert text == "It was mild."
    assert [t["name"] for t in sent["tools"]] == ["get_weather"]
    assert sent["tool_choice"] == {"type": "none"}
    assert [b["type"] for m in sent["messages"] for b in m["content"]] == [
        "text", "text", "tool_use", "tool_result", "text", "text"]


def test_a_request_offering_tools_or_its_output_tool_declares_none_of_the_history_s() -> None:
    """Only a request that defines no tool declares the history's: one offering tools, or
    asking for structure (its output tool), defines some already, and its tool choice is its
    own."""
    offered = render_anthropic(Prompt(system="s", messages=EARLIER_ROUND, tools=(
        ToolSpec("get_time", "Time.", {"type": "object"}),)), "claude-sonnet-4-5", OPTS)
    structured = render_anthropic(Prompt(system="s", messages=EARLIER_ROUND),
                                  "claude-sonnet-4-5", replace(OPTS, response_format=RF))
    assert ([t["name"] for t in offered["tools"]], offered.get("tool_choice")) == (
        ["get_time"], None)
    assert ([t["name"] for t in structured["tools"]], structured["tool_choice"]) == (
        [STRUCTURED_OUTPUT_TOOL], {"type": "tool", "name": STRUCTURED_OUTPUT_TOOL})


UNASKED = ToolCall("s2", STRUCTURED_OUTPUT_TOOL, '{"city": "Oslo"}')


#: How a reply reaches the adapter: asked whole (its JSON, or an event stream a proxy sent
#: instead) or streamed (events, sync or async, or the whole JSON a gateway sent instead).
HOWS = ["complete", "acomplete", "complete-events", "stream", "astream", "stream-json"]


def _asked(respx_mock: Any, stream_deltas: Callable[..., list[Any]], how: str, prompt: Prompt,
           options: CallOptions, words: str, calls: list[ToolCall]
           ) -> tuple[Completion, list[Delta]]:
    """The reply (``words``, then ``calls``) as ``how`` brings it, and the stream's pieces (none
    for a whole request)."""
    if how in ("complete-events", "stream", "astream"):
        body = anthropic_stream([words] if words else [], tool_calls=calls)
        answer = httpx.Response(200, content=body, headers=SSE_HEADERS)
    else:
        answer = httpx.Response(200, json=anthropic_message(words, tool_calls=calls))
    respx_mock.post(ANTHROPIC_URL).mock(return_value=answer)
    provider, model = AnthropicProvider(), "claude-sonnet-4-5"
    if how in ("complete", "complete-events"):
        return provider.complete(prompt, model, TOOL_CRED, options), []
    if how == "acomplete":
        return asyncio.run(provider.acomplete(prompt, model, TOOL_CRED, options)), []
    deltas = stream_deltas(provider, prompt, model, TOOL_CRED, options,
                           use_async=how == "astream")
    return delta_completion(deltas, model, provider.name), deltas


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("words", ["", "Let me check. "])
def test_an_output_tool_call_in_a_request_that_asked_for_no_structure_is_an_ordinary_call(
        respx_mock: Any, stream_deltas: Callable[..., list[Any]], how: str, words: str) -> None:
    """A model calls ``structured_output`` when the request offered no such tool (it saw it in
    an earlier, structured, turn, or made it up): a call like any other, for the tool runner to
    answer as unknown, its words the reply's text, live, no drafts. Failed before: its input
    was the reply's text, marked as the structured answer, and no call was left to answer."""
    done, deltas = _asked(respx_mock, stream_deltas, how, TOOL_PROMPT, CallOptions(), words,
                          [UNASKED])
    assert done.tool_calls == (UNASKED,)
    assert (done.text, done.from_output_tool) == (words, False)
    assert not any(d.draft or d.redraft or d.from_output_tool for d in deltas)


@pytest.mark.parametrize("how", HOWS)
def test_the_output_tool_s_input_is_the_answer_only_in_a_request_that_offered_it(
        respx_mock: Any, stream_deltas: Callable[..., list[Any]], how: str) -> None:
    """The same reply to a structured request (the tool offered and forced): its input is the
    answer, not a call."""
    done, _ = _asked(respx_mock, stream_deltas, how, TOOL_PROMPT,
                     CallOptions(response_format=RF), "", [UNASKED])
    assert done.tool_calls == ()
    assert (json.loads(done.text), done.from_output_tool) == ({"city": "Oslo"}, True)


@pytest.mark.parametrize("how", HOWS)
def test_a_structured_request_answered_in_words_is_those_words_whole(
        respx_mock: Any, stream_deltas: Callable[..., list[Any]], how: str) -> None:
    """A structured request whose model (or proxy) answers in text, not through the forced
    tool: the text is the reply, given whole (no piece of it as text before the end), not
    marked as the tool's input; the agent then parses or repairs it."""
    done, deltas = _asked(respx_mock, stream_deltas, how, BARE, CallOptions(response_format=RF),
                          '{"city": "Oslo"}', [])
    assert (done.text, done.tool_calls, done.from_output_tool) == ('{"city": "Oslo"}', (), False)
    assert [d.text for d in deltas if d.text] == ([] if not deltas else ['{"city": "Oslo"}'])


def _claude(*blocks: tuple[dict[str, Any], list[dict[str, Any]]], stop_reason: str = "tool_use",
            **start_fields: Any) -> bytes:
    """A claude stream as the API orders it: ``message_start``, each (block, its deltas) started,
    streamed and stopped at its place's index, the stop reason, ``message_stop``."""
    start = anthropic_message("", **(start_fields or {"id": "m"}))
    start["stop_reason"] = None
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start",
                                                                "message": start})]
    for i, (block, deltas) in enumerate(blocks):
        events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": block}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": i,
                                            "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    return _sse([*events, ("message_delta", {"type": "message_delta", "usage": {
        "output_tokens": 9}, "delta": {"stop_reason": stop_reason, "stop_sequence": None}}),
                 ("message_stop", {"type": "message_stop"})])


def _tool(cid: str, name: str, *pieces: str, **whole: Any) -> tuple[dict[str, Any], list[Any]]:
    """A tool_use block (its ``input`` in the start when given) and its input's pieces."""
    return ({"type": "tool_use", "id": cid, "name": name, "input": whole.get("input", {})},
            [{"type": "input_json_delta", "partial_json": p} for p in pieces])


def _fragmented_stream() -> bytes:
    return _claude(_tool("c1", "get_weather", '{"ci', 'ty": "Oslo"}'),
                   _tool("c2", "add", '{"a": 1,', ' "b": 2}'))


@pytest.mark.parametrize("use_async", [False, True])
def test_streamed_tool_input_pieces_are_joined(respx_mock: Any, use_async: bool,
                                               stream_deltas: Callable[..., list[Any]]) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_fragmented_stream(), headers=SSE_HEADERS))
    deltas = stream_deltas(AnthropicProvider(), TOOL_PROMPT, "claude-sonnet-4-5", TOOL_CRED,
                           CallOptions(), use_async=use_async)
    calls = [d.tool_call for d in deltas if d.tool_call is not None]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("c1", "get_weather", {"city": "Oslo"}), ("c2", "add", {"a": 1, "b": 2})]
    assert deltas[-1].finish_reason == "tool_use"


@pytest.mark.parametrize("use_async", [False, True])
def test_the_output_tool_input_comes_as_drafts_then_whole_as_the_text(
        respx_mock: Any, use_async: bool, stream_deltas: Callable[..., list[Any]]) -> None:
    """The structured answer's pieces are progress (``Delta.draft``), never text; the text is
    the whole input at its block's end. An ordinary tool's input makes no drafts."""
    body = _claude(_tool("s1", STRUCTURED_OUTPUT_TOOL, '{"ci', 'ty": "Oslo"}'))
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, content=body,
                                                                     headers=SSE_HEADERS))
    provider, opts = AnthropicProvider(), CallOptions(response_format=RF)
    deltas = stream_deltas(provider, BARE, "claude-sonnet-4-5", TOOL_CRED, opts,
                           use_async=use_async)
    assert [d.draft for d in deltas if d.draft] == ['{"ci', 'ty": "Oslo"}']
    assert [d.text for d in deltas if d.text] == ['{"city": "Oslo"}']
    assert not any(d.draft and d.text for d in deltas)
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_fragmented_stream(), headers=SSE_HEADERS))
    tools = list(provider.stream(TOOL_PROMPT, "claude-sonnet-4-5", TOOL_CRED, CallOptions()))
    assert not any(d.draft for d in tools)


def test_words_before_the_output_tool_are_drafts_voided_when_the_tool_begins(
        respx_mock: Any) -> None:
    """A proxy ignoring the forced tool may write words before it: held as a text reply is,
    they came whole before the tool's input, so the reply's text joined them (``chat`` takes
    the input alone). Now the tool's start voids their drafts and the text is its input alone.
    Failed before (no redraft; the text the words, then the input)."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_words_then_the_output_tool(), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(BARE, "claude-sonnet-4-5", TOOL_CRED,
                                             CallOptions(response_format=RF)))
    assert [(d.draft, d.redraft) for d in deltas if d.draft or d.redraft] == [
        ('e.g. {"city": "Paris"}', False), ("", True), ('{"city": "Oslo"}', False)]
    assert [d.text for d in deltas if d.text] == ['{"city": "Oslo"}']


@pytest.mark.parametrize("mode", ["complete", "acomplete"])
def test_a_whole_request_answered_with_words_and_the_output_tool_as_events_is_the_input_alone(
        respx_mock: Any, mode: str) -> None:
    """A proxy that streams a whole request's answer: read as a stream, the words before the
    output tool were joined to its input (``chat`` then read the words' example, Paris), where
    a JSON answer and a stream are the input alone. Failed before (the words, then the input)."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_words_then_the_output_tool(), headers=SSE_HEADERS))
    provider, options = AnthropicProvider(), CallOptions(response_format=RF)
    done = (provider.complete(BARE, "claude-sonnet-4-5", TOOL_CRED, options) if mode == "complete"
            else asyncio.run(provider.acomplete(BARE, "claude-sonnet-4-5", TOOL_CRED, options)))
    assert done.text == '{"city": "Oslo"}' and done.tool_calls == ()


@pytest.mark.parametrize("mode", ["stream", "complete-events", "complete-json"])
def test_words_dropped_beside_the_output_tool_are_logged_as_a_count_never_the_words(
        respx_mock: Any, caplog: pytest.LogCaptureFixture, mode: str) -> None:
    """The output tool's input is the answer and words beside it are dropped (a stream, a whole
    request answered with events or as JSON alike): now said at debug level, by their length
    alone (they may hold a key). Failed before (nothing logged)."""
    if mode == "complete-json":
        body = anthropic_message('e.g. {"city": "Paris"}', tool_calls=[
            ToolCall("s1", STRUCTURED_OUTPUT_TOOL, '{"city": "Oslo"}')])
        respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json=body))
    else:
        respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
            200, content=_words_then_the_output_tool(), headers=SSE_HEADERS))
    provider, options = AnthropicProvider(), CallOptions(response_format=RF)
    caplog.set_level("DEBUG", logger="hermes_core.providers.anthropic")
    if mode == "stream":
        text = "".join(d.text for d in provider.stream(BARE, "claude-sonnet-4-5", TOOL_CRED,
                                                       options))
    else:
        text = provider.complete(BARE, "claude-sonnet-4-5", TOOL_CRED, options).text
    assert json.loads(text) == {"city": "Oslo"}
    dropped = [r for r in caplog.records if "output tool" in r.getMessage()]
    assert len(dropped) == 1 and dropped[0].levelname == "DEBUG"
    assert "22 characters" in dropped[0].getMessage()
    assert "Paris" not in caplog.text


def _words_then_the_output_tool() -> bytes:
    """A proxy's reply: words holding an example of the shape, then the output tool."""
    return _claude(({"type": "text", "text": ""},
                    [{"type": "text_delta", "text": 'e.g. {"city": "Paris"}'}]),
                   _tool("s1", STRUCTURED_OUTPUT_TOOL, '{"city": "Oslo"}'))


LIVE = [("draft", '{"city": "Os'), ("draft", 'lo"}')]


@pytest.mark.parametrize("choice, calls, shown", [
    (None, (), [*LIVE, ("text", '{"city": "Oslo"}')]),                  # an answer: live
    (None, (ToolCall("c1", "get_weather", '{"city": "Oslo"}'),),        # a tool round's: voided
     [*LIVE, ("void", ""), ("call", "get_weather"), ("text", '{"city": "Oslo"}')]),
    ("none", (), [*LIVE, ("text", '{"city": "Oslo"}')]),                # no tool: as they come
])
def test_words_are_drafted_as_they_come_and_voided_when_an_author_s_tool_begins(
        respx_mock: Any, choice: str | None, calls: tuple[ToolCall, ...],
        shown: list[tuple[str, str]]) -> None:
    """Behind a proxy, words may answer or be a tool round's (a guess its call then corrects),
    known only when a tool begins: they are drafted as they come (live partial objects with the
    author's tools offered) and the call's block start voids them (``Delta.redraft``), as the
    output tool's does. Failed before (with tools offered the words waited for the stop reason:
    one draft for an answer, none for a tool round's, no void)."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(['{"city": "Os', 'lo"}'], tool_calls=calls),
        headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(TOOL_PROMPT, "claude-sonnet-4-5", TOOL_CRED,
                                             CallOptions(response_format=RF, tool_choice=choice)))
    assert [("draft", d.draft) if d.draft else ("void", "") if d.redraft else
            ("text", d.text) if d.text else ("call", d.tool_call.name)
            for d in deltas if d.draft or d.redraft or d.text or d.tool_call] == shown


def _output_tool_and_a_call(output_first: bool) -> bytes:
    """One message (``tool_choice: any`` allows parallel use) calling the output tool and an
    author's tool: a tool round, whose output tool input is a guess the call's answer corrects."""
    output = _tool("s1", STRUCTURED_OUTPUT_TOOL, '{"city": "Paris"}')
    call = _tool("c1", "get_weather", '{"city": "Oslo"}')
    return _claude(output, call) if output_first else _claude(call, output)


@pytest.mark.parametrize("output_first, shown", [
    (True, [("draft", '{"city": "Paris"}'), ("text", '{"city": "Paris"}'), ("void", ""),
            ("call", "get_weather")]),
    (False, [("call", "get_weather"), ("text", '{"city": "Paris"}')]),
])
def test_the_output_tool_s_drafts_are_void_in_a_message_that_calls_an_author_s_tool(
        respx_mock: Any, output_first: bool, shown: list[tuple[str, str]]) -> None:
    """The output tool beside an author's call (parallel tool use) makes a tool round: its
    input is a guess, as a tool round's words are. Drafted before the call, its drafts are void
    when the call begins; after it, not drafted. Failed before (drafted both ways, no void)."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_output_tool_and_a_call(output_first), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(TOOL_PROMPT, "claude-sonnet-4-5", TOOL_CRED,
                                             CallOptions(response_format=RF)))
    assert [("draft", d.draft) if d.draft else ("void", "") if d.redraft else
            ("text", d.text) if d.text else ("call", d.tool_call.name)
            for d in deltas if d.draft or d.redraft or d.text or d.tool_call] == shown


def _input_at_block_start() -> bytes:
    """A compatible server that sends a tool's whole input in ``content_block_start`` and no
    ``input_json_delta`` (the SDK's own stream accumulator keeps that input)."""
    return _claude(_tool("c1", "get_weather", input={"city": "Oslo"}))


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_input_sent_whole_at_block_start_is_the_arguments(
        respx_mock: Any, use_async: bool, stream_deltas: Callable[..., list[Any]]) -> None:
    """Read only from the deltas, the call ran with ``{}``: its arguments silently gone."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_input_at_block_start(), headers=SSE_HEADERS))
    deltas = stream_deltas(AnthropicProvider(), TOOL_PROMPT, "claude-sonnet-4-5", TOOL_CRED,
                           CallOptions(), use_async=use_async)
    calls = [d.tool_call for d in deltas if d.tool_call is not None]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("c1", "get_weather", {"city": "Oslo"})]


PAUSED_BLOCKS: list[dict[str, Any]] = [
    {"type": "thinking", "thinking": "Search first.", "signature": "sig-p"},
    *web_search_blocks("Looking at the forecast. ", query="oslo forecast", id="srvtoolu_7")]


@pytest.mark.parametrize("how", ["complete", "acomplete", "stream", "astream"])
def test_a_paused_reply_carries_its_content_blocks_as_they_came(
        respx_mock: Any, how: str, stream_deltas: Callable[..., list[Any]]) -> None:
    """``pause_turn``: the API wants the paused content back unchanged to go on; the reply
    kept only its text (and thinking), so it could not be continued."""
    body = anthropic_message("", model="claude-sonnet-4-5", stop_reason="pause_turn")
    body["content"] = PAUSED_BLOCKS
    respx_mock.post(ANTHROPIC_URL).mock(return_value=(
        httpx.Response(200, json=body) if how in ("complete", "acomplete") else
        httpx.Response(200, content=anthropic_blocks_stream(PAUSED_BLOCKS, stop_reason="pause_turn"),
                       headers=SSE_HEADERS)))
    provider = AnthropicProvider()
    if how == "complete":
        done = provider.complete(PROMPT, "claude-sonnet-4-5", CRED, OPTS)
        text, finish, paused = done.text, done.finish_reason, done.paused
    elif how == "acomplete":
        done = asyncio.run(provider.acomplete(PROMPT, "claude-sonnet-4-5", CRED, OPTS))
        text, finish, paused = done.text, done.finish_reason, done.paused
    else:
        deltas = stream_deltas(provider, PROMPT, "claude-sonnet-4-5", CRED, OPTS,
                               use_async=how == "astream")
        text, finish = "".join(d.text for d in deltas), deltas[-1].finish_reason
        paused = deltas[-1].paused
    assert text == "Looking at the forecast. " and finish == "pause_turn"
    assert [dict(b) for b in paused] == PAUSED_BLOCKS


@pytest.mark.parametrize("how", ["complete", "acomplete", "stream", "astream"])
def test_a_paused_reply_names_the_container_its_code_ran_in(
        respx_mock: Any, how: str, stream_deltas: Callable[..., list[Any]]) -> None:
    """The SDK's ``Message.container`` (whole) and ``message_delta.delta.container`` (streamed):
    the id the continuation must send back as the request's ``container``."""
    blocks = code_execution_blocks("Computed. ")
    body = anthropic_message("", model="claude-sonnet-4-5", stop_reason="pause_turn",
                             container="container_011CQ")
    body["content"] = blocks
    respx_mock.post(ANTHROPIC_URL).mock(return_value=(
        httpx.Response(200, json=body) if how in ("complete", "acomplete") else
        httpx.Response(200, content=anthropic_blocks_stream(
            blocks, stop_reason="pause_turn", container="container_011CQ"), headers=SSE_HEADERS)))
    assert anthropic_last(AnthropicProvider(), PROMPT, how, stream_deltas).container == "container_011CQ"


def test_a_paused_message_sends_back_the_container_it_ran_in() -> None:
    """The latest paused message's container is the request's; none without one."""
    paused = Message("assistant", "Computed. ", replay=tuple(code_execution_blocks("Computed. ")),
                     container="container_011CQ")
    prompt = Prompt(system="s", messages=(Message("user", "6 * 7?"), paused))
    assert render_anthropic(prompt, "claude-sonnet-4-5", OPTS)["container"] == "container_011CQ"
    assert "container" not in render_anthropic(replace(prompt, messages=prompt.messages[:1]),
                                               "claude-sonnet-4-5", OPTS)


def test_a_reply_that_was_not_paused_carries_no_content_blocks(respx_mock: Any) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, json=anthropic_message()))
    assert AnthropicProvider().complete(PROMPT, "claude-sonnet-4-5", CRED, OPTS).paused == ()


def test_a_paused_message_is_rendered_as_its_blocks_and_the_rest_merged_after_it() -> None:
    prompt = Prompt(system="s", messages=(
        Message("user", "weather?"),
        Message("assistant", "Looking at the forecast. ", replay=tuple(PAUSED_BLOCKS))))
    payload = render_anthropic(prompt, "claude-sonnet-4-5", OPTS)
    assert payload["messages"][-1] == {"role": "assistant", "content": PAUSED_BLOCKS}


def _paused_in_pieces(pieces: int) -> tuple[list[dict[str, Any]], bytes]:
    """A paused reply's thinking, text and a tool's input, each streamed in ``pieces`` pieces
    (one a character where shorter): the blocks whole, and the stream."""
    thinking, text = "Search first, then say. " * 20, "Looking at the forecast; " * 40
    tool_input = {"query": "oslo forecast " * 30}
    blocks: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": thinking, "signature": "sig-p"},
        {"type": "text", "text": text},
        {"type": "server_tool_use", "id": "srvtoolu_9", "name": "web_search", "input": tool_input}]
    def cut(whole: str) -> list[str]:
        size = max(1, len(whole) // pieces)
        return [whole[at:at + size] for at in range(0, len(whole), size)]

    deltas = [
        [{"type": "thinking_delta", "thinking": p} for p in cut(thinking)]
        + [{"type": "signature_delta", "signature": "sig-p"}],
        [{"type": "text_delta", "text": p} for p in cut(text)],
        [{"type": "input_json_delta", "partial_json": p} for p in cut(json.dumps(tool_input))]]
    empty = [{**blocks[0], "thinking": "", "signature": ""}, {"type": "text", "text": ""},
             {**blocks[2], "input": {}}]
    return blocks, _claude(*zip(empty, deltas, strict=True), stop_reason="pause_turn",
                           model="claude-sonnet-4-5")


@pytest.mark.parametrize("pieces", [1, 7, 400])
@pytest.mark.parametrize("use_async", [False, True])
def test_a_paused_reply_streamed_in_many_pieces_keeps_each_block_whole_as_it_came(
        respx_mock: Any, stream_deltas: Callable[..., list[Any]], use_async: bool,
        pieces: int) -> None:
    """The blocks sent back to go on are joined from the pieces once, not a concatenation a
    piece (quadratic on a long text): every block's thinking, text and input as they came."""
    blocks, body = _paused_in_pieces(pieces)
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=body, headers=SSE_HEADERS))
    deltas = stream_deltas(AnthropicProvider(), PROMPT, "claude-sonnet-4-5", CRED, OPTS,
                           use_async=use_async)
    assert [dict(b) for b in deltas[-1].paused] == blocks
    assert "".join(d.text for d in deltas) == blocks[1]["text"]
    assert [d.reasoning for d in deltas if d.reasoning] == [blocks[0]]


@pytest.mark.parametrize("name", ["get_weather", STRUCTURED_OUTPUT_TOOL])
@pytest.mark.parametrize("pieces", [1, 300])
def test_a_tool_input_streamed_in_many_pieces_is_its_arguments_whole(
        respx_mock: Any, stream_deltas: Callable[..., list[Any]], name: str, pieces: int) -> None:
    """An author's tool's arguments, or the output tool's text, joined once from its pieces."""
    arguments = json.dumps({"city": "Oslo " * 200})
    size = max(1, len(arguments) // pieces)
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, headers=SSE_HEADERS,
                                                                    content=_claude(_tool(
        "c1", name, *(arguments[at:at + size] for at in range(0, len(arguments), size))),
        model="claude-sonnet-4-5")))
    options = CallOptions(response_format=RF) if name == STRUCTURED_OUTPUT_TOOL else OPTS
    deltas = stream_deltas(AnthropicProvider(), TOOL_PROMPT, "claude-sonnet-4-5", TOOL_CRED,
                           options)
    got = [d.text for d in deltas if d.text] + [d.tool_call.arguments for d in deltas
                                                if d.tool_call is not None]
    assert got == [arguments]


def _continuing(words: str) -> Prompt:
    """A request going on from a paused reply whose words were ``words``."""
    paused = Message("assistant", words, replay=tuple(web_search_blocks(words)))
    return Prompt(system="s", messages=(Message("user", "hi"), paused), tools=(TOOL,))


OSLO_OUTPUT = {"type": "tool_use", "id": "s1", "name": STRUCTURED_OUTPUT_TOOL,
               "input": {"city": "Oslo"}}


@pytest.mark.parametrize(("words", "block", "shown"), [
    ('My guess is {"city": "Paris"}. ', OSLO_OUTPUT,
     [("void", ""), ("draft", '{"city": "Oslo"}'), ("answer", '{"city": "Oslo"}')]),
    ('My guess is {"city": "Paris"}. ', {"type": "tool_use", "id": "c1", "name": "get_weather",
                                         "input": {"city": "Oslo"}},
     [("void", ""), ("call", "get_weather")]),
    ("", OSLO_OUTPUT, [("draft", '{"city": "Oslo"}'), ("answer", '{"city": "Oslo"}')]),
], ids=["output-tool", "author-s-tool", "no-paused-words"])
@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_beginning_in_a_continuation_voids_the_paused_reply_s_drafted_words(
        respx_mock: Any, stream_deltas: Callable[..., list[Any]], use_async: bool, words: str,
        block: dict[str, Any], shown: list[tuple[str, str]]) -> None:
    """A paused reply's words were drafted in its own request, and its continuation is a new
    request whose state had drafted nothing: a tool beginning there voided no draft, so the
    paused words' guess stood before the output tool's input. Failed before (no void). The
    output tool's text says it is the tool's input (the agent drops the paused words then)."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_blocks_stream([block], stop_reason="tool_use"),
        headers=SSE_HEADERS))
    deltas = stream_deltas(AnthropicProvider(), _continuing(words), "claude-sonnet-4-5",
                           TOOL_CRED, CallOptions(response_format=RF), use_async=use_async)
    assert [("void", "") if d.redraft else ("draft", d.draft) if d.draft else
            ("answer" if d.from_output_tool else "text", d.text) if d.text else
            ("call", d.tool_call.name) for d in deltas
            if d.draft or d.redraft or d.text or d.tool_call] == shown


@pytest.mark.parametrize("how", ["complete-json", "complete-events"])
def test_a_whole_reply_says_whether_its_text_is_the_output_tool_s_input(
        respx_mock: Any, how: str) -> None:
    """What the agent reads to drop a paused reply's words before a structured answer: the
    output tool's input is the answer alone; words (a proxy's reply) are not flagged."""
    for block, flagged in ((OSLO_OUTPUT, True), ({"type": "text", "text": '{"city": "Oslo"}'},
                                                  False)):
        if how == "complete-json":
            body = anthropic_message("", model="claude-sonnet-4-5", stop_reason="tool_use")
            body["content"] = [block]
            answer = httpx.Response(200, json=body)
        else:
            answer = httpx.Response(200, headers=SSE_HEADERS, content=anthropic_blocks_stream(
                [block], stop_reason="tool_use"))
        respx_mock.post(ANTHROPIC_URL).mock(return_value=answer)
        done = AnthropicProvider().complete(_continuing("Searching. "), "claude-sonnet-4-5",
                                            TOOL_CRED, CallOptions(response_format=RF))
        assert (done.text, done.from_output_tool) == ('{"city": "Oslo"}', flagged)
