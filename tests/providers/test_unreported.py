"""Tests of ``hermes_core/providers/unreported.py``: counting what a chat request was billed when
its response never said."""

from __future__ import annotations

import json

from hermes_core.providers.unreported import counted_usage, messages_usage, prompt_tokens
from hermes_core.tokens import count_tokens


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
    from hermes_core.providers.base import CallOptions
    from hermes_core.providers.openai import render_openai
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
