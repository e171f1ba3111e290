"""Tests of ``hermes_core/providers/openai.py``: tools. tool_choice and the request's other
fields, streamed tool-call fragments joined, content drafted live until a call arrives, held
and refused structured replies, and arguments or content in the shapes compatible servers send."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hermes_core.providers._sdk import delta_completion
from hermes_core.providers.base import STRUCTURED_OUTPUT_TOOL, CallOptions
from hermes_core.providers.openai import OpenAIProvider, is_reasoning_model, render_openai
from hermes_core.testing import (
    OPENAI_URL,
    SSE_HEADERS,
    openai_chat_completion,
    openai_chat_stream,
)
from hermes_core.testing.builders import _sse
from hermes_core.types import (
    Credential,
    Message,
    Prompt,
    ToolCall,
    ToolSpec,
)
from tests.providers.conftest import (
    CRED,
    EARLIER_ROUND,
    OPENAI_OPTS,
    REFUSAL,
    refusal_stream,
    reply_text,
)

TOOL = ToolSpec("get_weather", "Weather.", {"type": "object", "properties": {
    "city": {"type": "string"}}, "required": ["city"]})


TOOL_PROMPT = Prompt(system="s", messages=(Message("user", "hi"),), tools=(TOOL,))
NO_TOOLS = Prompt(system="s", messages=(Message("user", "hi"),))


TOOL_CRED = Credential("openai", "sk-proj-openaiTEST0123456789abcdef")


@pytest.mark.parametrize("choice, wire", [
    ("auto", "auto"), ("none", "none"), ("required", "required"),
    ("get_weather", {"type": "function", "function": {"name": "get_weather"}}),
])
def test_tool_choice_is_encoded(choice: str, wire: Any) -> None:
    payload = render_openai(TOOL_PROMPT, "gpt-4o", CallOptions(tool_choice=choice))
    assert payload["tool_choice"] == wire
    assert payload["tools"][0]["function"]["parameters"]["required"] == ["city"]


def _openai_s_rule(request: httpx.Request) -> httpx.Response:
    """The API's answer as it checks tools: ``tool_choice`` with no ``tools`` is refused, and so
    is a tool message not answering a call of the assistant message before it; else a reply,
    whole or streamed as asked."""
    body = json.loads(request.content)
    called: set[str] = set()
    refused = "tool_choice" in body and not body.get("tools")
    for m in body["messages"]:
        if m["role"] == "assistant":
            called = {c["id"] for c in m.get("tool_calls", ())}
        elif m["role"] == "tool":
            refused = refused or m["tool_call_id"] not in called
    if refused:
        return httpx.Response(400, json={"error": {"message": "invalid tools",
                                                   "type": "invalid_request_error"}})
    if body.get("stream"):
        return httpx.Response(200, content=openai_chat_stream(("It was mild.",)),
                              headers=SSE_HEADERS)
    return httpx.Response(200, json=openai_chat_completion("It was mild."))


@pytest.mark.parametrize("how", ["complete", "acomplete", "stream", "astream"])
def test_a_history_with_tool_rounds_asked_on_without_tools_goes_as_it_was(
        respx_mock: Any, how: str) -> None:
    """A history holding a tool round, sent in a request that offers no tools: OpenAI's API
    takes the round's calls and answers without ``tools`` (Anthropic's refuses them: see
    ``test_anthropic_tools``), so it goes as it was, with no ``tool_choice`` (refused without
    tools) even when the author asked for one."""
    route = respx_mock.post(OPENAI_URL).mock(side_effect=_openai_s_rule)
    provider, model = OpenAIProvider(), "gpt-4o"
    prompt, options = Prompt(system="s", messages=EARLIER_ROUND), CallOptions(tool_choice="none")
    text = reply_text(provider, prompt, model, TOOL_CRED, options, how)
    sent = json.loads(route.calls.last.request.content)
    assert text == "It was mild." and "tools" not in sent and "tool_choice" not in sent
    assert [(m["role"], [c["id"] for c in m.get("tool_calls", ())]) for m in sent["messages"]] == [
        ("system", []), ("user", []), ("assistant", ["c1"]), ("tool", []), ("assistant", []),
        ("user", [])]


def test_a_follow_up_sends_the_turn_context_after_its_tool_answers_so_the_next_turn_reads_them(
        ) -> None:
    """OpenAI caches the longest prefix a request shares with earlier ones. The turn's context led
    the user's message in every request of a turn, and history keeps the message without it, so
    the next turn shared nothing from there on and paid for the turn's tool answers again. On
    OpenAI's own API a follow-up now sends the context as a user message after the tool answers;
    a compatible server (its chat template may want an answer after a tool) keeps it leading."""
    call = ToolCall("call_1", "lookup_runbook", '{"topic": "nginx"}')
    turn = (Message("user", "hello"), Message("assistant", "hi"),
            Message("user", "look up the nginx runbook"),
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "Runbook: " + "check the upstream. " * 300, tool_call_id="call_1"))
    follow_up = render_openai(Prompt("S", turn, context="CTX of turn 2"), "gpt-4o", OPENAI_OPTS)
    assert follow_up["messages"][-1] == {"role": "user", "content": "CTX of turn 2"}
    assert follow_up["messages"][3] == {"role": "user", "content": "look up the nginx runbook"}
    following = render_openai(
        Prompt("S", (*turn, Message("assistant", "done"), Message("user", "thanks")),
               context="CTX of turn 3"), "gpt-4o", OPENAI_OPTS)
    assert following["messages"][:6] == follow_up["messages"][:6]   # through the tool answer
    compatible = render_openai(Prompt("S", turn, context="CTX of turn 2"), "m", OPENAI_OPTS,
                               official=False)
    assert compatible["messages"][3]["content"][0]["text"] == "CTX of turn 2"
    assert compatible["messages"][-1]["role"] == "tool"


def test_tool_choice_without_tools_is_not_sent() -> None:
    bare = Prompt(system="s", messages=(Message("user", "hi"),))
    assert "tool_choice" not in render_openai(bare, "gpt-4o", CallOptions(tool_choice="required"))


def test_stop_seed_and_reasoning_effort_go_only_where_accepted() -> None:
    opts = CallOptions(stop=("END", "STOP", "a", "b", "c"), seed=7, reasoning_effort="low")
    chat = render_openai(TOOL_PROMPT, "gpt-4o", opts)
    assert chat["stop"] == ["END", "STOP", "a", "b"] and chat["seed"] == 7
    assert "reasoning_effort" not in chat
    reasoning = render_openai(TOOL_PROMPT, "o4-mini", opts)
    assert reasoning["reasoning_effort"] == "low" and "stop" not in reasoning
    assert is_reasoning_model("openai/gpt-5-mini") and not is_reasoning_model("gpt-4.1")


def test_response_format_is_a_json_schema() -> None:
    rf = {"name": "Forecast", "schema": {"type": "object"}, "description": "A forecast."}
    payload = render_openai(TOOL_PROMPT, "gpt-4o", CallOptions(response_format=rf))
    assert payload["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "Forecast", "schema": {"type": "object"}, "strict": False,
        "description": "A forecast."}}


def _fragmented_stream() -> bytes:
    """Two parallel calls whose names and arguments arrive in pieces, interleaved."""
    base = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
        return (None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    def call(i: int, **fields: Any) -> dict[str, Any]:
        return {"tool_calls": [{"index": i, **fields}]}

    return _sse([
        chunk({"role": "assistant", "content": None}),
        chunk(call(0, id="c1", type="function", function={"name": "get_", "arguments": ""})),
        chunk(call(0, function={"name": "weather", "arguments": '{"ci'})),
        chunk(call(1, id="c2", type="function", function={"name": "add", "arguments": '{"a": 1'})),
        chunk(call(0, function={"arguments": 'ty": "Oslo"}'})),
        chunk(call(1, function={"arguments": ', "b": 2}'})),
        chunk({}, "tool_calls"),
        (None, {**base, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3,
                                                  "total_tokens": 8}}),
        (None, "[DONE]")])


@pytest.mark.parametrize("use_async", [False, True])
def test_streamed_tool_call_fragments_are_joined(respx_mock: Any, use_async: bool) -> None:
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=_fragmented_stream(), headers=SSE_HEADERS))
    provider = OpenAIProvider()

    async def collect() -> list[Any]:
        return [d async for d in provider.astream(TOOL_PROMPT, "gpt-4o", TOOL_CRED, CallOptions())]

    deltas = (asyncio.run(collect()) if use_async
              else list(provider.stream(TOOL_PROMPT, "gpt-4o", TOOL_CRED, CallOptions())))
    calls = [d.tool_call for d in deltas if d.tool_call is not None]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("c1", "get_weather", {"city": "Oslo"}), ("c2", "add", {"a": 1, "b": 2})]
    assert deltas[-1].finish_reason == "tool_calls"


def _held_deltas(use_async: bool, prompt: Prompt = NO_TOOLS,
                 tool_choice: str | None = None) -> list[Any]:
    """The deltas of a structured (held) streamed call, sync or async (no tools offered unless
    ``prompt`` offers them)."""
    provider = OpenAIProvider()
    opts = CallOptions(response_format={"name": "F", "schema": {"type": "object"}},
                       tool_choice=tool_choice)

    async def collect() -> list[Any]:
        return [d async for d in provider.astream(prompt, "gpt-4o", TOOL_CRED, opts)]

    return (asyncio.run(collect()) if use_async
            else list(provider.stream(prompt, "gpt-4o", TOOL_CRED, opts)))


def _shown(deltas: list[Any]) -> list[tuple[str, str]]:
    """What a held structured stream shows, in order: drafts, voids, the text, the calls."""
    return [("draft", d.draft) if d.draft else ("void", "") if d.redraft else
            ("text", d.text) if d.text else ("call", d.tool_call.name)
            for d in deltas if d.draft or d.redraft or d.text or d.tool_call]


LIVE = [("draft", '{"ci'), ("draft", 'ty": "Oslo"}')]
CALL = (ToolCall("c1", "get_weather", '{"city": "Oslo"}'),)


@pytest.mark.parametrize("choice, pieces, calls, shown", [
    (None, ('{"ci', 'ty": "Oslo"}'), (),                        # the answer: live, as it comes
     [*LIVE, ("text", '{"city": "Oslo"}')]),
    (None, ('{"ci', 'ty": "Oslo"}'), CALL,                      # a tool round: live, then void
     [*LIVE, ("void", ""), ("text", '{"city": "Oslo"}'), ("call", "get_weather")]),
    ("none", ('{"ci', 'ty": "Oslo"}'), (),                      # no tool can be called
     [*LIVE, ("text", '{"city": "Oslo"}')]),
    (None, (), CALL, [("call", "get_weather")]),                # nothing drafted: nothing void
])
@pytest.mark.parametrize("use_async", [False, True])
def test_content_is_drafted_live_and_voided_when_the_choice_s_first_tool_call_arrives(
        respx_mock: Any, use_async: bool, choice: str | None, pieces: tuple[str, ...],
        calls: tuple[ToolCall, ...], shown: list[tuple[str, str]]) -> None:
    """A choice's content is its answer channel, and the choice is a tool round only at its
    first call, after the content: the content is drafted as it comes (live partial objects
    with the author's tools offered), and the call voids the drafts shown (``Delta.redraft``),
    so a tool round's guess never stands as the answer. Failed before (with tools offered the
    drafts waited for the finish: one draft for the answer, none for a tool round's, no
    void)."""
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=openai_chat_stream(pieces, tool_calls=calls), headers=SSE_HEADERS))
    assert _shown(_held_deltas(use_async, TOOL_PROMPT, choice)) == shown


def _content_around_a_call() -> bytes:
    """A proxy's choice: content, a tool call, then more content before its finish."""
    base = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, Any]:
        return (None, {**base, "choices": [{"index": 0, "delta": delta,
                                            "finish_reason": finish}]})

    call = {"index": 0, "id": "c1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{}"}}
    return _sse([chunk({"content": '{"city": "Par'}), chunk({"tool_calls": [call]}),
                 chunk({"content": 'is"}'}), chunk({}, "tool_calls"), (None, "[DONE]")])


