"""Provider payloads against the real APIs' structural rules, for histories an Agent produces."""

from __future__ import annotations

from typing import Any

from hermes_core.providers.anthropic import render_anthropic
from hermes_core.providers.base import CallOptions
from hermes_core.types import CachePlan, Message, Prompt, ToolCall

OPTS = CallOptions(max_tokens=64)


def _text_blocks(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in payload["messages"] for b in m["content"] if b["type"] == "text"]


def _assert_anthropic_rules(payload: dict[str, Any]) -> None:
    roles = [m["role"] for m in payload["messages"]]
    assert roles[0] == "user"
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles
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
