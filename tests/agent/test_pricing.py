"""Prices as data: the shipped table, prefix matching, config overrides, unknown models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_core.agent.pricing import Cost, Price, PriceTable, builtin_prices
from hermes_core.config import load_settings
from hermes_core.errors import ConfigError
from hermes_core.testing import (
    SSE_HEADERS,
    anthropic_message,
    anthropic_stream,
    openai_chat_completion,
    openai_chat_stream,
)
from hermes_core.types import Usage
from tests.agent.conftest import MODELS, URLS, make_agent, run_turn


def test_shipped_table_prices_the_default_models() -> None:
    table = builtin_prices()
    for model in ("gpt-4o", "gpt-4o-mini", "claude-sonnet-4-5", "claude-3-5-haiku"):
        p = table[model]
        assert p.output > p.input >= p.cache_read > 0


def test_dated_model_names_match_the_longest_prefix() -> None:
    t = PriceTable()
    assert t.price("claude-sonnet-4-5-20250929") == builtin_prices()["claude-sonnet-4-5"]
    assert t.price("gpt-4o-mini-2024-07-18") == builtin_prices()["gpt-4o-mini"]
    assert t.price("llama3") is None


def test_cost_and_cache_savings() -> None:
    t = PriceTable({"m": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}},
                   base={})
    c = t.cost("m", Usage(input_tokens=1_000_000, output_tokens=100_000,
                          cache_read_tokens=2_000_000, cache_write_tokens=1_000_000))
    assert (c.input, c.output, c.cache_write, c.cache_read) == pytest.approx((3.0, 1.5, 3.75, 0.6))
    # reads saved 2M x (3.0 - 0.3); the writes cost 1M x (3.75 - 3.0) extra
    assert c.saved == pytest.approx(5.4 - 0.75)
    assert c.total == pytest.approx(8.85) and c.known
    assert str(c) == "$8.8500 (cache saved $4.6500)"


def test_unknown_models_are_unpriced_not_free() -> None:
    t = PriceTable(base={})
    assert t.cost("mystery", Usage(input_tokens=5)).unpriced == ("mystery",)
    assert t.cost("mystery", Usage()) == Cost()
    total = Cost(input=1.0) + t.cost("mystery", Usage(output_tokens=1))
    assert total.total == 1.0 and not total.known and "no price for mystery" in str(total)


def test_config_overrides_and_validation() -> None:
    settings = load_settings({"llm": {"prices": {"gpt-4o": {"input": 1, "output": 2}}}}, env={})
    table = PriceTable({m: p.model_dump() for m, p in settings.llm.prices.items()})
    assert table.price("gpt-4o") == Price(1.0, 2.0, 1.0, 1.0)   # cache prices default to input
    with pytest.raises(ConfigError, match=r"llm\.prices\.gpt-4o\.output"):
        load_settings({"llm": {"prices": {"gpt-4o": {"input": 1, "output": -2}}}}, env={})
    with pytest.raises(ConfigError, match="'output' must be a number"):
        PriceTable({"x": {"input": 1}})


def test_offline_replies_cost_nothing(tmp_path: object) -> None:
    from hermes_core.agent.agent import Agent

    agent = Agent.from_config({"home": str(tmp_path), "context_engine": {"enabled": False},
                               "skill_utils": {"enabled": False}}, offline=True)
    reply = agent.chat("hello")
    assert reply.usage.input_tokens > 0          # the offline provider estimates its tokens ...
    assert reply.cost.total == 0 and reply.cost.known    # ... but no model was paid for
    assert agent.stats.cost.total == 0


def test_a_call_whose_usage_was_not_reported_is_unmetered_not_free() -> None:
    """A compatible server that sends no ``usage`` (or a stream cut before its usage chunk) cost
    $0.0000, known: the tokens were billed all the same."""
    t = PriceTable()
    silent = Usage(reported=False)
    c = t.cost("gpt-4o", silent)
    assert c.unmetered == ("gpt-4o",) and not c.known and c.total == 0
    assert "no usage reported for gpt-4o" in str(c)
    turn = t.cost("gpt-4o", Usage(input_tokens=1_000_000)) + c
    assert turn.total == pytest.approx(2.5) and not turn.known
    assert t.cost("mystery", silent).unmetered == ("mystery",)   # unpriced and unmetered alike


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_turn_whose_reply_reported_no_usage_is_priced_on_our_count_and_says_so(
        empty_home: Path, respx_mock: Any, kind: str) -> None:
    """A compatible server (either API) that never sends usage was billed all the same: the
    prompt and the reply are counted (``Usage.counted``) and priced, the cost says it is partly
    estimated."""
    body = (openai_chat_completion("hi") if kind == "openai"
            else anthropic_message("hi", model=MODELS["anthropic"]))
    del body["usage"]
    respx_mock.post(URLS[kind]).mock(return_value=httpx.Response(200, json=body))
    agent = make_agent(empty_home, kind)
    reply = agent.chat("hello")
    assert reply.usage.counted and not reply.usage.reported and reply.usage.input_tokens > 0
    assert reply.cost == agent.prices.cost(MODELS[kind], reply.usage)
    assert reply.cost.total > 0 and not reply.cost.known
    assert reply.cost.counted == (MODELS[kind],) and not reply.cost.unmetered
    assert f"partly estimated: no usage reported for {MODELS[kind]}" in str(reply.cost)


def test_a_counted_usage_is_priced_and_named_apart_from_reported_ones() -> None:
    t = PriceTable()
    ours = Usage(input_tokens=1_000_000, output_tokens=100_000, reported=False, counted=True,
                 estimated_tokens=100_000)
    c = t.cost("gpt-4o", ours) + t.cost("gpt-4o", Usage(input_tokens=1_000_000))
    assert c.total == pytest.approx(2.5 + 1.0 + 2.5) and c.counted == ("gpt-4o",)
    assert not c.known and not c.unmetered


def test_a_reply_is_charged_as_the_model_that_answered_else_as_the_one_asked_for() -> None:
    t = PriceTable({"prod-chat": {"input": 1, "output": 2}})
    assert t.charged_as("gpt-4o-2024-08-06", "my-deployment") == "gpt-4o-2024-08-06"
    assert t.charged_as("gpt-4o-2024-08-06", "prod-chat") == "gpt-4o-2024-08-06"
    assert t.charged_as("llama-3-70b", "prod-chat") == "prod-chat"   # a gateway's own name
    assert t.charged_as("llama-3-70b", "mystery") == "llama-3-70b"   # unpriced either way


DATED = {"openai": "gpt-4o-mini-2024-07-18", "anthropic": "claude-sonnet-4-5-20250929"}


def _reply_as(kind: str, model: str, streamed: bool, text: str = "fine") -> httpx.Response:
    if streamed:
        body = (openai_chat_stream((text,), model=model) if kind == "openai"
                else anthropic_stream((text,), model=model))
        return httpx.Response(200, content=body, headers=SSE_HEADERS)
    return httpx.Response(200, json=openai_chat_completion(text, model=model) if kind == "openai"
                          else anthropic_message(text, model=model))


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_streamed_and_a_whole_reply_name_the_model_that_answered_and_price_alike(
        empty_home: Path, respx_mock: Any, kind: str, mode: str) -> None:
    """A whole reply was named after the response's dated model, a streamed one after the name
    asked for: the same answer read two ways named two models (and, for a deployment name,
    priced once and not the other time)."""
    respx_mock.post(URLS[kind]).mock(return_value=_reply_as(kind, DATED[kind], mode == "stream"))
    agent = make_agent(empty_home, kind)
    reply = run_turn(agent, mode, "hi")
    assert reply.model == DATED[kind]
    assert reply.cost == agent.prices.cost(DATED[kind], reply.usage) and reply.cost.known


def _deployment_agent(home: Path) -> Any:
    from hermes_core.agent.agent import Agent
    from hermes_core.providers.openai import OpenAIProvider

    cfg = {"home": str(home), "llm": {"routing": {"default_model": "prod-chat"}},
           "credentials": {"openai": {"keys": [{"key": "sk-proj-deployTESTkey0123456789ab"}]}},
           "context_engine": {"enabled": False}}
    return Agent(load_settings(cfg, env={}), provider=OpenAIProvider(),
                 loop_options={"sleep": lambda s: None, "audit_path": home / "audit.jsonl"})


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_a_deployment_name_is_priced_as_the_model_that_answered_its_failed_attempts_too(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """Azure names a model by the deployment the user made ("prod-chat"); its answers name the
    model ("gpt-4o-2024-08-06"). A streamed reply and every failed attempt were priced as the
    deployment: "no price for prod-chat", the tokens in no total."""
    cut: Any = (httpx.Response(200, headers=SSE_HEADERS, content=openai_chat_stream(
        ("x",), model="gpt-4o-2024-08-06", fail_after=0)) if mode == "stream"
        else httpx.ReadTimeout("no first byte"))
    respx_mock.post(URLS["openai"]).mock(side_effect=[
        cut, _reply_as("openai", "gpt-4o-2024-08-06", mode == "stream")])
    with _deployment_agent(empty_home) as agent:
        reply = run_turn(agent, mode, "hi")
        prices = agent.prices
    assert reply.model == "gpt-4o-2024-08-06" and reply.wasted.input_tokens > 0
    assert reply.cost.unpriced == () and reply.wasted_cost.total > 0
    assert reply.wasted_cost == prices.cost("gpt-4o-2024-08-06", reply.wasted)
    assert reply.cost.total == pytest.approx(
        prices.cost("gpt-4o-2024-08-06", reply.usage).total + reply.wasted_cost.total)


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_a_deployments_failed_turn_is_priced_as_the_model_it_answered_as_earlier(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """A turn whose only attempt at the deployment timed out (its prompt billed) got no answer
    saying which model it runs: it was "no price for prod-chat", the tokens in no total, though
    the deployment had answered as gpt-4o-2024-08-06 a turn before."""
    from dataclasses import replace

    from hermes_core.errors import HermesError

    respx_mock.post(URLS["openai"]).mock(side_effect=[
        _reply_as("openai", "gpt-4o-2024-08-06", mode == "stream"),
        httpx.ReadTimeout("no first byte")])
    with _deployment_agent(empty_home) as agent:
        agent.loop.policy = replace(agent.loop.policy, retries_per_provider=0)
        first = run_turn(agent, mode, "hi")
        with pytest.raises(HermesError):
            run_turn(agent, mode, "again")
        stats, prices = agent.stats, agent.prices
    assert stats.wasted.input_tokens > 0 and stats.cost.unpriced == ()
    assert stats.cost.total == pytest.approx(
        first.cost.total + prices.cost("gpt-4o-2024-08-06", stats.wasted).total)


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_a_new_agent_on_the_home_prices_a_deployments_first_failed_turn_as_it_answered_before(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """What a deployment answered as was kept per agent: a restarted process (or an Agent made
    per request) priced its first failed attempt "no price for prod-chat" until a reply came."""
    from dataclasses import replace

    from hermes_core.errors import HermesError

    respx_mock.post(URLS["openai"]).mock(side_effect=[
        _reply_as("openai", "gpt-4o-2024-08-06", mode == "stream"),
        httpx.ReadTimeout("no first byte")])
    with _deployment_agent(empty_home) as agent:
        run_turn(agent, mode, "hi")
    with _deployment_agent(empty_home) as restarted:
        restarted.loop.policy = replace(restarted.loop.policy, retries_per_provider=0)
        with pytest.raises(HermesError):
            run_turn(restarted, mode, "again")
        stats, prices = restarted.stats, restarted.prices
    assert stats.wasted.input_tokens > 0 and stats.cost.unpriced == ()
    assert stats.cost == prices.cost("gpt-4o-2024-08-06", stats.wasted)


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_a_deployment_that_never_answered_says_its_failed_attempt_is_unpriced(
        empty_home: Path, respx_mock: Any, mode: str) -> None:
    """Nothing says which model a deployment runs before it first answers: its billed, failed
    attempt is named in the cost as unpriced (price the deployment in ``llm.prices``), not
    priced at zero."""
    from dataclasses import replace

    from hermes_core.errors import HermesError

    respx_mock.post(URLS["openai"]).mock(side_effect=[httpx.ReadTimeout("no first byte")])
    with _deployment_agent(empty_home) as agent:
        agent.loop.policy = replace(agent.loop.policy, retries_per_provider=0)
        with pytest.raises(HermesError):
            run_turn(agent, mode, "hi")
        stats = agent.stats
    assert stats.wasted.input_tokens > 0 and stats.cost.unpriced == ("prod-chat",)
    assert stats.cost.total == 0 and "no price for prod-chat" in str(stats.cost)
