"""Provider payloads against the real APIs' structural rules, for histories an Agent produces."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import copy_example_home

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings
from hermes_core.providers.anthropic import render_anthropic
from hermes_core.providers.base import CallOptions
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    SSE_HEADERS,
    anthropic_stream,
    openai_chat_stream,
)
from hermes_core.types import CachePlan, Message, Prompt, ToolCall

OPTS = CallOptions(max_tokens=64)


def _text_blocks(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in payload["messages"] for b in m["content"] if b["type"] == "text"]


def _assert_anthropic_rules(payload: dict[str, Any]) -> None:
    roles = [m["role"] for m in payload["messages"]]
    assert roles[0] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    for block in _text_blocks(payload):
        assert block["text"].strip(), payload       # "text content blocks must be non-empty"
    for m in payload["messages"]:
        assert m["content"], payload


def test_anthropic_empty_assistant_reply_in_history_sends_no_empty_text_block():
    # A model reply can be empty (end_turn with no content, or only tool calls in the last
    # round); the Agent keeps it in the history, and the next turn must still be accepted.
    history = (Message("user", "first"), Message("assistant", ""), Message("user", "second"))
    plan = CachePlan(system=True, message_indices=(1,))
    payload = render_anthropic(Prompt("sys", history, context="ctx", cache=plan), "claude", OPTS)
    _assert_anthropic_rules(payload)
    texts = [b["text"] for b in _text_blocks(payload)]
    assert texts == ["first", "ctx", "second"]


def test_anthropic_whitespace_only_text_is_dropped_but_tool_use_kept():
    call = ToolCall("toolu_1", "skill_view", '{"name": "git"}')
    history = (Message("user", "load git"), Message("assistant", "  \n", tool_calls=(call,)),
               Message("tool", "# Skill: git", tool_call_id="toolu_1"),
               Message("assistant", ""), Message("user", "thanks"))
    payload = render_anthropic(Prompt("sys", history), "claude", OPTS)
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
                               "claude", OPTS)
    _assert_anthropic_rules(payload)
    marked = [b for m in payload["messages"] for b in m["content"] if "cache_control" in b]
    assert marked and all(b.get("text", "x").strip() for b in marked)


# --------------------------------------------------------------------------- through the Agent

SECRET = "sk-test-SECRET-payload-0123456789"


def _assert_openai_rules(payload: dict[str, Any]) -> None:
    pending: set[str] = set()
    for m in payload["messages"]:
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending, payload   # answers a call just made
            pending.discard(m["tool_call_id"])
            continue
        assert not pending, payload                          # every call answered first
        if m["role"] == "assistant" and m.get("tool_calls"):
            pending = {c["id"] for c in m["tool_calls"]}
            assert all(c["id"] for c in m["tool_calls"])


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_streamed_tool_call_through_the_agent_sends_valid_follow_ups(kind, tmp_path: Path,
                                                                       respx_mock):
    home = tmp_path / "home"
    copy_example_home(home)
    model = "gpt-4o-mini" if kind == "openai" else "claude-3-5-sonnet-20241022"
    cfg = {"home": str(home),
           "llm": {"routing": {"default_model": model, "providers": [{"name": kind}]}},
           "credentials": {kind: {"keys": [{"key": SECRET}]}}}
    agent = Agent(load_settings(cfg, env={}), loop_options={"sleep": lambda s: None,
                                                            "audit_path": False})
    call = ToolCall("call_7", "skill_view", '{"name": "git-rebase-conflicts"}')
    url, build = ((OPENAI_URL, openai_chat_stream) if kind == "openai"
                  else (ANTHROPIC_URL, anthropic_stream))
    route = respx_mock.post(url).mock(side_effect=[
        httpx.Response(200, content=build((), model=model, tool_calls=[call]), headers=SSE_HEADERS),
        httpx.Response(200, content=build(["Abort, ", "then rebase."], model=model),
                       headers=SSE_HEADERS),
        httpx.Response(200, content=build(["Sure."], model=model), headers=SSE_HEADERS)])
    try:
        stream = agent.stream("git rebase stopped with a conflict")
        assert "".join(stream) == "Abort, then rebase."
        assert stream.reply is not None and stream.reply.provider == kind
        assert "".join(agent.stream("thanks")) == "Sure."
    finally:
        agent.close()
    bodies = [json.loads(c.request.content) for c in route.calls]
    assert len(bodies) == 3
    check = _assert_openai_rules if kind == "openai" else _assert_anthropic_rules
    for body in bodies:
        check(body)
    follow_up = json.dumps(bodies[1])
    assert "call_7" in follow_up and "# Skill: git-rebase-conflicts" in follow_up
    assert "call_7" in json.dumps(bodies[2])      # the history keeps the call and its answer
    assert SECRET not in json.dumps(bodies)


# --------------------------------------------------------------------------- OpenAI-compatible streams

def _chunks_sse(tool_call_deltas: list[list[dict[str, Any]]]) -> bytes:
    base = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunks = [{**base, "choices": [{"index": 0, "finish_reason": None,
                                    "delta": {"role": "assistant", "content": None,
                                              "tool_calls": d}}]} for d in tool_call_deltas]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


@pytest.mark.parametrize("deltas", [
    # Ollama: every call of a parallel set arrives whole, all with index 0
    [[{"index": 0, "id": "call_a", "type": "function",
       "function": {"name": "skill_view", "arguments": '{"name": "git"}'}}],
     [{"index": 0, "id": "call_b", "type": "function",
       "function": {"name": "skill_view", "arguments": '{"name": "docker"}'}}]],
    # older compatible servers: no index at all
    [[{"id": "call_a", "type": "function",
       "function": {"name": "skill_view", "arguments": '{"name": '}}],
     [{"function": {"arguments": '"git"}'}}],
     [{"id": "call_b", "type": "function",
       "function": {"name": "skill_view", "arguments": '{"name": "docker"}'}}]],
])
def test_openai_compatible_stream_keeps_parallel_tool_calls_apart(deltas, respx_mock):
    from hermes_core.providers.openai import OpenAIProvider

    respx_mock.post("http://127.0.0.1:11434/v1/chat/completions").mock(
        return_value=httpx.Response(200, content=_chunks_sse(deltas), headers=SSE_HEADERS))
    provider = OpenAIProvider("ollama", "http://127.0.0.1:11434/v1")
    out = list(provider.stream(Prompt("s", (Message("user", "hi"),)), "m", None, OPTS))
    calls = [d.tool_call for d in out if d.tool_call is not None]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("call_a", "skill_view", {"name": "git"}), ("call_b", "skill_view", {"name": "docker"})]


def test_openai_compatible_stream_without_call_ids_gets_distinct_ids(respx_mock):
    from hermes_core.providers.openai import OpenAIProvider

    deltas = [[{"index": 0, "type": "function",
                "function": {"name": "skill_view", "arguments": '{"name": "git"}'}}],
              [{"index": 1, "type": "function",
                "function": {"name": "skill_view", "arguments": '{"name": "docker"}'}}]]
    respx_mock.post("http://127.0.0.1:8000/v1/chat/completions").mock(
        return_value=httpx.Response(200, content=_chunks_sse(deltas), headers=SSE_HEADERS))
    provider = OpenAIProvider("vllm", "http://127.0.0.1:8000/v1")
    out = list(provider.stream(Prompt("s", (Message("user", "hi"),)), "m", None, OPTS))
    ids = [d.tool_call.id for d in out if d.tool_call is not None]
    assert len(ids) == 2 and all(ids) and len(set(ids)) == 2   # tool results can answer each


def test_openai_compatible_completion_without_call_ids_gets_distinct_ids(respx_mock):
    from hermes_core.providers.openai import OpenAIProvider
    from hermes_core.testing import openai_chat_completion

    body = openai_chat_completion("", tool_calls=[ToolCall("x", "skill_view", '{"name": "git"}'),
                                                  ToolCall("y", "skill_view", '{"name": "a"}')])
    for call in body["choices"][0]["message"]["tool_calls"]:
        del call["id"]
    respx_mock.post("http://127.0.0.1:8000/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=body))
    done = OpenAIProvider("vllm", "http://127.0.0.1:8000/v1").complete(
        Prompt("s", (Message("user", "hi"),)), "m", None, OPTS)
    ids = [c.id for c in done.tool_calls]
    assert len(ids) == 2 and all(isinstance(i, str) and i for i in ids) and len(set(ids)) == 2


def test_anthropic_empty_system_prompt_is_left_out():
    payload = render_anthropic(Prompt("", (Message("user", "hi"),), cache=CachePlan(system=True)),
                               "claude", OPTS)
    assert "system" not in payload
    _assert_anthropic_rules(payload)
