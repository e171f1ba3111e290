"""Tests of ``hermes_core/providers/anthropic.py``.

Anthropic stream usage: the counts in ``message_delta`` are cumulative and win when present.

The API (and proxies in front of it) may report input and cache tokens only, or finally, in
``message_delta``; the SDK's own accumulator takes them from there. The adapter kept the
``message_start`` numbers (often 0 or provisional), under-reporting input and cache tokens.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_core.agent.agent import Agent
from hermes_core.config import Settings, load_settings
from hermes_core.errors import (
    BadRequest,
    IncompleteResponse,
    Overloaded,
    ProviderError,
    RateLimited,
    ServerError,
)
from hermes_core.providers._sdk import delta_completion
from hermes_core.providers.anthropic import AnthropicProvider, render_anthropic, supports_thinking
from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL, CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_blocks_stream,
    anthropic_message,
    anthropic_stream,
    code_execution_blocks,
    openai_chat_stream,
    web_search_blocks,
)
from hermes_core.testing.builders import _sse
from hermes_core.types import (
    CachePlan,
    Completion,
    Credential,
    Delta,
    Message,
    Prompt,
    ToolCall,
    ToolSpec,
    Usage,
)
from tests.providers.conftest import ANTHROPIC_CRED as CRED
from tests.providers.conftest import ANTHROPIC_OPTS as OPTS
from tests.providers.conftest import ANTHROPIC_PROMPT as PROMPT
from tests.providers.conftest import (
    ENABLED_REFUSED,
    OPTS_ERR,
    OPTS_RULES,
    PROMPT_ERR,
    SECRET_ERR,
    _assert_anthropic_rules,
    _text_blocks,
    anthropic_last,
)


def _stream(delta_usage: dict[str, int]) -> bytes:
    start = {"id": "m", "type": "message", "role": "assistant", "model": "claude", "content": [],
             "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 7, "output_tokens": 1, "cache_read_input_tokens": 0,
                       "cache_creation_input_tokens": 0}}
    return _sse([
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "hi"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "usage": delta_usage,
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
        ("message_stop", {"type": "message_stop"})])


def test_cumulative_message_delta_usage_wins(respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, content=_stream(
        {"input_tokens": 120, "output_tokens": 9, "cache_read_input_tokens": 800,
         "cache_creation_input_tokens": 50}), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(PROMPT, "claude", CRED, OPTS))
    assert deltas[-1].usage == Usage(input_tokens=120, output_tokens=9, cache_read_tokens=800,
                                     cache_write_tokens=50)


def test_message_start_usage_kept_when_the_delta_has_only_output(respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_stream({"output_tokens": 9}), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(PROMPT, "claude", CRED, OPTS))
    assert deltas[-1].usage == Usage(input_tokens=7, output_tokens=9)


SECRET = "sk-ant-cut-SECRET-0123456789"


def _cut(body: bytes, keep_events: int) -> bytes:
    """The first ``keep_events`` SSE events of ``body``, as a connection closed early would leave."""
    events = body.split(b"\n\n")
    return b"\n\n".join(events[:keep_events]) + b"\n\n"


def test_the_builder_stream_really_ends_with_message_stop() -> None:
    body = anthropic_stream(("Hel", "lo"))
    assert b"message_stop" in body.split(b"\n\n")[-2]


@pytest.mark.parametrize("keep", [1, 3, 5])      # after message_start, mid-text, before the stop
async def test_a_cut_stream_is_a_server_error(assert_both_streams_raise, keep: int, respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_cut(anthropic_stream(("Hel", "lo", " there")), keep), headers=SSE_HEADERS))
    await assert_both_streams_raise(AnthropicProvider(), Credential("anthropic", SECRET), ServerError)


def test_a_whole_stream_still_passes(respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("Hel", "lo")), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(PROMPT, "m", Credential("anthropic", SECRET), _opts()))
    assert "".join(d.text for d in deltas) == "Hello" and deltas[-1].finish_reason == "end_turn"


def test_cut_before_the_first_token_fails_over(failover_loop, respx_mock) -> None:
    loop, router = failover_loop("anthropic", SECRET, "sk-backup-SECRET-777666555")
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_cut(anthropic_stream(("never",)), 2), headers=SSE_HEADERS))
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=openai_chat_stream(("from ", "backup")), headers=SSE_HEADERS))
    s = loop.stream(PROMPT, router.select("hi"), _opts())
    assert "".join(d.text for d in s) == "from backup"


def test_cut_after_the_first_token_reaches_the_caller(failover_loop, respx_mock) -> None:
    loop, router = failover_loop("anthropic", SECRET, "sk-backup-SECRET-777666555")
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=_cut(anthropic_stream(("Hel", "lo", " there")), 5), headers=SSE_HEADERS))
    got: list[str] = []
    with pytest.raises(ServerError, match="incomplete"):
        for d in loop.stream(PROMPT, router.select("hi"), _opts()):
            got.append(d.text)
    assert "".join(got).startswith("Hel")


def _opts():  # type: ignore[no-untyped-def]
    from hermes_core.providers.base import CallOptions
    return CallOptions(max_tokens=16, timeout_s=5)


TOOL = ToolSpec("get_weather", "Weather.", {"type": "object", "properties": {
    "city": {"type": "string"}}, "required": ["city"]})

TOOL_PROMPT = Prompt(system="s", messages=(Message("user", "hi"),), tools=(TOOL,))

BARE = Prompt(system="s", messages=(Message("user", "hi"),))

TOOL_CRED = Credential("anthropic", "sk-ant-anthropicTEST0123456789abcdef")

RF = {"name": "Forecast", "schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                     "required": ["city"]}, "description": "A forecast."}


def _wire_blocks(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """Each message's blocks as the cache compares them (role and block, markers left out)."""
    return [(m["role"], json.dumps({k: v for k, v in b.items() if k != "cache_control"},
                                   sort_keys=True))
            for m in payload["messages"] for b in m["content"]]