@pytest.mark.parametrize("use_async", [False, True])
def test_content_after_a_choice_s_tool_call_is_not_drafted(respx_mock: Any,
                                                           use_async: bool) -> None:
    """Once the choice called a tool its content is a tool round's: no draft after the void."""
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=_content_around_a_call(), headers=SSE_HEADERS))
    assert _shown(_held_deltas(use_async, TOOL_PROMPT)) == [
        ("draft", '{"city": "Par'), ("void", ""), ("text", '{"city": "Paris"}'),
        ("call", "get_weather")]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_held_structured_reply_comes_as_drafts_then_whole_as_the_text(
        respx_mock: Any, use_async: bool) -> None:
    """With ``response_format`` the JSON is held until whole (a cut inside it is asked again
    unseen); meanwhile its pieces come as drafts, progress that is not the text."""
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=openai_chat_stream(('{"ci', 'ty": "Oslo"}')), headers=SSE_HEADERS))
    deltas = _held_deltas(use_async)
    assert [d.draft for d in deltas if d.draft] == ['{"ci', 'ty": "Oslo"}']
    assert [d.text for d in deltas if d.text] == ['{"city": "Oslo"}']
    assert deltas[-1].finish_reason == "stop"


@pytest.mark.parametrize("lead", ["", '{"ci'], ids=["refusal", "after-content"])
@pytest.mark.parametrize("use_async", [False, True])
def test_a_refused_structured_reply_comes_whole_as_the_text_and_never_as_drafts(
        respx_mock: Any, use_async: bool, lead: str) -> None:
    """A refusal is the model's answer, not a draft of the object: its pieces were passed on as
    drafts (read as the object's JSON, and keeping the attempt retryable). Failed before. The
    content before a refusal was drafted as content; the refusal after it is still no draft."""
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=refusal_stream(lead), headers=SSE_HEADERS))
    deltas = _held_deltas(use_async)
    assert [d.draft for d in deltas if d.draft] == ([lead] if lead else [])
    assert [d.text for d in deltas if d.text] == [lead + REFUSAL]
    assert deltas[-1].finish_reason == "refusal"


