"""Provider payloads against the real APIs' structural rules, for histories an Agent produces."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

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

EXAMPLE_HOME = Path(__file__).parent.parent / "examples" / "home"
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
    shutil.copytree(EXAMPLE_HOME, home, ignore=shutil.ignore_patterns("sessions.db*", "cache"))
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
