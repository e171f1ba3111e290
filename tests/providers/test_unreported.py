"""Tests of ``hermes_core/providers/unreported.py``: counting what a chat request was billed when
its response never said."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hermes_core.errors import (
    IncompleteResponse,
    ServerError,
)
from hermes_core.providers.anthropic import AnthropicProvider
from hermes_core.providers.base import CallOptions
from hermes_core.providers.openai import OpenAIProvider, render_openai
from hermes_core.providers.unreported import counted_usage, messages_usage, prompt_tokens
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_message,
    openai_chat_completion,
    openai_chat_stream,
)
from hermes_core.tokens import count_tokens
from hermes_core.types import (
    Message,
    Prompt,
    ToolCall,
    ToolSpec,
)
from tests.providers.conftest import (
    ANTHROPIC_CRED,
    ANTHROPIC_OPTS,
    ANTHROPIC_PROMPT,
    CRED,
    OPENAI_OPTS,
    OPENAI_PROMPT,
    anthropic_last,
    cut_openai_stream,
    unmetered_anthropic_stream,
)


def _plain(messages: list[tuple[str, str]], encoding: str) -> int:
    return sum(3 + count_tokens(r, encoding) + count_tokens(t, encoding) for r, t in messages) + 3


PLAIN = {"model": "gpt-4o", "messages": [{"role": "system", "content": "You are terse."},
                                         {"role": "user", "content": "Wie spät ist es?"}]}


def test_plain_messages_are_counted_exactly_in_the_models_own_encoding() -> None:
    expected = [("system", "You are terse."), ("user", "Wie spät ist es?")]
    assert prompt_tokens(PLAIN, "o200k_base") == (_plain(expected, "o200k_base"), True)
    gpt4 = counted_usage({**PLAIN, "model": "gpt-4"}, "gpt-4", ["Es ist neun."])
    assert gpt4.input_tokens == _plain(expected, "cl100k_base")
    assert gpt4.output_tokens == count_tokens("Es ist neun.", "cl100k_base")
    assert gpt4.estimated_tokens == gpt4.output_tokens and gpt4.counted and not gpt4.reported


def test_a_name_and_text_parts_are_framed_as_the_cookbook_says() -> None:
    payload = {"messages": [{"role": "user", "name": "ana", "content": [
        {"type": "text", "text": "context. "}, {"type": "text", "text": "question"}]}]}
    n, exact = prompt_tokens(payload, "o200k_base")
    assert exact and n == _plain([("user", "context. question")], "o200k_base") + 1 + count_tokens("ana")


def test_tools_calls_and_answers_make_the_prompt_an_estimate() -> None:
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": 1}'}}]}
    answer = {"role": "tool", "tool_call_id": "c1", "content": "found"}
    plain_n, _ = prompt_tokens(PLAIN, "o200k_base")
    for payload in ({**PLAIN, "messages": [*PLAIN["messages"], call]},
                    {**PLAIN, "messages": [*PLAIN["messages"], answer]},
                    {**PLAIN, "tools": [{"type": "function", "function": {"name": "lookup"}}]},
                    {**PLAIN, "messages": [{"role": "user", "content": [
                        {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}]}]}):
        n, exact = prompt_tokens(payload, "o200k_base")
        assert not exact and n > 0
    n, _ = prompt_tokens({**PLAIN, "messages": [*PLAIN["messages"], call]}, "o200k_base")
    assert n > plain_n + count_tokens('{"q": 1}')


def test_a_model_that_is_not_openais_is_counted_in_o200k_and_marked_an_estimate_throughout() -> None:
    usage = counted_usage({**PLAIN, "model": "llama-3.1-70b"}, "llama-3.1-70b", ["nine", ""])
    assert usage.input_tokens == prompt_tokens(PLAIN, "o200k_base")[0]
    assert usage.output_tokens == count_tokens("nine")
    assert usage.estimated_tokens == usage.input_tokens + usage.output_tokens


def test_a_messages_payload_counts_every_text_it_carries_and_no_signature() -> None:
    """System blocks, text, thinking, a tool's name and input, a tool result's content and the
    tools all reach the model as text; a thinking block's signature does not."""
    tools = [{"name": "weather", "input_schema": {"type": "object"}}]
    payload = {"system": [{"type": "text", "text": "Be terse."}], "tools": tools, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Oslo?"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "look it up", "signature": "x" * 400},
            {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Oslo"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": [{"type": "text", "text": "sunny"}]}]}]}
    texts = ["Be terse.", "Oslo?", "look it up", "weather", '{"city": "Oslo"}', "sunny",
             json.dumps(tools), "user", "assistant", "user"]
    usage = messages_usage(payload, ["It is sunny."])
    assert usage.input_tokens == 3 + 3 * 3 + sum(count_tokens(t, "o200k_base") for t in texts)
    assert usage.output_tokens == count_tokens("It is sunny.", "o200k_base")
    assert usage.counted and not usage.reported
    assert usage.estimated_tokens == usage.input_tokens + usage.output_tokens