UNASKED = ToolCall("s2", STRUCTURED_OUTPUT_TOOL, '{"city": "Oslo"}')


@pytest.mark.parametrize("how", ["complete", "acomplete", "complete-events", "stream", "astream",
                                 "stream-json"])
def test_json_words_and_a_structured_output_call_in_a_plain_request_are_words_and_a_call(
        respx_mock: Any, stream_deltas: Callable[..., list[Any]], how: str) -> None:
    """The mirror of Anthropic's output tool read when not asked for: here the structure is the
    content of a request with ``response_format``, and a request without one reads JSON content
    as plain words (given as they come, no drafts, not marked as a tool's input) and a
    ``structured_output`` function call as a call (the tool runner answers it as unknown),
    whether asked whole, streamed, or answered by a gateway in the other form."""
    pieces = ('{"city": ', '"Oslo"}')
    if how in ("complete-events", "stream", "astream"):
        answer = httpx.Response(200, headers=SSE_HEADERS, content=openai_chat_stream(
            pieces, tool_calls=(UNASKED,)))
    else:
        answer = httpx.Response(200, json=openai_chat_completion("".join(pieces),
                                                                 tool_calls=(UNASKED,)))
    respx_mock.post(OPENAI_URL).mock(return_value=answer)
    provider, options = OpenAIProvider(), CallOptions()
    deltas: list[Any] = []
    if how in ("complete", "complete-events"):
        done = provider.complete(TOOL_PROMPT, "gpt-4o", CRED, options)
    elif how == "acomplete":
        done = asyncio.run(provider.acomplete(TOOL_PROMPT, "gpt-4o", CRED, options))
    else:
        deltas = stream_deltas(provider, TOOL_PROMPT, "gpt-4o", CRED, options,
                               use_async=how == "astream")
        done = delta_completion(deltas, "gpt-4o", provider.name)
    assert (done.text, done.tool_calls, done.from_output_tool) == ('{"city": "Oslo"}',
                                                                   (UNASKED,), False)
    assert not any(d.draft or d.redraft or d.from_output_tool for d in deltas)
    if how in ("stream", "astream"):
        assert [d.text for d in deltas if d.text] == list(pieces)


