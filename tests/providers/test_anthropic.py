"""Tests of ``hermes_core/providers/anthropic.py``.

Stream usage, cut streams, the blocks of today's API, thinking refused, rendering and error
events. Tools, structured output and paused replies are in ``test_anthropic_tools.py``, events
out of the API's order in ``test_anthropic_stream_order.py``.

Anthropic stream usage: the counts in ``message_delta`` are cumulative and win when present.

The API (and proxies in front of it) may report input and cache tokens only, or finally, in
``message_delta``; the SDK's own accumulator takes them from there. The adapter kept the
``message_start`` numbers (often 0 or provisional), under-reporting input and cache tokens.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
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
from hermes_core.providers.anthropic import AnthropicProvider, render_anthropic
from hermes_core.providers.base import CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_blocks_stream,
    anthropic_message,
    anthropic_stream,
    openai_chat_stream,
)
from hermes_core.testing.builders import _sse
from hermes_core.types import CachePlan, Credential, Message, Prompt, ToolCall, Usage
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


@pytest.mark.parametrize("delta_usage", [{}, {"input_tokens": 7}, {"output_tokens": 0}])
def test_a_message_delta_without_an_output_count_counts_the_output_that_arrived(
        respx_mock, delta_usage: dict[str, int]) -> None:
    """message_start's output count is a placeholder (1): a compatible server whose
    message_delta states no output count (or 0) had it kept as the bill, however long the
    reply. The reply is counted from its text instead, the count marked an estimate; the
    input stays the provider's."""
    from hermes_core.tokens import DEFAULT_ENCODING, count_tokens

    text = "The quick brown fox jumps over the lazy dog, twice over, for the record."
    body = _stream(delta_usage).replace(b'"text": "hi"', json.dumps({"text": text})[1:-1].encode())
    respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, content=body, headers=SSE_HEADERS))
    deltas = list(AnthropicProvider().stream(PROMPT, "claude", CRED, OPTS))
    assert "".join(d.text for d in deltas) == text
    counted = count_tokens(text, DEFAULT_ENCODING)
    assert counted > 10
    assert deltas[-1].usage == Usage(input_tokens=7, output_tokens=counted, reported=False,
                                     counted=True, estimated_tokens=counted)