def test_a_bill_counted_here_frames_messages_as_the_budgets_do() -> None:
    """The chat framing was written twice: 4 a message in the budgets, the cookbook's 3 + role
    here; the system message, a name, a tool call's framing, a tool answer's call id and the
    reply's priming were counted by one and not the other. One definition serves both."""
    from hermes_core.agent.prompt.token_count import BpeCounter, prompt_cost
    from hermes_core.types import Message, Prompt, ToolCall

    call = ToolCall("call_7", "lookup", '{"q": "Öffnungszeiten"}')
    # the context leads the last message as a text part, counted joined to it here and apart in
    # the budgets: a line break between them merges with neither
    prompt = Prompt(system="You are terse.", context="Current date: 2026-12-05\n", messages=(
        Message("user", "Wann öffnet das Museum?", name="ana"),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", '{"opens": "10:00"}', tool_call_id="call_7"),
        Message("assistant", "Um zehn."), Message("user", "Und sonntags?")))
    for model, encoding in (("gpt-4o", "o200k_base"), ("gpt-4", "cl100k_base")):
        payload = render_openai(prompt, model, CallOptions())
        counted, _ = prompt_tokens(payload, encoding)
        assert counted == prompt_cost(prompt, BpeCounter(encoding, exact=True))


def _without_usage_stream() -> bytes:
    """A stream whose usage chunk never came (a server ignoring ``include_usage``, or a connection
    closed after the finish reason)."""
    events = [e for e in openai_chat_stream(("o", "k")).split(b"\n\n") if e]
    return b"\n\n".join(e for e in events if b'"usage"' not in e) + b"\n\n"


def _cookbook_count(messages: list[tuple[str, str]], encoding: str = "o200k_base") -> int:
    """What OpenAI bills for plain chat messages: each message's role and content in the model's
    encoding, 3 tokens of framing a message, 3 priming the reply."""
    return sum(3 + count_tokens(role, encoding) + count_tokens(text, encoding)
               for role, text in messages) + 3


CUTS = {
    # a proxy closing the connection cleanly before the finish reason and the usage chunk
    "clean cut": lambda: cut_openai_stream(("Hello", " world, it is")),
    # an error event mid-stream (the server failing after two pieces)
    "error event": lambda: openai_chat_stream(("Hello", " world, it is", " late"), fail_after=2),
}


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("cut", sorted(CUTS))
def test_a_stream_cut_before_its_usage_chunk_says_what_it_was_billed(
        respx_mock: Any, cut: str, use_async: bool) -> None:
    """OpenAI sends usage only in a stream's last chunk: a stream cut before it carried no usage,
    though the prompt and what was generated were billed. The prompt is counted exactly (the
    model's encoding, the chat framing); the output from what arrived, marked as an estimate."""
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, content=CUTS[cut](), headers=SSE_HEADERS))
    provider = OpenAIProvider()
    with pytest.raises(ServerError) as ei:
        if use_async:
            async def read() -> None:
                async for _ in provider.astream(OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS):
                    pass
            asyncio.run(read())
        else:
            list(provider.stream(OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS))
    usage = ei.value.usage
    assert usage is not None and not usage.reported
    assert usage.input_tokens == _cookbook_count([("system", "s"), ("user", "hi")])
    assert usage.output_tokens == count_tokens("Hello world, it is")
    assert usage.estimated_tokens == usage.output_tokens   # the prompt's count is exact