def test_a_follow_up_sends_the_turn_context_after_its_tool_answers_so_the_next_turn_reads_them(
        ) -> None:
    """The turn's context led its user message in every request of the turn, and history keeps
    the message without it: the next turn's request differed from the follow-up's from that
    message on, so the tool answers a round's breakpoint had cached were written again (~1.7k
    tokens a tool turn, 1.25x). A follow-up now carries the context after its tool answers, its
    breakpoint before it; the turn's first request still has it leading the user's message."""
    call = ToolCall("toolu_1", "lookup_runbook", '{"topic": "nginx"}')
    turn = (Message("user", "hello"), Message("assistant", "hi"),
            Message("user", "look up the nginx runbook"),
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "Runbook: " + "check the upstream. " * 300, tool_call_id="toolu_1"))
    follow_up = render_anthropic(
        Prompt("S", turn, context="CTX of turn 2", cache=CachePlan(message_indices=(1, 4))),
        "claude-sonnet-4-5", OPTS)
    last = follow_up["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]
    assert last[-1]["text"] == "CTX of turn 2" and "cache_control" in last[0]
    assert not any(b.get("text") == "CTX of turn 2" for m in follow_up["messages"][:-1]
                   for b in m["content"])
    following = render_anthropic(
        Prompt("S", (*turn, Message("assistant", "done"), Message("user", "thanks")),
               context="CTX of turn 3", cache=CachePlan(message_indices=(4, 5))),
        "claude-sonnet-4-5", OPTS)
    sent, resent = _wire_blocks(follow_up), _wire_blocks(following)
    marked = max(i for i, (_, b) in enumerate(sent) if "tool_result" in b)
    assert sent[:marked + 1] == resent[:marked + 1]       # read back, not written again
    first = render_anthropic(Prompt("S", turn[:3], context="CTX of turn 2"),
                             "claude-sonnet-4-5", OPTS)
    assert first["messages"][-1]["content"][0]["text"] == "CTX of turn 2"   # a first request: led


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


BACKUP = "https://backup.test/v1"


def cut_anthropic_stream(pieces: tuple[str, ...]) -> bytes:
    events = [e for e in anthropic_stream(pieces).split(b"\n\n") if e]
    kept = [e for e in events if b"message_delta" not in e and b"message_stop" not in e]
    return b"\n\n".join(kept) + b"\n\n"


def settings_for(tmp_path: Path) -> Settings:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return load_settings({
        "home": str(home),
        "llm": {"stream": True, "routing": {"default_model": "claude-sonnet-4", "providers": [
            {"name": "primary", "type": "anthropic", "priority": 1, "models": ["claude-sonnet-4"]},
            {"name": "backup", "type": "openai", "priority": 2, "models": ["claude-sonnet-4"],
             "endpoint": BACKUP}]}},
        "credentials": {"primary": {"keys": [{"key": "sk-ant-primary-SECRET-01"}]},
                        "backup": {"keys": [{"key": "sk-backup-SECRET-0000002"}]}},
        "credential_pool": {"retries_per_provider": 0},
        "skill_utils": {"enabled": False}, "context_engine": {"enabled": False},
    }, env={})


async def _astream(agent: Agent, text: str) -> str:
    return "".join([p async for p in agent.astream(text)])


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_cut_stream_before_the_first_token_fails_over(respx_mock: object, tmp_path: Path,
                                                        mode: str) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=cut_anthropic_stream(()),
                                             headers=SSE_HEADERS))
    used = respx_mock.post(BACKUP + "/chat/completions").mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=openai_chat_stream(("whole",)),
                                             headers=SSE_HEADERS))
    agent = Agent(settings_for(tmp_path), retriever=None, context_engine=None)
    try:
        text = ("".join(agent.stream("hi")) if mode == "stream"
                else asyncio.run(_astream(agent, "hi")))
    finally:
        agent.close()
    assert text == "whole" and used.called  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_cut_stream_after_tokens_raises_incomplete_and_keeps_the_history(
        respx_mock: object, tmp_path: Path, mode: str) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=cut_anthropic_stream(("Hello", " wor")),
                                             headers=SSE_HEADERS))
    agent = Agent(settings_for(tmp_path), retriever=None, context_engine=None)
    try:
        with pytest.raises(IncompleteResponse) as ei:
            if mode == "stream":
                "".join(agent.stream("hi"))
            else:
                asyncio.run(_astream(agent, "hi"))
    finally:
        agent.close()
    assert ei.value.partial_text == "Hello wor"
    assert agent.history == []


