"""Token counters: OpenAI models exactly in their own encoding, every other model in o200k_base
calibrated on what the provider billed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from hermes_core.agent.prompt.token_count import (
    ONE_TOKEN_ROLES,
    PER_MESSAGE,
    PER_NAME,
    BpeCounter,
    calibration_ratio,
    choose_counter,
    fixed_cost,
    message_cost,
    openai_encoding,
    prompt_cost,
    tools_json,
)
from hermes_core.tokens import count_tokens
from hermes_core.types import Message, Prompt, ToolCall, ToolSpec, Usage


@pytest.mark.parametrize(("model", "encoding"), [
    ("gpt-4o", "o200k_base"), ("gpt-4o-mini-2024-07-18", "o200k_base"), ("gpt-4.1-nano", "o200k_base"),
    ("gpt-5", "o200k_base"), ("gpt-5.1-codex", "o200k_base"), ("o1", "o200k_base"),
    ("o3-mini", "o200k_base"), ("o4-mini", "o200k_base"), ("gpt-oss-120b", "o200k_base"),
    ("chatgpt-4o-latest", "o200k_base"), ("openai/gpt-4o", "o200k_base"),
    ("ft:gpt-4o-mini:acme::abc123", "o200k_base"),
    ("gpt-4", "cl100k_base"), ("gpt-4-turbo", "cl100k_base"), ("gpt-4-0613", "cl100k_base"),
    ("gpt-3.5-turbo", "cl100k_base"), ("GPT-3.5-Turbo-16k", "cl100k_base"),
    ("gpt-40", None), ("o1x", None), ("llama-3.1-70b", None), ("deepseek-chat", None),
    ("claude-sonnet-4-5", None), ("", None),
])
def test_openai_models_are_known_by_their_family(model: str, encoding: str | None) -> None:
    assert openai_encoding(model) == encoding


def test_openai_models_count_exactly_in_their_own_encoding() -> None:
    thai = "สวัสดีครับ วันนี้อากาศดีมาก"
    gpt4o = choose_counter("gpt-4o", "openai", 1.7)          # a ratio never scales an exact count
    assert gpt4o.name == "exact:o200k_base" and gpt4o.count(thai) == 11
    gpt4 = choose_counter("gpt-4", "openai", None)
    assert gpt4.name == "exact:cl100k_base" and gpt4.count(thai) == 26


def test_other_models_count_in_o200k_scaled_by_the_calibration() -> None:
    text = '{"id": 42, "tags": ["a", "b"], "ok": true}'          # 20 o200k tokens
    assert choose_counter("claude-sonnet-4-5", "anthropic", None).name == "o200k_base"
    counter = choose_counter("claude-sonnet-4-5", "anthropic", 1.2)
    assert counter.name == "calibrated:o200k_base" and counter.count(text) == 24
    # an OpenAI-compatible server running another family's model is calibrated too
    assert choose_counter("llama-3.1-70b", "openai", 1.1).name == "calibrated:o200k_base"
    # an OpenAI name behind another kind of provider is not trusted to be OpenAI's model
    assert choose_counter("gpt-4o", "anthropic", None).name == "o200k_base"


def test_calibration_is_billed_prompt_tokens_over_the_o200k_count():
    prompt = Prompt(system="s" * 400, messages=(Message("user", "hello there " * 20),))
    counted = prompt_cost(prompt, BpeCounter())
    billed = Usage(input_tokens=counted, cache_read_tokens=counted // 2)   # both count
    ratio = calibration_ratio(prompt, billed)
    assert ratio == pytest.approx(1.5, rel=0.01)
    counter = BpeCounter(ratio=ratio)
    assert counter.count("x" * 400) == round(count_tokens("x" * 400) * ratio)
    assert counter.unscaled == BpeCounter()
    assert calibration_ratio(prompt, Usage()) is None                 # nothing billed: no change
    assert calibration_ratio(prompt, Usage(input_tokens=counted * 50)) is None   # implausible


def test_a_message_costs_its_text_its_tool_calls_and_the_framing():
    call = ToolCall("c1", "read_file", json.dumps({"path": "src/app.py"}))
    m = Message("assistant", "Let me look.", tool_calls=(call,))
    counter = BpeCounter()
    assert message_cost(m, counter) == (count_tokens("Let me look.") + count_tokens("read_file")
                                        + count_tokens(call.arguments)
                                        + PER_MESSAGE + count_tokens("assistant"))
    answer = Message("tool", "42", tool_call_id="c1", name="calc")
    assert message_cost(answer, counter) == (PER_MESSAGE + count_tokens("tool") + count_tokens("42")
                                             + count_tokens("c1") + PER_NAME + count_tokens("calc"))


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_each_chat_role_is_one_token_as_the_framing_assumes(encoding: str) -> None:
    assert {r: count_tokens(r, encoding) for r in ONE_TOKEN_ROLES} == dict.fromkeys(ONE_TOKEN_ROLES, 1)


def test_the_fixed_cost_is_the_request_without_its_messages():
    tool = ToolSpec("skill_view", "Load a skill", {"type": "object", "properties": {}})
    prompt = Prompt(system="s" * 400, context="today is Monday", tools=(tool,),
                    messages=(Message("user", "hi"), Message("assistant", "hello, how can I help")))
    counter = BpeCounter(ratio=1.3)
    assert fixed_cost(prompt, counter) + sum(message_cost(m, counter) for m in prompt.messages) \
        == prompt_cost(prompt, counter)
    assert fixed_cost(prompt, counter) == prompt_cost(
        Prompt(system=prompt.system, context=prompt.context, tools=prompt.tools, messages=()), counter)


def _tools(n: int) -> tuple[ToolSpec, ...]:
    return tuple(ToolSpec(f"tool_{n}_{i}", f"Tool {i} of set {n}",
                          {"type": "object", "properties": {"q": {"type": "string"}}})
                 for i in range(3))


def test_two_tool_sets_used_in_turn_keep_their_json_instead_of_evicting_each_other():
    """One module-wide slot held the last tools' JSON: two agents with different tools in one
    process dumped their schemas again on every count."""
    a, b = _tools(1), _tools(2)
    first_a, first_b = tools_json(a), tools_json(b)
    assert json.loads(first_a)[0]["name"] == "tool_1_0"
    assert json.loads(first_b)[0]["name"] == "tool_2_0"
    assert tools_json(a) is first_a and tools_json(b) is first_b


def test_threads_counting_different_tools_each_get_their_own_json():
    import threading
    sets = [_tools(n) for n in range(8)]
    expected = [json.loads(tools_json(s)) for s in sets]
    held = [tools_json(s) for s in sets]
    wrong: list[int] = []
    recomputed: list[int] = []
    start = threading.Barrier(len(sets))

    def worker(i: int) -> None:
        start.wait()
        for _ in range(300):
            text = tools_json(sets[i])
            if json.loads(text) != expected[i]:
                wrong.append(i)
            if text is not held[i]:
                recomputed.append(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(sets))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == [] and recomputed == []


def test_equal_tools_built_anew_share_the_json_and_a_changed_schema_does_not():
    a = _tools(3)
    again = tuple(ToolSpec(t.name, t.description, dict(t.parameters)) for t in a)
    assert tools_json(again) == tools_json(a)
    changed = (ToolSpec(a[0].name, a[0].description, {"type": "object", "properties": {}}), *a[1:])
    assert json.loads(tools_json(changed))[0]["parameters"] == {"type": "object", "properties": {}}


def test_a_child_forked_while_a_thread_was_keeping_a_tools_text_counts_tools(
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    from hermes_core.agent.prompt import token_count

    tools = [ToolSpec("forked_tool", "a tool first counted in a forked child")]
    with held_by_a_thread(token_count._tools_text.lock):
        assert in_forked_child(lambda: '"forked_tool"' in token_count.tools_json(tools)) is True