def test_a_cut_stream_that_called_tools_or_has_tools_is_an_estimate_throughout(
        respx_mock: Any) -> None:
    """Tool definitions and calls are framed in ways OpenAI does not document: their count is
    marked as an estimate too, the call fragments that arrived counted as output."""
    call = ToolCall("call_1", "lookup", '{"city": "Oslo"}')
    events = [e for e in openai_chat_stream((), tool_calls=(call,)).split(b"\n\n") if e]
    body = b"\n\n".join(e for e in events if b"finish_reason\": \"tool_calls" not in e
                         and b'"usage"' not in e and b"[DONE]" not in e) + b"\n\n"
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=body,
                                                                 headers=SSE_HEADERS))
    prompt = Prompt(system="s", messages=(Message("user", "weather?"),),
                    tools=(ToolSpec("lookup", "Look a city up."),))
    with pytest.raises(IncompleteResponse) as ei:
        list(OpenAIProvider().stream(prompt, "gpt-4o", CRED, OPENAI_OPTS))
    usage = ei.value.usage
    assert usage is not None
    assert usage.input_tokens > _cookbook_count([("system", "s"), ("user", "weather?")])
    assert usage.output_tokens == count_tokens("lookup") + count_tokens('{"city": "Oslo"}')
    assert usage.estimated_tokens == usage.input_tokens + usage.output_tokens


EMPTY_200 = {
    # a proxy's empty answer: the 200 and its label, then the connection closed
    "no byte": (b"", SSE_HEADERS),
    "only its end": (b"data: [DONE]\n\n", SSE_HEADERS),
    "unlabelled": (b"", {}),
}


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("body", sorted(EMPTY_200))
def test_a_200_stream_that_ends_without_a_chunk_counts_its_prompt_as_possibly_billed(
        respx_mock: Any, body: str, use_async: bool,
        stream_deltas: Callable[..., list[Any]]) -> None:
    """A 200 stream that brought no chunk (a proxy's empty answer) raised with no bill, though
    the request reached the server and was not refused: whether upstream billed it no one can
    say, as for a stream timed out before its first byte, so its prompt is counted the same way
    (our count, no output)."""
    content, headers = EMPTY_200[body]
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(200, content=content,
                                                                 headers=headers))
    with pytest.raises(ServerError, match="without a single chunk") as ei:
        stream_deltas(OpenAIProvider(), OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS, use_async=use_async)
    usage = ei.value.usage
    assert usage is not None and usage.counted and not usage.reported
    assert usage.input_tokens == _cookbook_count([("system", "s"), ("user", "hi")])
    assert usage.output_tokens == 0 and usage.estimated_tokens == 0


@pytest.mark.parametrize("how", ["complete", "stream"])
def test_a_reply_without_usage_says_its_usage_was_not_reported(respx_mock: Any, how: str) -> None:
    body = openai_chat_completion("ok")
    del body["usage"], body["id"]   # a compatible server's minimal body
    respx_mock.post(OPENAI_URL).mock(return_value=(
        httpx.Response(200, json=body) if how == "complete" else
        httpx.Response(200, content=_without_usage_stream(), headers=SSE_HEADERS)))
    provider = OpenAIProvider()
    if how == "complete":
        done = provider.complete(OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS)
        usage = done.usage
        assert done.text == "ok" and done.request_id is None
    else:
        usage = list(provider.stream(OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS))[-1].usage
    assert usage is not None and not usage.reported
    # a compatible server that never sends usage is still billed: counted, marked as our count
    assert usage.input_tokens == _cookbook_count([("system", "s"), ("user", "hi")])
    assert usage.output_tokens == count_tokens("ok")
    assert usage.estimated_tokens == usage.output_tokens


@pytest.mark.parametrize("use_async", [False, True])
def test_a_streamed_request_answered_whole_without_usage_is_billed_on_our_count(
        respx_mock: Any, use_async: bool, stream_deltas: Callable[..., list[Any]]) -> None:
    """A gateway that ignores ``stream: true`` and never reports usage: the whole answer it sent
    in place of the stream is counted like any reply without usage, not left unpriced."""
    body = openai_chat_completion("ok")
    del body["usage"], body["id"]
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(200, json=body))
    deltas = stream_deltas(OpenAIProvider(), OPENAI_PROMPT, "gpt-4o", CRED, OPENAI_OPTS, use_async=use_async)
    usage = deltas[-1].usage
    assert "".join(d.text for d in deltas) == "ok"
    assert usage is not None and not usage.reported
    assert usage.input_tokens == _cookbook_count([("system", "s"), ("user", "hi")])
    assert usage.output_tokens == count_tokens("ok") == usage.estimated_tokens