TODAYS_BLOCKS: list[dict[str, Any]] = [
    {"type": "thinking", "thinking": "The user wants the weather.", "signature": "sig-abc"},
    {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
     "input": {"query": "oslo weather"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
     "content": [{"type": "web_search_result", "url": "https://example.test", "title": "t",
                  "encrypted_content": "e", "page_age": None}]},
    {"type": "a_block_type_from_next_year", "payload": {"x": 1}},
    {"type": "text", "text": "It is sunny.",
     "citations": [{"type": "web_search_result_location", "url": "https://example.test",
                    "title": "t", "encrypted_index": "i", "cited_text": "sunny"}]},
    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
]


def _todays_stream() -> bytes:
    """Every block of :data:`TODAYS_BLOCKS` as stream events, each with the delta its type sends."""
    return anthropic_blocks_stream(TODAYS_BLOCKS, stop_reason="tool_use", input_tokens=3,
                                   output_tokens=240, cache_write=2000)


@pytest.mark.parametrize("how", ["complete", "stream", "astream"])
def test_thinking_server_tool_and_unknown_blocks_leave_only_the_text_and_the_call(
        respx_mock: Any, how: str, stream_deltas: Callable[..., list[Any]]) -> None:
    """Extended thinking, redacted thinking, a server tool's call and result, citations and a
    block type this code has never seen: the reply is the text, the one client tool call, and the
    usage with the cache write of message_start."""
    body = anthropic_message("", model="claude-sonnet-4-5", input_tokens=3, output_tokens=240,
                             cache_write=2000, stop_reason="tool_use")
    body["content"] = TODAYS_BLOCKS
    respx_mock.post(ANTHROPIC_URL).mock(return_value=(
        httpx.Response(200, json=body) if how == "complete" else
        httpx.Response(200, content=_todays_stream(), headers=SSE_HEADERS)))
    provider = AnthropicProvider()
    if how == "complete":
        done = provider.complete(PROMPT, "claude-sonnet-4-5", CRED, OPTS)
        text, calls, usage, finish = done.text, list(done.tool_calls), done.usage, done.finish_reason
    else:
        deltas = stream_deltas(provider, PROMPT, "claude-sonnet-4-5", CRED, OPTS,
                               use_async=how == "astream")
        text = "".join(d.text for d in deltas)
        calls = [d.tool_call for d in deltas if d.tool_call is not None]
        usage, finish = deltas[-1].usage, deltas[-1].finish_reason
    assert text == "It is sunny." and finish == "tool_use"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("toolu_1", "get_weather", {"city": "Oslo"})]
    assert usage == Usage(input_tokens=3, output_tokens=240, cache_write_tokens=2000)