def _name_in_every_fragment() -> bytes:
    """Two parallel calls from a server that resends each call's whole name (and id) with every
    argument fragment (MiniMax behind NVIDIA NIM, Fireworks, Kimi, some gateways)."""
    base = {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def part(i: int, name: str, arguments: str, finish: str | None = None) -> tuple[None, Any]:
        call = {"index": i, "id": f"c{i}", "type": "function",
                "function": {"name": name, "arguments": arguments}}
        return (None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]},
                                            "finish_reason": finish}]})

    return _sse([part(0, "read_file", ""), part(0, "read_file", '{"path": '),
                 part(1, "read_file", '{"path": "b"}'), part(0, "read_file", '"a"}'),
                 (None, {**base, "choices": [{"index": 0, "delta": {},
                                              "finish_reason": "tool_calls"}]}),
                 (None, "[DONE]")])


@pytest.mark.parametrize("use_async", [False, True])
def test_a_name_resent_whole_with_every_fragment_is_the_name_once(respx_mock: Any,
                                                                  use_async: bool) -> None:
    """Joined as pieces, the resent name became ``read_fileread_file``: an unknown tool."""
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=_name_in_every_fragment(), headers=SSE_HEADERS))
    provider = OpenAIProvider()

    async def collect() -> list[Any]:
        return [d async for d in provider.astream(TOOL_PROMPT, "m", TOOL_CRED, CallOptions())]

    deltas = (asyncio.run(collect()) if use_async
              else list(provider.stream(TOOL_PROMPT, "m", TOOL_CRED, CallOptions())))
    calls = [d.tool_call for d in deltas if d.tool_call is not None]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("c0", "read_file", {"path": "a"}), ("c1", "read_file", {"path": "b"})]