def test_a_stream_without_usage_says_its_usage_was_not_reported(respx_mock: Any) -> None:
    """A compatible server's message_start with no ``usage`` and a message_delta with none."""
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=unmetered_anthropic_stream(("o", "k")), headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(ANTHROPIC_PROMPT, "claude-sonnet-4-5", ANTHROPIC_CRED,
                                             ANTHROPIC_OPTS))
    assert "".join(d.text for d in deltas) == "ok"
    last = deltas[-1].usage
    assert last is not None and not last.reported


@pytest.mark.parametrize("how", ["complete", "acomplete", "stream", "astream"])
def test_a_reply_without_usage_is_billed_on_our_count_marked_an_estimate(
        respx_mock: Any, how: str, stream_deltas: Callable[..., list[Any]]) -> None:
    """An Anthropic-compatible server that never sends usage was billed all the same: the
    prompt and the reply are counted here, as the OpenAI adapter counts them, and every token
    is an estimate (Anthropic's tokenizer is not public)."""
    prompt = Prompt(system="You are terse and exact. " * 20,
                    messages=(Message("user", "What is the capital of Norway? " * 10),))
    body = anthropic_message("Oslo is the capital of Norway.", model="claude-sonnet-4-5")
    del body["usage"]
    respx_mock.post(ANTHROPIC_URL).mock(return_value=(
        httpx.Response(200, json=body) if how.endswith("complete") else
        httpx.Response(200, content=unmetered_anthropic_stream(("Oslo is the capital", " of Norway.")),
                       headers=SSE_HEADERS)))
    usage = anthropic_last(AnthropicProvider(), prompt, how, stream_deltas).usage
    assert usage is not None and usage.counted and not usage.reported
    assert usage.input_tokens > 100 and 5 <= usage.output_tokens <= 10
    assert usage.estimated_tokens == usage.input_tokens + usage.output_tokens


ANTHROPIC_EMPTY_200 = {
    # a proxy's empty answer: the 200 and its label, then the connection closed
    "no byte": (b"", SSE_HEADERS),
    "only pings": (b"event: ping\ndata: {\"type\": \"ping\"}\n\n", SSE_HEADERS),
    "unlabelled": (b"", {}),
}


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("body", sorted(ANTHROPIC_EMPTY_200))
def test_a_200_stream_that_ends_without_a_message_counts_its_prompt_as_possibly_billed(
        respx_mock: Any, body: str, use_async: bool,
        stream_deltas: Callable[..., list[Any]]) -> None:
    """A 200 stream that never started a message (a proxy's empty answer) raised with no bill,
    though the request reached the server and was not refused: its prompt is counted as for a
    stream timed out before its first byte (our estimate, no output)."""
    content, headers = ANTHROPIC_EMPTY_200[body]
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(200, content=content,
                                                                    headers=headers))
    with pytest.raises(ServerError, match="without a message_start") as caught:
        stream_deltas(AnthropicProvider(), ANTHROPIC_PROMPT, "claude-sonnet-4-5", ANTHROPIC_CRED,
                      ANTHROPIC_OPTS, use_async=use_async)
    usage = caught.value.usage
    assert usage is not None and usage.counted and usage.input_tokens > 0
    assert usage.output_tokens == 0 and usage.estimated_tokens == usage.input_tokens


@pytest.mark.parametrize("use_async", [False, True])
def test_a_stream_without_usage_cut_mid_answer_says_what_it_was_billed_on_our_count(
        respx_mock: Any, use_async: bool, stream_deltas: Callable[..., list[Any]]) -> None:
    body = unmetered_anthropic_stream(("Oslo is the capital", " of Norway."))
    cut = body[:body.index(b"event: content_block_stop")]
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=cut, headers=SSE_HEADERS))
    with pytest.raises(IncompleteResponse) as caught:
        stream_deltas(AnthropicProvider(), ANTHROPIC_PROMPT, "claude-sonnet-4-5", ANTHROPIC_CRED,
                      ANTHROPIC_OPTS, use_async=use_async)
    usage = caught.value.usage
    assert usage is not None and usage.counted and usage.input_tokens > 0
    assert usage.output_tokens >= 5 and usage.estimated_tokens == usage.input_tokens + usage.output_tokens