@pytest.mark.parametrize("how", ["complete", "acomplete", "stream", "astream"])
def test_a_model_that_refuses_budgeted_thinking_is_sent_adaptive_thinking_from_then_on(
        respx_mock: Any, how: str) -> None:
    """Claude Opus 4.7 and later refuse ``thinking: {type: enabled, budget_tokens}`` with a 400;
    with reasoning_effort set, every turn failed. The model's name says nothing a table could
    keep up with: the refusal does."""
    streamed = how in ("stream", "astream")
    ok = (httpx.Response(200, content=anthropic_stream(("o", "k")), headers=SSE_HEADERS)
          if streamed else httpx.Response(200, json=anthropic_message("ok")))
    route = respx_mock.post(ANTHROPIC_URL).mock(side_effect=[
        httpx.Response(400, json=ENABLED_REFUSED), ok, ok])
    provider = AnthropicProvider()
    opts = CallOptions(max_tokens=500, reasoning_effort="high", timeout_s=5)

    def call() -> str:
        if how == "complete":
            return provider.complete(PROMPT, "claude-opus-4-8", CRED, opts).text
        if how == "acomplete":
            return asyncio.run(provider.acomplete(PROMPT, "claude-opus-4-8", CRED, opts)).text
        if how == "stream":
            return "".join(d.text for d in provider.stream(PROMPT, "claude-opus-4-8", CRED, opts))

        async def collect() -> str:
            return "".join([d.text async for d in provider.astream(PROMPT, "claude-opus-4-8",
                                                                    CRED, opts)])
        return asyncio.run(collect())

    assert call() == "ok" and call() == "ok"
    sent = [json.loads(c.request.content) for c in route.calls]
    assert sent[0]["thinking"] == {"type": "enabled", "budget_tokens": 24576}
    for later in sent[1:]:
        assert later["thinking"] == {"type": "adaptive"}
        assert later["output_config"] == {"effort": "high"} and "temperature" not in later
    # other models keep the budget
    assert provider.render(PROMPT, "claude-sonnet-4-5", opts)["thinking"]["type"] == "enabled"


def test_a_thinking_refusal_without_thinking_sent_is_a_bad_request_sent_once(
        respx_mock: Any) -> None:
    from hermes_core.errors import BadRequest

    route = respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        400, json=ENABLED_REFUSED))
    with pytest.raises(BadRequest, match=r"thinking\.type\.enabled"):
        AnthropicProvider().complete(PROMPT, "claude-opus-4-8", CRED, OPTS)
    assert route.call_count == 1


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