def _object_arguments(streamed: bool) -> httpx.Response:
    """A compatible server that sends a call's arguments as a JSON object, not a JSON string."""
    base = {"id": "x", "created": 1, "model": "gpt-4o"}
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": {"a": 1}}}
    if not streamed:
        return httpx.Response(200, json={**base, "object": "chat.completion", "choices": [{
            "index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]})
    chunk = {**base, "object": "chat.completion.chunk"}
    return httpx.Response(200, headers=SSE_HEADERS, content=_sse([
        (None, {**chunk, "choices": [{"index": 0, "finish_reason": None,
                                      "delta": {"tool_calls": [{"index": 0, **call}]}}]}),
        (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        (None, "[DONE]")]))


@pytest.mark.parametrize("mode", ["complete", "stream", "astream"])
def test_tool_arguments_sent_as_an_object_are_read_as_json_text(respx_mock: Any,
                                                                mode: str) -> None:
    respx_mock.post(OPENAI_URL).mock(side_effect=lambda r: _object_arguments(mode != "complete"))
    provider = OpenAIProvider()

    async def collect() -> list[Any]:
        return [d async for d in provider.astream(TOOL_PROMPT, "gpt-4o", TOOL_CRED, CallOptions())]

    if mode == "complete":
        calls = list(provider.complete(TOOL_PROMPT, "gpt-4o", TOOL_CRED, CallOptions()).tool_calls)
    else:
        deltas = (asyncio.run(collect()) if mode == "astream"
                  else list(provider.stream(TOOL_PROMPT, "gpt-4o", TOOL_CRED, CallOptions())))
        calls = [d.tool_call for d in deltas if d.tool_call is not None]
    assert [(c.name, c.arguments) for c in calls] == [("add", '{"a": 1}')]


def _content_parts(streamed: bool) -> httpx.Response:
    """A compatible server (Mistral's reasoning models) sending ``content`` as a list of parts,
    a thinking part among them, instead of a string."""
    base = {"id": "x", "created": 1, "model": "m"}
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]},
             {"type": "text", "text": "Hel"}]
    if not streamed:
        return httpx.Response(200, json={**base, "object": "chat.completion", "choices": [{
            "index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": [*parts, {"type": "text", "text": "lo"}]}}]})
    chunk = {**base, "object": "chat.completion.chunk"}
    return httpx.Response(200, headers=SSE_HEADERS, content=_sse([
        (None, {**chunk, "choices": [{"index": 0, "finish_reason": None,
                                      "delta": {"role": "assistant", "content": parts}}]}),
        (None, {**chunk, "choices": [{"index": 0, "finish_reason": "stop",
                                      "delta": {"content": "lo"}}]}),
        (None, "[DONE]")]))


@pytest.mark.parametrize("mode", ["complete", "stream", "astream"])
def test_content_sent_as_a_list_of_parts_is_read_as_its_text(respx_mock: Any, mode: str) -> None:
    respx_mock.post(OPENAI_URL).mock(side_effect=lambda r: _content_parts(mode != "complete"))
    provider = OpenAIProvider()

    async def collect() -> list[Any]:
        return [d async for d in provider.astream(TOOL_PROMPT, "m", TOOL_CRED, CallOptions())]

    if mode == "complete":
        text = provider.complete(TOOL_PROMPT, "m", TOOL_CRED, CallOptions()).text
    else:
        deltas = (asyncio.run(collect()) if mode == "astream"
                  else list(provider.stream(TOOL_PROMPT, "m", TOOL_CRED, CallOptions())))
        assert all(isinstance(d.text, str) for d in deltas)
        text = "".join(d.text for d in deltas)
    assert text == "Hello"
