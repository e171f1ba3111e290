"""Tests of ``hermes_core/agent/smart_routing.py``.

The router's choice against the models' context windows: a rule, the classifier's label or the
default never sends a request to a model it does not fit when another configured model holds it.
"""

from __future__ import annotations

import pytest

from hermes_core.agent.smart_routing import Router
from hermes_core.config import parse_yaml
from hermes_core.types import Message, Prompt

WINDOWS = """
llm:
  routing:
    default_model: gpt-4o
    fast_model: tiny-fast
    code_model: gpt-4
    long_context_model: gpt-4.1
    context_windows: {tiny-fast: 2000}
    providers:
      - {name: openai, models: [gpt-4o, tiny-fast, gpt-4, gpt-4.1]}
"""


@pytest.fixture
def router() -> Router:
    return Router.from_settings(parse_yaml(WINDOWS))


def code_request(lines: int) -> str:
    return "```python\n" + "x = compute_value(alpha, beta)  # one line\n" * lines + "```\nwhy slow?"


def test_a_long_code_request_passes_over_a_code_model_it_does_not_fit(router: Router) -> None:
    d = router.select(code_request(1500))          # ~18,000 tokens; gpt-4 holds 8,192
    assert d.features["prompt_tokens"] > 8192
    assert d.model == "gpt-4o"
    assert "code_model gpt-4 (8,192 tokens) is too small" in d.reason


def test_a_short_code_request_still_goes_to_the_code_model(router: Router) -> None:
    assert router.select(code_request(5)).model == "gpt-4"


def test_a_short_turn_behind_a_large_system_prompt_skips_a_small_fast_model(router: Router) -> None:
    prompt = Prompt(system="persona " * 3000, messages=(Message("user", "hi"),))
    d = router.select(prompt)
    assert d.features["token_estimate"] < 500 < 2000 < d.features["prompt_tokens"]
    assert d.model == "gpt-4o" and "fast_model tiny-fast (2,000 tokens) is too small" in d.reason


def test_a_default_model_too_small_gives_way_to_the_long_context_model() -> None:
    r = Router.from_settings(parse_yaml("""
llm:
  routing:
    default_model: gpt-4
    long_context_model: gpt-4.1
    rules: [{condition: "turn_count > 99", model: default_model}]
"""))
    d = r.select("word " * 9000)        # ~12,000 tokens: over gpt-4's 8,192, under 50,000
    assert d.model == "gpt-4.1"
    assert "default_model gpt-4 (8,192 tokens) is too small" in d.reason


def test_a_model_of_unknown_window_is_trusted_to_fit() -> None:
    r = Router.from_settings(parse_yaml(
        "llm: {routing: {default_model: gpt-4o, code_model: house-coder}}"))
    assert r.select(code_request(1500)).model == "house-coder"


def test_a_requested_model_is_sent_whatever_its_window(router: Router) -> None:
    d = router.select(code_request(1500), requested_model="gpt-4")
    assert d.model == "gpt-4" and d.reason == "requested model"


def test_a_requested_model_no_provider_lists_says_what_is_sent_instead() -> None:
    r = Router.from_settings(parse_yaml("""
llm:
  routing:
    providers:
      - {name: openai, priority: 1, models: [gpt-4o]}
      - {name: anthropic, priority: 2, models: [claude-haiku]}
"""))
    d = r.select("hi", requested_model="gpt-9-typo")
    assert d.model == "gpt-9-typo"
    assert d.reason == ("requested model; no provider lists gpt-9-typo: sent as openai/gpt-4o, "
                        "anthropic/claude-haiku")


def test_a_requested_model_a_provider_lists_keeps_the_plain_reason() -> None:
    r = Router.from_settings(parse_yaml(
        "llm: {routing: {providers: [{name: openai, models: [gpt-4o, o3]}]}}"))
    assert r.select("hi", requested_model="o3").reason == "requested model"


def test_a_long_history_is_no_reason_to_leave_a_small_default() -> None:
    """The agent compacts the history to the window of the model chosen: only what it cannot
    compact (system, tools, context, the message) has to fit."""
    r = Router.from_settings(parse_yaml(
        "llm: {routing: {default_model: gpt-4, long_context_model: gpt-4.1}}"))
    history = tuple(Message("user" if i % 2 == 0 else "assistant", "word " * 1500)
                    for i in range(12))
    prompt = Prompt(system="s", messages=(*history, Message("user", "and now?")),
                    tokens={"system": 10, "tools": 0, "history": 24_000, "total": 24_100})
    assert r.select(prompt).model == "gpt-4"
    long_message = Prompt(system="s", messages=(Message("user", "word " * 9000),),
                          tokens={"system": 10, "tools": 0, "history": 0, "total": 12_010})
    assert r.select(long_message).model == "gpt-4.1"