# Events a proxy sends out of the API's order. The API opens one message, starts each block
# before its deltas, states the stop reason in message_delta and then ends with message_stop;
# a proxy that retries upstream mid-stream and joins both answers, one that ends the stream early,
# or one that reorders events made a reply the model never gave, passed as whole.

def _start() -> tuple[str, dict[str, Any]]:
    message = {"id": "m", "type": "message", "role": "assistant", "model": "claude",
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 3, "output_tokens": 1}}
    return ("message_start", {"type": "message_start", "message": message})


def _event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return (kind, {"type": kind, **fields})


def _text(index: int, text: str) -> list[tuple[str, dict[str, Any]]]:
    return [_event("content_block_start", index=index, content_block={"type": "text", "text": ""}),
            _event("content_block_delta", index=index,
                   delta={"type": "text_delta", "text": text})]


_STOP_REASON = _event("message_delta", delta={"stop_reason": "end_turn", "stop_sequence": None},
                      usage={"output_tokens": 5})
_TOOL_START = _event("content_block_start", index=0, content_block={
    "type": "tool_use", "id": "t1", "name": "lookup", "input": {}})
_TOOL_JSON = _event("content_block_delta", index=0,
                    delta={"type": "input_json_delta", "partial_json": '{"q": "oslo"}'})


@pytest.fixture
def drain(respx_mock: Any, stream_deltas: Callable[..., list[Any]]
          ) -> Callable[[list[tuple[str, dict[str, Any]]], bool], list[Any]]:
    """``drain(events, use_async)``: every piece of a claude stream made of ``events``."""
    def run(events: list[tuple[str, dict[str, Any]]], use_async: bool) -> list[Any]:
        respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
            200, content=_sse(events), headers=SSE_HEADERS))
        return stream_deltas(AnthropicProvider(), PROMPT, "claude", CRED, OPTS,
                             use_async=use_async)
    return run


@pytest.mark.parametrize("use_async", [False, True])
def test_a_message_stop_before_any_stop_reason_is_an_incomplete_answer(
        drain: Callable[..., list[Any]], use_async: bool) -> None:
    events = [_start(), *_text(0, "Hel"), _event("message_stop")]
    with pytest.raises(IncompleteResponse) as info:
        drain(events, use_async)
    assert info.value.partial_text == "Hel"


@pytest.mark.parametrize("use_async", [False, True])
def test_a_second_message_start_is_a_spliced_stream_not_one_answer(
        drain: Callable[..., list[Any]], use_async: bool) -> None:
    events = [_start(), *_text(0, "Hello wor"), _start(), *_text(0, "Hello world"),
              _event("content_block_stop", index=0), _STOP_REASON, _event("message_stop")]
    with pytest.raises(IncompleteResponse) as info:
        drain(events, use_async)
    assert info.value.partial_text == "Hello wor"


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_s_input_before_its_block_starts_is_an_error_not_an_empty_call(
        drain: Callable[..., list[Any]], use_async: bool) -> None:
    events = [_start(), _TOOL_JSON, _TOOL_START, _event("content_block_stop", index=0),
              _STOP_REASON, _event("message_stop")]
    with pytest.raises(ServerError, match="out of order"):
        drain(events, use_async)


@pytest.mark.parametrize("use_async", [False, True])
def test_events_after_message_stop_are_not_part_of_the_answer(
        drain: Callable[..., list[Any]], use_async: bool) -> None:
    events = [_start(), *_text(0, "Hi"), _event("content_block_stop", index=0), _STOP_REASON,
              _event("message_stop"), *_text(1, " and more")]
    deltas = drain(events, use_async)
    assert "".join(d.text for d in deltas) == "Hi"
    assert deltas[-1].finish_reason == "end_turn"


def test_the_api_s_own_order_is_still_one_whole_answer(drain: Callable[..., list[Any]]) -> None:
    events = [_start(), _TOOL_START, _TOOL_JSON, _event("content_block_stop", index=0),
              _STOP_REASON, _event("message_stop")]
    deltas = drain(events, False)
    assert [d.tool_call for d in deltas if d.tool_call] == [ToolCall("t1", "lookup",
                                                                     '{"q": "oslo"}')]
    assert deltas[-1].finish_reason == "end_turn"


@pytest.mark.parametrize("use_async", [False, True])
def test_a_call_cut_at_max_tokens_mid_input_is_the_call_not_a_malformed_stream(
        drain: Callable[..., list[Any]], use_async: bool) -> None:
    """Its input is JSON cut short (or, streamed fine-grained, not JSON at all): the stream was
    failed as malformed and the whole request sent again, though it ended as the API says."""
    cut = _event("content_block_delta", index=0,
                 delta={"type": "input_json_delta", "partial_json": '{"q": "os'})
    events = [_start(), _TOOL_START, cut, _event("content_block_stop", index=0),
              _event("message_delta", delta={"stop_reason": "max_tokens", "stop_sequence": None},
                     usage={"output_tokens": 5}), _event("message_stop")]
    deltas = drain(events, use_async)
    assert [d.tool_call for d in deltas if d.tool_call] == [ToolCall("t1", "lookup", '{"q": "os')]
    assert deltas[-1].finish_reason == "max_tokens"


def test_a_nan_in_a_call_s_input_is_sent_back_as_null_not_refused_by_the_sdk() -> None:
    """Python's parser takes ``{"x": NaN}`` (a model's or a proxy's), the SDK's writer refuses
    it (``allow_nan=False``): the tool ran, then the follow-up ended the turn with a bare
    ``ValueError``. A paused reply's blocks, replayed as they came, likewise."""
    call = Message("assistant", "", tool_calls=(ToolCall("c1", "f", '{"x": NaN, "y": [1, Infinity]}'),))
    paused = Message("assistant", "Computed. ", replay=(
        {"type": "server_tool_use", "id": "s1", "name": "code_execution",
         "input": {"limit": float("inf"), "code": "print(1)"}},))
    payload = render_anthropic(Prompt("s", (Message("user", "hi"), call, paused)),
                               "claude-sonnet-4-5", OPTS)
    json.dumps(payload, allow_nan=False)
    blocks = [b for m in payload["messages"] for b in m["content"] if "input" in b]
    assert [b["input"] for b in blocks] == [{"x": None, "y": [1, None]},
                                           {"limit": None, "code": "print(1)"}]


def test_anthropic_render_cache_markers_and_limit():
    msgs = tuple(Message("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(9))
    prompt = Prompt(system="S" * 10, messages=msgs, context="CTX",
                    cache=CachePlan(system=True, message_indices=(4, 5, 6, 7, 8), ttl="1h"))
    opts = CallOptions(max_tokens=64, timeout_s=5)   # test_sdk.py's OPTS, where it came from
    payload = AnthropicProvider().render(prompt, "claude-3-5-sonnet-20241022", opts)
    assert payload["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    marks = sum(1 for m in payload["messages"] for b in m["content"] if "cache_control" in b)
    assert marks + 1 == 4  # never more than four breakpoints in total
    last = payload["messages"][-1]["content"]
    assert last[0] == {"type": "text", "text": "CTX"}  # per-turn context leads the last user message


def test_anthropic_empty_assistant_reply_in_history_sends_no_empty_text_block():
    # A model reply can be empty (end_turn with no content, or only tool calls in the last
    # round); the Agent keeps it in the history, and the next turn must still be accepted.
    history = (Message("user", "first"), Message("assistant", ""), Message("user", "second"))
    plan = CachePlan(system=True, message_indices=(1,))
    payload = render_anthropic(Prompt("sys", history, context="ctx", cache=plan), "claude", OPTS_RULES)
    _assert_anthropic_rules(payload)
    texts = [b["text"] for b in _text_blocks(payload)]
    assert texts == ["first", "ctx", "second"]


def test_anthropic_whitespace_only_text_is_dropped_but_tool_use_kept():
    call = ToolCall("toolu_1", "skill_view", '{"name": "git"}')
    history = (Message("user", "load git"), Message("assistant", "  \n", tool_calls=(call,)),
               Message("tool", "# Skill: git", tool_call_id="toolu_1"),
               Message("assistant", ""), Message("user", "thanks"))
    payload = render_anthropic(Prompt("sys", history), "claude", OPTS_RULES)
    _assert_anthropic_rules(payload)
    assistant = payload["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["tool_use"]
    results = payload["messages"][2]["content"]
    assert results[0]["type"] == "tool_result" and results[-1] == {"type": "text",
                                                                  "text": "thanks"}


def test_anthropic_cache_marker_on_an_empty_message_moves_to_a_real_block():
    history = (Message("user", "a"), Message("assistant", "b"), Message("user", "c"),
               Message("assistant", ""), Message("user", "d"))
    payload = render_anthropic(Prompt("sys", history, cache=CachePlan(message_indices=(3,))),
                               "claude", OPTS_RULES)
    _assert_anthropic_rules(payload)
    marked = [b for m in payload["messages"] for b in m["content"] if "cache_control" in b]
    assert marked and all(b.get("text", "x").strip() for b in marked)


def test_anthropic_empty_system_prompt_is_left_out():
    payload = render_anthropic(Prompt("", (Message("user", "hi"),), cache=CachePlan(system=True)),
                               "claude", OPTS_RULES)
    assert "system" not in payload
    _assert_anthropic_rules(payload)


def anthropic_error_stream(err_type: str, message: str = "boom") -> bytes:
    start = {"id": "m", "type": "message", "role": "assistant", "model": "claude", "content": [],
             "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 3, "output_tokens": 1}}
    return _sse([("message_start", {"type": "message_start", "message": start}),
                 ("error", {"type": "error", "error": {"type": err_type, "message": message}})])


@pytest.mark.parametrize(("err_type", "expected"), [
    ("overloaded_error", Overloaded),
    ("api_error", ServerError),
    ("rate_limit_error", RateLimited),
    ("invalid_request_error", BadRequest),
])
def test_anthropic_stream_error_event_maps_by_type(err_type, expected, respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_error_stream(err_type, f"bad {SECRET_ERR}"), headers=SSE_HEADERS))
    with pytest.raises(ProviderError) as info:
        list(AnthropicProvider().stream(PROMPT_ERR, "claude", Credential("anthropic", SECRET_ERR), OPTS_ERR))
    assert type(info.value) is expected
    assert SECRET_ERR not in str(info.value) and SECRET_ERR not in str(info.value.body)


async def test_anthropic_async_stream_overloaded_is_retryable(respx_mock) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("a",), fail_after=0), headers=SSE_HEADERS))
    with pytest.raises(Overloaded):
        async for _ in AnthropicProvider().astream(PROMPT_ERR, "claude",
                                                   Credential("anthropic", SECRET_ERR), OPTS_ERR):
            pass


def test_overloaded_anthropic_stream_fails_over_before_first_token(failover_loop, respx_mock) -> None:
    loop, router = failover_loop("anthropic", SECRET_ERR, "sk-backup-SECRET-999888777")
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=anthropic_stream(("a",), fail_after=0), headers=SSE_HEADERS))
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=_sse([
        (None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
                "choices": [{"index": 0, "delta": {"content": "streamed backup"},
                             "finish_reason": "stop"}]}), (None, "[DONE]")]),
        headers=SSE_HEADERS))
    s = loop.stream(PROMPT_ERR, router.select("hi"), OPTS_ERR)
    assert "".join(d.text for d in s) == "streamed backup"
    assert s.attempts[0].status == "529"
    assert s.attempts[-1].status == "ok"
